// The PmemCSIDeployment status as a pure function of the previous status and what one reconcile
// found, and the events of each transition. What every field means — written once here; the CRD
// descriptions (packages/api/src/crd/status-schema.ts) say the same:
//
// - DriverDeployed: True (AllObjectsApplied) when every driver object of the current generation is
//   applied. It says nothing about pods: their readiness is in driverComponents and the phase.
//   False when the reconcile could not apply the spec as written: InvalidSpec,
//   CertificatesInvalid, ApplyFailed, DeviceModeChangeRefused (everything else applied, the old
//   mode kept), TooManyExclusionTerms (everything applied, the node driver on no node:
//   PmemOverlap), Conflict.
// - CertsReady: True when the certificate Secrets were applied with valid certificates (issued and
//   renewed by the operator: OperatorIssued; or the spec's: UserSupplied, the message says when
//   they expire); False (CertificatesNotVerified) when the spec's certificates failed verification.
// - CertsVerified: present only when the spec carries user certificates; True when they were
//   verified (chain, names, a TLS handshake), False with what is wrong.
// - Conflict: present once a conflict was seen (plan/ownership.ts); True while the operator refuses the
//   deployment because objects it would write belong to someone else, False (Resolved) afterwards.
// - NodesSelected: True when the node DaemonSet schedules at least one pod, False (NoMatchingNodes)
//   when no node matches spec.nodeSelector (apart from the nodes kept for earlier PMEM-managing
//   deployments, which the message then says) or every matching node has taints the driver does
//   not tolerate. Judged whenever the DaemonSet controller has observed the latest DaemonSet.
// - PmemOverlap: one driver per node's PMEM (plan/pmem-overlap.ts). True (NodesExcluded) when a
//   PmemCSIDeployment that comes earlier by the ownership order, also in a PMEM-managing device
//   mode, has a node selector that can match the same nodes: the node DaemonSet is kept off every
//   node an earlier selector matches, and the message names the earlier deployments, how many
//   nodes and which (the first 10 by name). True (TooManyExclusionTerms) when that exclusion would
//   take too many node selector terms: refused, the node driver on no node. False (NoOverlap) once
//   that ends; absent when never seen. Emulated deployments manage no PMEM and never overlap.
// - EmulatedPmem: True (LoopBackedFiles) while the driver runs in emulated device mode: volumes are
//   sparse files on the node's disk behind loop devices, NOT persistent memory (emulated-pmem.ts);
//   the driver works. False (PmemDeviceMode) once it runs in lvm or direct mode; absent when never.
// - driverComponents: one entry per workload (Controller: the Deployment, Node: the DaemonSet)
//   with desired and ready pods as the workload controllers last reported them; Ready when the
//   workload controller observed the latest spec and every desired pod is ready and updated
//   (Node also needs at least one pod). Controller also names the active replicas
//   (active-controller.ts): active, the pod whose external-provisioner holds its leader-election
//   Lease, and activeResizer, the pod whose external-resizer holds its own (the two elect
//   independently: one pod or two), each while at least one controller pod is ready and that Lease
//   has not run out; the reason says "<pod> provisions, <pod> resizes" or "<pod> provisions and
//   resizes". Written by every reconcile that read the workloads; absent after a reconcile that
//   failed before (so Failed never shows stale counts).
// - phase:
//   - Running is entered when both components are Ready. It is kept while at least one controller
//     pod and at least one node driver pod are ready, so that a node joining or a DaemonSet
//     rollout (some node pods starting or updating) does not leave it; driverComponents show
//     those. It is left (to "") when no controller pod is ready (a restart or rollout of a
//     single controller: it uses Recreate) or no node driver pod is ready, and to Failed.
//   - "" while the driver objects are applied but the driver does not run yet; the reason says
//     what it waits for, e.g. "no node matches the node selector" (with NodesSelected False).
//   - Failed when the reconcile could not apply the spec (DriverDeployed False; the reason and
//     that condition say why).
// - GoOperatorFields: the Go operator's spec fields this driver has no counterpart for, accepted or
//   refused (go-operator.ts); conditions in the Go operator's shape are dropped before ours are
//   upserted (GoOperatorStatusConverted).
// Events mark transitions only: NewDeployment (first status), Running (entering Running),
// NotRunning (leaving Running for ""), Failed/Conflict (each new failure reason), ConflictResolved,
// NoMatchingNodes (NodesSelected turning False), PmemOverlap (PmemOverlap turning True),
// EmulatedPmem (EmulatedPmem turning True: a Warning, so that `kubectl get events
// --field-selector type=Warning` shows that these volumes are not PMEM), GoOperatorFieldsAccepted /
// GoOperatorFieldsRefused (GoOperatorFields turning True or changing its reason),
// GoOperatorStatusConverted (the Go operator's conditions replaced); the reconciler records
// ObjectsTakenOver and GoOperatorObjectsTakenOver itself.
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
import type { OwnerDeployment } from '../objects/context.js';
import type { ActiveReplicas } from './active-controller.js';
import { daemonSetCounts, deploymentCounts, driverComponents, nodesSelected } from './driver-components.js';
import { CONFLICT_REASONS, CONFLICT_RESOLVED_MESSAGE, type ConflictFinding } from '../plan/ownership.js';
import {
  GO_FIELDS_REASONS,
  describeConvertedConditions,
  foreignConditions,
  withoutForeignConditions,
} from './go-operator.js';

