// The readiness of the driver's workloads for the PmemCSIDeployment status (deployment-status.ts says
// what each field means): driverComponents from the controller Deployment's and the node
// DaemonSet's status with the active controller replicas, and NodesSelected from the DaemonSet.
// Pure functions of the objects the reconcile read.
import type { V1DaemonSet, V1Deployment } from '@kubernetes/client-node';
import type { ConditionUpdate, DriverComponentStatus } from '@pmem-csi/api';
import type { ActiveReplicas } from './active-controller.js';

export const NODES_SELECTED_REASONS = { match: 'NodesMatch', none: 'NoMatchingNodes' } as const;

/** "<a> provisions, <b> resizes", "<a> provisions and resizes", one of them, or nothing. */
function describeLeaders(active: ActiveReplicas): string | undefined {
  const { provisioner, resizer } = active;
  if (provisioner !== undefined && provisioner === resizer) return `${provisioner} provisions and resizes`;
  const roles = [
    ...(provisioner === undefined ? [] : [`${provisioner} provisions`]),
    ...(resizer === undefined ? [] : [`${resizer} resizes`]),
  ];
  return roles.length === 0 ? undefined : roles.join(', ');
}

/** Why a component is (not) ready, e.g. "2 of 3 controller pods ready, 2 updated, <pod> provisions, <pod> resizes". */
function componentReason(
  component: DriverComponentStatus['component'],
  counts: PodCounts,
  active: ActiveReplicas,
): string {
  if (!counts.current)
    return `waiting for the ${component === 'Node' ? 'DaemonSet' : 'Deployment'} controller to observe the latest spec`;
  if (counts.desired === 0)
    return component === 'Node'
      ? 'no node driver pods: no node matches the node selector'
      : 'no controller pods wanted';
  const what = component === 'Node' ? 'node driver pods' : 'controller pods';
  const updated = counts.updated < counts.desired ? `, ${counts.updated} updated` : '';
  const leaders = describeLeaders(active);
  return `${counts.ready} of ${counts.desired} ${what} ready${updated}${leaders === undefined ? '' : `, ${leaders}`}`;
}

function componentStatus(
  component: DriverComponentStatus['component'],
  counts: PodCounts,
  now: string,
  active: ActiveReplicas = {},
): DriverComponentStatus {
  const ready =
    counts.current && counts.desired > 0 && counts.ready >= counts.desired && counts.updated >= counts.desired;
  return {
    component,
    status: ready ? 'Ready' : 'NotReady',
    reason: componentReason(component, counts, active),
    desired: counts.desired,
    ready: counts.ready,
    ...(active.provisioner === undefined ? {} : { active: active.provisioner }),
    ...(active.resizer === undefined ? {} : { activeResizer: active.resizer }),
    lastUpdated: now,
  };
}

interface PodCounts {
  readonly desired: number;
  readonly ready: number;
  readonly updated: number;
  /** The workload controller has observed the latest generation. */
  readonly current: boolean;
}

export function deploymentCounts(deployment: V1Deployment | undefined): PodCounts {
  const status = deployment?.status ?? {};
  const observed = status.observedGeneration ?? 0;
  return {
    desired: deployment?.spec?.replicas ?? 1,
    ready: status.readyReplicas ?? 0,
    updated: status.updatedReplicas ?? 0,
    current: deployment !== undefined && observed >= (deployment.metadata?.generation ?? 0),
  };
}

export function daemonSetCounts(daemonSet: V1DaemonSet | undefined): PodCounts {
  const status = daemonSet?.status;
  if (daemonSet === undefined || status === undefined) return { desired: 0, ready: 0, updated: 0, current: false };
  return {
    desired: status.desiredNumberScheduled,
    ready: status.numberReady,
    updated: status.updatedNumberScheduled ?? 0,
    current: (status.observedGeneration ?? 0) >= (daemonSet.metadata?.generation ?? 0),
  };
}

/**
 * Readiness of the controller Deployment and the node DaemonSet from their status, and the active
 * controller replicas (the holders of the provisioner's and the resizer's Lease) while at least one
 * controller pod is ready: without a ready pod the holders are dying or gone, whatever their
 * Leases still say.
 */
export function driverComponents(
  deployment: V1Deployment | undefined,
  daemonSet: V1DaemonSet | undefined,
  now: string,
  activeReplicas: ActiveReplicas = {},
): DriverComponentStatus[] {
  const controller = deploymentCounts(deployment);
  const active = controller.ready > 0 ? activeReplicas : {};
  return [
    componentStatus('Controller', controller, now, active),
    componentStatus('Node', daemonSetCounts(daemonSet), now),
  ];
}

/** "k=v,k2=v2" of the DaemonSet's node selector. */
function describeSelector(daemonSet: V1DaemonSet): string {
  const selector = daemonSet.spec?.template.spec?.nodeSelector ?? {};
  const terms = Object.entries(selector).map(([k, v]) => `${k}=${v}`);
  return terms.length === 0 ? '(none)' : terms.join(',');
}

/** True when the DaemonSet is kept off the nodes of earlier PMEM-managing deployments (objects/node.ts). */
const keptOffNodes = (daemonSet: V1DaemonSet): boolean =>
  daemonSet.spec?.template.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution !== undefined;

/** NodesSelected from the DaemonSet, once its controller observed the latest spec. */
export function nodesSelected(daemonSet: V1DaemonSet | undefined): ConditionUpdate | undefined {
  const counts = daemonSetCounts(daemonSet);
  if (daemonSet === undefined || !counts.current) return undefined;
  if (counts.desired > 0)
    return {
      type: 'NodesSelected',
      status: 'True',
      reason: NODES_SELECTED_REASONS.match,
      message: `the node driver runs on ${counts.desired} nodes`,
    };
  return {
    type: 'NodesSelected',
    status: 'False',
    reason: NODES_SELECTED_REASONS.none,
    message:
      `no node matches the node selector ${describeSelector(daemonSet)}` +
      (keptOffNodes(daemonSet)
        ? ' apart from the nodes kept for earlier PMEM-managing deployments (PmemOverlap)'
        : '') +
      ' (or every matching node has taints the driver does not tolerate): the node driver has no pods; ' +
      'label the nodes with PMEM or change spec.nodeSelector',
  };
}
