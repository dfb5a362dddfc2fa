// The PmemCSIDeployment status as a pure function of the previous status and what one reconcile
// found. Conditions are upserted by type (api's upsertCondition: lastTransitionTime moves only
// when the status flips), driverComponents come from the live workloads, and the phase is
// Running only when both workloads report all their pods ready and updated (the Go operator said
// Running as soon as it had written objects). Events are derived from the transition. A reconcile
// refused for a conflict (ownership.ts) sets Conflict True and phase Failed; the first later one
// that is not refused turns Conflict False (reason Resolved).
import type { V1DaemonSet, V1Deployment } from '@kubernetes/client-node';
import {
  formatTimestamp,
  getCondition,
  upsertCondition,
  type ConditionType,
  type ConditionUpdate,
  type DeploymentCondition,
  type DriverComponentStatus,
  type PmemCSIDeploymentStatus,
  type ValidationProblem,
} from '@pmem-csi/api';
import type { OwnerDeployment } from './objects/context.js';
import { CONFLICT_REASONS, CONFLICT_RESOLVED_MESSAGE, type ConflictFinding } from './ownership.js';

export const DEPLOY_REASONS = {
  applied: 'AllObjectsApplied',
  applyFailed: 'ApplyFailed',
  invalidSpec: 'InvalidSpec',
  certificatesInvalid: 'CertificatesInvalid',
  deviceModeRefused: 'DeviceModeChangeRefused',
  conflict: 'Conflict',
} as const;

/** What one reconcile ended with. */
export type ReconcileOutcome =
  | { readonly kind: 'invalid-spec'; readonly problems: readonly ValidationProblem[] }
  | { readonly kind: 'certs-invalid'; readonly reason: string; readonly conditions: readonly ConditionUpdate[] }
  | { readonly kind: 'apply-failed'; readonly error: string; readonly conditions: readonly ConditionUpdate[] }
  /** Refused before the first write: the object names or an object belong to someone else. */
  | ({ readonly kind: 'conflict' } & ConflictFinding)
  | {
      readonly kind: 'applied';
      /** Certificate conditions (CertsReady, and CertsVerified for user certificates). */
      readonly conditions: readonly ConditionUpdate[];
      /** Set when a device-mode change was refused (everything else was applied). */
      readonly refusal?: string;
      readonly deployment: V1Deployment | undefined;
      readonly daemonSet: V1DaemonSet | undefined;
    };

export interface StatusEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: 'NewDeployment' | 'Running' | 'Failed' | 'Conflict' | 'ConflictResolved';
  readonly message: string;
}

const MAX_PROBLEMS_SHOWN = 5;

function componentStatus(component: DriverComponentStatus['component'], counts: PodCounts, now: string): DriverComponentStatus {
  const what = component === 'Node' ? 'node driver pods' : 'controller pods';
  let reason = `${counts.ready} of ${counts.desired} ${what} ready`;
  if (counts.updated < counts.desired) reason += `, ${counts.updated} updated`;
  if (!counts.current) reason = `waiting for the ${component === 'Node' ? 'DaemonSet' : 'Deployment'} controller to observe the latest spec`;
  else if (counts.desired === 0) reason = component === 'Node' ? 'no node driver pods: no node matches the node selector' : 'no controller pods wanted';
  const ready = counts.current && counts.desired > 0 && counts.ready >= counts.desired && counts.updated >= counts.desired;
  return { component, status: ready ? 'Ready' : 'NotReady', reason, desired: counts.desired, ready: counts.ready, lastUpdated: now };
}

interface PodCounts {
  readonly desired: number;
  readonly ready: number;
  readonly updated: number;
  /** The workload controller has observed the latest generation. */
  readonly current: boolean;
}

function deploymentCounts(deployment: V1Deployment | undefined): PodCounts {
  const status = deployment?.status ?? {};
  const observed = status.observedGeneration ?? 0;
  return {
    desired: deployment?.spec?.replicas ?? 1,
    ready: status.readyReplicas ?? 0,
    updated: status.updatedReplicas ?? 0,
    current: deployment !== undefined && observed >= (deployment.metadata?.generation ?? 0),
  };
}

function daemonSetCounts(daemonSet: V1DaemonSet | undefined): PodCounts {
  const status = daemonSet?.status;
  if (daemonSet === undefined || status === undefined) return { desired: 0, ready: 0, updated: 0, current: false };
  return {
    desired: status.desiredNumberScheduled,
    ready: status.numberReady,
    updated: status.updatedNumberScheduled ?? 0,
    current: (status.observedGeneration ?? 0) >= (daemonSet.metadata?.generation ?? 0),
  };
}

/** Readiness of the controller Deployment and the node DaemonSet from their status. */
export function driverComponents(deployment: V1Deployment | undefined, daemonSet: V1DaemonSet | undefined, now: string): DriverComponentStatus[] {
  return [componentStatus('Controller', deploymentCounts(deployment), now), componentStatus('Node', daemonSetCounts(daemonSet), now)];
}

function describeProblems(problems: readonly ValidationProblem[]): string {
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map((p) => p.message);
  const more = problems.length > MAX_PROBLEMS_SHOWN ? `; and ${problems.length - MAX_PROBLEMS_SHOWN} more` : '';
  return `invalid spec: ${shown.join('; ')}${more}`;
}

function upsertAll(conditions: readonly DeploymentCondition[] | undefined, updates: readonly ConditionUpdate[], clock: { generation: number; now: Date }): DeploymentCondition[] {
  return updates.reduce<DeploymentCondition[]>((list, u) => upsertCondition(list, u, clock), [...(conditions ?? [])]);
}