export const DEPLOY_REASONS = {
  applied: 'AllObjectsApplied',
  applyFailed: 'ApplyFailed',
  invalidSpec: 'InvalidSpec',
  certificatesInvalid: 'CertificatesInvalid',
  deviceModeRefused: 'DeviceModeChangeRefused',
  tooManyExclusionTerms: 'TooManyExclusionTerms',
  conflict: 'Conflict',
} as const;

/** What one reconcile ended with. */
export type ReconcileOutcome =
  | {
      readonly kind: 'invalid-spec';
      readonly problems: readonly ValidationProblem[];
      /** GoOperatorFields, when the spec has the Go operator's fields (or had them). */
      readonly conditions?: readonly ConditionUpdate[];
    }
  | { readonly kind: 'certs-invalid'; readonly reason: string; readonly conditions: readonly ConditionUpdate[] }
  | { readonly kind: 'apply-failed'; readonly error: string; readonly conditions: readonly ConditionUpdate[] }
  /** Refused before the first write: the object names or an object belong to someone else. */
  | ({ readonly kind: 'conflict' } & ConflictFinding)
  | {
      readonly kind: 'applied';
      /** Certificate conditions (CertsReady, and CertsVerified for user certificates), PmemOverlap and EmulatedPmem. */
      readonly conditions: readonly ConditionUpdate[];
      /**
       * Set when the spec was applied with a refusal: a device-mode change (the deployed mode
       * kept) or an exclusion of earlier deployments' nodes too large to express (the node driver
       * on no node). DriverDeployed False with its reason, phase Failed.
       */
      readonly refusal?: Refusal;
      readonly deployment: V1Deployment | undefined;
      readonly daemonSet: V1DaemonSet | undefined;
      /** The controller pods that hold the provisioner's and the resizer's Lease (active-controller.ts). */
      readonly active?: ActiveReplicas;
    };

/** Why an applied spec still fails: DriverDeployed's reason and the message. */
export interface Refusal {
  readonly reason: (typeof DEPLOY_REASONS)['deviceModeRefused' | 'tooManyExclusionTerms'];
  readonly message: string;
}

export interface StatusEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason:
    | 'NewDeployment'
    | 'Running'
    | 'NotRunning'
    | 'Failed'
    | 'Conflict'
    | 'ConflictResolved'
    | 'ObjectsTakenOver'
    | 'GoOperatorObjectsTakenOver'
    | 'GoOperatorFieldsAccepted'
    | 'GoOperatorFieldsRefused'
    | 'GoOperatorStatusConverted'
    | 'NoMatchingNodes'
    | 'PmemOverlap'
    | 'EmulatedPmem';
  readonly message: string;
}

const MAX_PROBLEMS_SHOWN = 5;

function describeProblems(problems: readonly ValidationProblem[]): string {
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map((p) => p.message);
  const more = problems.length > MAX_PROBLEMS_SHOWN ? `; and ${problems.length - MAX_PROBLEMS_SHOWN} more` : '';
  return `invalid spec: ${shown.join('; ')}${more}`;
}

function upsertAll(
  conditions: readonly DeploymentCondition[] | undefined,
  updates: readonly ConditionUpdate[],
  clock: { generation: number; now: Date },
): DeploymentCondition[] {
  return updates.reduce<DeploymentCondition[]>((list, u) => upsertCondition(list, u, clock), [...(conditions ?? [])]);
}

