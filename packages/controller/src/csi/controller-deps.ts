// What the CSI Controller methods share: the registry, the volume index, the way to the nodes,
// the settle clock and the per-key locks, plus the two helpers every method needs — turning an
// index record into a CSI Volume (with accessible topology) and looking a volume up so that
// "not found" is only said when the volume is provably absent.
import { type csi, NotFoundError, UnavailableError } from '@pmem-csi/csi';
import type { KeyedLocks, Logger } from '@pmem-csi/runtime';
import type { CapacityRefresher } from '../placement/capacity-refresh.js';
import type { NodePort } from '../nodes/node-port.js';
import type { NodeRegistry } from '../registry/node-registry.js';
import type { NodeView } from '../registry/node-view.js';
import { absenceDoubt, type SettleClock, type VolumeIndex, type VolumeRecord } from '../volumes/volume-index.js';

export interface ControllerDeps {
  readonly driverName: string;
  /** `<driver>/node` */
  readonly topologyKey: string;
  readonly registry: NodeRegistry;
  readonly index: VolumeIndex;
  /** The way to the nodes' node-controller services. */
  readonly nodePort: NodePort;
  /** Background capacity refreshes after creates and deletes (outside the locks). */
  readonly capacity: CapacityRefresher;
  readonly settle: SettleClock;
  /** Size of a volume whose request names neither required nor limit bytes. */
  readonly defaultVolumeSize: number;
  /** Per CreateVolume name. */
  readonly nameLocks: KeyedLocks;
  /** Per volume id (create, delete, expand). */
  readonly volumeLocks: KeyedLocks;
  readonly log: Logger;
}

/** The CSI Volume for an index record, accessible only from its node. */
export function toCsiVolume(deps: ControllerDeps, rec: VolumeRecord): csi.Volume {
  return {
    volume_id: rec.volumeId,
    capacity_bytes: String(rec.capacityBytes),
    volume_context: { ...rec.volumeContext },
    accessible_topology: [{ segments: { [deps.topologyKey]: rec.nodeId } }],
  };
}

/** Whether forwarded calls can reach the node now (its registration is live). */
export function isReachable(view: NodeView | undefined): boolean {
  return view !== undefined && (view.state === 'available' || view.state === 'syncing');
}

/** Why a node that is not reachable is not (its registry state), for messages. */
export function unreachableReason(view: NodeView | undefined): string {
  return view === undefined ? 'never registered' : (view.reason ?? view.state);
}

/** UNAVAILABLE for a call that must go to the node holding the volume, which cannot be reached. */
export function ownerUnreachable(nodeId: string, volumeId: string, why: string, cause?: unknown): UnavailableError {
  return new UnavailableError(
    `node ${JSON.stringify(nodeId)} that holds volume ${JSON.stringify(volumeId)} is not reachable (${why}); retry`,
    { cause },
  );
}

/** The health of a volume as seen from the controller: abnormal while its node is unreachable. */
export function volumeCondition(deps: ControllerDeps, rec: VolumeRecord): csi.VolumeCondition {
  const view = deps.registry.view(rec.nodeId);
  if (isReachable(view)) return { abnormal: false, message: `on node ${JSON.stringify(rec.nodeId)}` };
  return {
    abnormal: true,
    message: `node ${JSON.stringify(rec.nodeId)} that holds the volume is not available (${unreachableReason(view)})`,
  };
}

/** The volume's record. @throws NotFoundError when provably absent, UnavailableError when it may exist */
export function lookupVolume(deps: ControllerDeps, volumeId: string): VolumeRecord {
  const rec = deps.index.get(volumeId);
  if (rec !== undefined) return rec;
  const doubt = absenceDoubt(deps.settle, deps.registry.nodesNotAvailable());
  if (doubt !== undefined)
    throw new UnavailableError(`volume ${JSON.stringify(volumeId)} is not known (yet): ${doubt}`);
  throw new NotFoundError(`volume ${JSON.stringify(volumeId)} does not exist`);
}