/** A condition that does not apply any more (CertsVerified without user certificates). */
function withoutCondition(conditions: DeploymentCondition[], type: ConditionType): DeploymentCondition[] {
  return conditions.filter((c) => c.type !== type);
}

const deployed = (status: 'True' | 'False', reason: string, message: string): ConditionUpdate => ({ type: 'DriverDeployed', status, reason, message });

interface Verdict {
  readonly updates: ConditionUpdate[];
  readonly phase: PmemCSIDeploymentStatus['phase'];
  readonly reason: string;
  readonly components?: DriverComponentStatus[];
}

function verdictOf(outcome: ReconcileOutcome, now: string): Verdict {
  switch (outcome.kind) {
    case 'invalid-spec': {
      const reason = describeProblems(outcome.problems);
      return { updates: [deployed('False', DEPLOY_REASONS.invalidSpec, reason)], phase: 'Failed', reason };
    }
    case 'certs-invalid':
      return { updates: [...outcome.conditions, deployed('False', DEPLOY_REASONS.certificatesInvalid, outcome.reason)], phase: 'Failed', reason: outcome.reason };
    case 'apply-failed': {
      const reason = `applying the driver objects failed: ${outcome.error}`;
      return { updates: [...outcome.conditions, deployed('False', DEPLOY_REASONS.applyFailed, reason)], phase: 'Failed', reason };
    }
    case 'conflict':
      return {
        updates: [{ type: 'Conflict', status: 'True', reason: outcome.reason, message: outcome.message }, deployed('False', DEPLOY_REASONS.conflict, outcome.message)],
        phase: 'Failed',
        reason: outcome.message,
      };
    case 'applied':
      return appliedVerdict(outcome, now);
  }
}

function appliedVerdict(outcome: Extract<ReconcileOutcome, { kind: 'applied' }>, now: string): Verdict {
  const components = driverComponents(outcome.deployment, outcome.daemonSet, now);
  if (outcome.refusal !== undefined) {
    return { updates: [...outcome.conditions, deployed('False', DEPLOY_REASONS.deviceModeRefused, outcome.refusal)], phase: 'Failed', reason: outcome.refusal, components };
  }
  const updates = [...outcome.conditions, deployed('True', DEPLOY_REASONS.applied, 'all driver objects are applied')];
  const summary = components.map((c) => `${c.component}: ${c.reason ?? ''}`).join('; ');
  const running = components.every((c) => c.status === 'Ready');
  return { updates, phase: running ? 'Running' : '', reason: running ? `driver is running (${summary})` : `waiting for driver pods (${summary})`, components };
}

/** The next status after a reconcile of `cr` that ended with `outcome`. */
export function nextStatus(cr: OwnerDeployment, outcome: ReconcileOutcome, now: Date): PmemCSIDeploymentStatus {
  const previous = cr.status ?? {};
  const generation = cr.metadata.generation ?? 0;
  const stamp = formatTimestamp(now);
  const verdict = verdictOf(outcome, stamp);
  const resolved: ConditionUpdate[] =
    outcome.kind !== 'conflict' && getCondition(previous.conditions, 'Conflict') !== undefined
      ? [{ type: 'Conflict', status: 'False', reason: CONFLICT_REASONS.resolved, message: CONFLICT_RESOLVED_MESSAGE }]
      : [];
  let conditions = upsertAll(previous.conditions, [...verdict.updates, ...resolved], { generation, now });
  // Not judged by this reconcile: an invalid spec or a conflict stops before the certificates.
  const certsJudged = outcome.kind !== 'invalid-spec' && outcome.kind !== 'conflict';
  if (!verdict.updates.some((u) => u.type === 'CertsVerified') && certsJudged) conditions = withoutCondition(conditions, 'CertsVerified');
  const components = verdict.components ?? previous.driverComponents;
  return {
    phase: verdict.phase,
    reason: verdict.reason,
    conditions,
    ...(components === undefined ? {} : { driverComponents: components }),
    observedGeneration: generation,
    lastUpdated: stamp,
  };
}

/** Events for the transition from `previous` to `next`. */
export function statusEvents(previous: PmemCSIDeploymentStatus | undefined, next: PmemCSIDeploymentStatus): StatusEvent[] {
  const events: StatusEvent[] = [];
  if (previous?.observedGeneration === undefined) {
    events.push({ type: 'Normal', reason: 'NewDeployment', message: 'processing new driver deployment' });
  }
  const conflictBefore = getCondition(previous?.conditions, 'Conflict')?.status;
  const conflict = getCondition(next.conditions, 'Conflict')?.status;
  if (conflict === 'False' && conflictBefore === 'True') events.push({ type: 'Normal', reason: 'ConflictResolved', message: CONFLICT_RESOLVED_MESSAGE });
  return [...events, ...phaseEvents(previous, next, conflict === 'True')];
}

/** Running once per arrival; Failed (Conflict when refused for one) for each new reason. */
function phaseEvents(previous: PmemCSIDeploymentStatus | undefined, next: PmemCSIDeploymentStatus, conflict: boolean): StatusEvent[] {
  if (next.phase === 'Running' && previous?.phase !== 'Running') return [{ type: 'Normal', reason: 'Running', message: next.reason ?? 'driver is running' }];
  if (next.phase !== 'Failed' || (previous?.phase === 'Failed' && previous.reason === next.reason)) return [];
  return [{ type: 'Warning', reason: conflict ? 'Conflict' : 'Failed', message: next.reason ?? 'failed' }];
}