/** A condition that does not apply any more (CertsVerified without user certificates). */
function withoutCondition(conditions: DeploymentCondition[], type: ConditionType): DeploymentCondition[] {
  return conditions.filter((c) => c.type !== type);
}

const deployed = (status: 'True' | 'False', reason: string, message: string): ConditionUpdate => ({
  type: 'DriverDeployed',
  status,
  reason,
  message,
});

interface Verdict {
  readonly updates: ConditionUpdate[];
  readonly phase: PmemCSIDeploymentStatus['phase'];
  readonly reason: string;
  readonly components?: DriverComponentStatus[];
}

function verdictOf(outcome: ReconcileOutcome, now: string, previous: PmemCSIDeploymentStatus): Verdict {
  switch (outcome.kind) {
    case 'invalid-spec': {
      const reason = describeProblems(outcome.problems);
      return {
        updates: [...(outcome.conditions ?? []), deployed('False', DEPLOY_REASONS.invalidSpec, reason)],
        phase: 'Failed',
        reason,
      };
    }
    case 'certs-invalid':
      return {
        updates: [...outcome.conditions, deployed('False', DEPLOY_REASONS.certificatesInvalid, outcome.reason)],
        phase: 'Failed',
        reason: outcome.reason,
      };
    case 'apply-failed': {
      const reason = `applying the driver objects failed: ${outcome.error}`;
      return {
        updates: [...outcome.conditions, deployed('False', DEPLOY_REASONS.applyFailed, reason)],
        phase: 'Failed',
        reason,
      };
    }
    case 'conflict':
      return {
        updates: [
          { type: 'Conflict', status: 'True', reason: outcome.reason, message: outcome.message },
          deployed('False', DEPLOY_REASONS.conflict, outcome.message),
        ],
        phase: 'Failed',
        reason: outcome.message,
      };
    case 'applied':
      return appliedVerdict(outcome, now, previous);
  }
}

/** A Running driver stays Running while one controller pod and one node driver pod are ready. */
function stillServing(outcome: Extract<ReconcileOutcome, { kind: 'applied' }>): boolean {
  return deploymentCounts(outcome.deployment).ready > 0 && daemonSetCounts(outcome.daemonSet).ready > 0;
}

function appliedVerdict(
  outcome: Extract<ReconcileOutcome, { kind: 'applied' }>,
  now: string,
  previous: PmemCSIDeploymentStatus,
): Verdict {
  const components = driverComponents(outcome.deployment, outcome.daemonSet, now, outcome.active);
  const nodes = nodesSelected(outcome.daemonSet);
  const judged = [...outcome.conditions, ...(nodes === undefined ? [] : [nodes])];
  if (outcome.refusal !== undefined) {
    return {
      updates: [...judged, deployed('False', outcome.refusal.reason, outcome.refusal.message)],
      phase: 'Failed',
      reason: outcome.refusal.message,
      components,
    };
  }
  const updates = [...judged, deployed('True', DEPLOY_REASONS.applied, 'all driver objects are applied')];
  const summary = components.map((c) => `${c.component}: ${c.reason ?? ''}`).join('; ');
  if (components.every((c) => c.status === 'Ready'))
    return { updates, phase: 'Running', reason: `driver is running (${summary})`, components };
  if (previous.phase === 'Running' && stillServing(outcome)) {
    return {
      updates,
      phase: 'Running',
      reason: `driver is running, some pods are starting or updating (${summary})`,
      components,
    };
  }
  const waiting = nodes?.status === 'False' ? nodes.message : 'waiting for driver pods';
  return { updates, phase: '', reason: `${waiting} (${summary})`, components };
}

/** The next status after a reconcile of `cr` that ended with `outcome`. */
export function nextStatus(cr: OwnerDeployment, outcome: ReconcileOutcome, now: Date): PmemCSIDeploymentStatus {
  // The Go operator's conditions lack fields our CRD requires: replaced, never carried over.
  const previous = withoutForeignConditions(cr.status) ?? {};
  const generation = cr.metadata.generation ?? 0;
  const stamp = formatTimestamp(now);
  const verdict = verdictOf(outcome, stamp, previous);
  const resolved: ConditionUpdate[] =
    outcome.kind !== 'conflict' && getCondition(previous.conditions, 'Conflict') !== undefined
      ? [{ type: 'Conflict', status: 'False', reason: CONFLICT_REASONS.resolved, message: CONFLICT_RESOLVED_MESSAGE }]
      : [];
  let conditions = upsertAll(previous.conditions, [...verdict.updates, ...resolved], { generation, now });
  // Not judged by this reconcile: an invalid spec or a conflict stops before the certificates.
  const certsJudged = outcome.kind !== 'invalid-spec' && outcome.kind !== 'conflict';
  if (!verdict.updates.some((u) => u.type === 'CertsVerified') && certsJudged)
    conditions = withoutCondition(conditions, 'CertsVerified');
  // Not read by this reconcile: a failed one clears them rather than showing stale counts.
  const components = verdict.components;
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
export function statusEvents(
  previous: PmemCSIDeploymentStatus | undefined,
  next: PmemCSIDeploymentStatus,
): StatusEvent[] {
  const before = previous ?? {};
  const created: StatusEvent[] =
    previous?.observedGeneration === undefined
      ? [{ type: 'Normal', reason: 'NewDeployment', message: 'processing new driver deployment' }]
      : [];
  const conflict = getCondition(next.conditions, 'Conflict')?.status === 'True';
  const foreign = foreignConditions(previous);
  const converted: StatusEvent[] =
    foreign.length === 0
      ? []
      : [{ type: 'Normal', reason: 'GoOperatorStatusConverted', message: describeConvertedConditions(foreign) }];
  return [
    ...created,
    ...converted,
    ...goFieldsEvents(before, next),
    ...conditionEvents(before, next),
    ...phaseEvents(before, next, conflict),
  ];
}

/** GoOperatorFieldsAccepted / GoOperatorFieldsRefused when GoOperatorFields turns True or changes its reason. */
function goFieldsEvents(previous: PmemCSIDeploymentStatus, next: PmemCSIDeploymentStatus): StatusEvent[] {
  const now = getCondition(next.conditions, 'GoOperatorFields');
  const before = getCondition(previous.conditions, 'GoOperatorFields');
  if (now?.status !== 'True' || (before?.status === 'True' && before.reason === now.reason)) return [];
  return now.reason === GO_FIELDS_REASONS.refused
    ? [{ type: 'Warning', reason: 'GoOperatorFieldsRefused', message: now.message }]
    : [{ type: 'Normal', reason: 'GoOperatorFieldsAccepted', message: now.message }];
}

/** ConflictResolved when Conflict turns False, NoMatchingNodes when NodesSelected does; PmemOverlap and EmulatedPmem when those turn True. */
function conditionEvents(previous: PmemCSIDeploymentStatus, next: PmemCSIDeploymentStatus): StatusEvent[] {
  const turnedFalse = (type: ConditionType): DeploymentCondition | undefined => {
    const now = getCondition(next.conditions, type);
    return now?.status === 'False' && getCondition(previous.conditions, type)?.status !== 'False' ? now : undefined;
  };
  const events: StatusEvent[] = [];
  if (turnedFalse('Conflict') !== undefined && getCondition(previous.conditions, 'Conflict')?.status === 'True') {
    events.push({ type: 'Normal', reason: 'ConflictResolved', message: CONFLICT_RESOLVED_MESSAGE });
  }
  const nodes = turnedFalse('NodesSelected');
  if (nodes !== undefined) events.push({ type: 'Warning', reason: 'NoMatchingNodes', message: nodes.message });
  for (const type of ['PmemOverlap', 'EmulatedPmem'] as const) {
    const now = getCondition(next.conditions, type);
    if (now?.status === 'True' && getCondition(previous.conditions, type)?.status !== 'True')
      events.push({ type: 'Warning', reason: type, message: now.message });
  }
  return events;
}

/** Running once per arrival, NotRunning once per departure to ""; Failed (Conflict when refused for one) for each new reason. */
function phaseEvents(
  previous: PmemCSIDeploymentStatus,
  next: PmemCSIDeploymentStatus,
  conflict: boolean,
): StatusEvent[] {
  const wasRunning = previous.phase === 'Running';
  const reason = next.reason ?? '';
  if (next.phase === 'Running') return wasRunning ? [] : [{ type: 'Normal', reason: 'Running', message: reason }];
  if (next.phase !== 'Failed') return wasRunning ? [{ type: 'Warning', reason: 'NotRunning', message: reason }] : [];
  if (previous.phase === 'Failed' && previous.reason === next.reason) return [];
  return [{ type: 'Warning', reason: conflict ? 'Conflict' : 'Failed', message: reason }];
}
