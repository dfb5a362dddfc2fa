// ControllerExpandVolume: route to the node that holds the volume, which grows its device (the
// node is the truth: it is idempotent, never shrinks and knows its allocation unit and free
// space), then keep the controller's bookkeeping exact — the index stores the new size, the
// owner's capacity estimate loses the growth unless a newer node report already counted it (the
// reportsBefore rule of creates and deletes), and a background refresh brings the node's figure.
// The index change carries a new sequence mark, so a listing that began before it cannot put the
// old size back (volumes/volume-index.ts), and the expansion counts as a mutation of the node
// (nodes/node-port.ts NodeMutations), so a pushed inventory that predates it makes this replica
// list the node instead of believing it; a standby replica learns the new size from that push.
//
// Codes (CSI ControllerExpandVolume table): an unknown volume is NOT_FOUND only when provably
// absent (as DeleteVolume: after the settle period, every known node available), else
// UNAVAILABLE; the owner unreachable → UNAVAILABLE naming node and volume; limit_bytes below the
// current size → OUT_OF_RANGE (volumes never shrink); no room on the owner → OUT_OF_RANGE (the
// table has no RESOURCE_EXHAUSTED row for expansion); the node's other answers keep their code.
// Runs under the per-id lock (controller-server.ts).
import {
  capabilityProblem,
  type csi,
  formatBytes,
  InvalidArgumentError,
  OutOfRangeError,
  requireField,
  ResourceExhaustedError,
  sizeRange,
  type SizeRange,
  UnavailableError,
} from '@pmem-csi/csi';
import type { CallContext } from '@pmem-csi/runtime';
import {
  isReachable,
  lookupVolume,
  ownerUnreachable,
  unreachableReason,
  type ControllerDeps,
} from './controller-deps.js';
import { NodeUnreachableError } from '../nodes/node-errors.js';
import type { NodeExpansionAnswer } from '../nodes/node-port.js';
import type { VolumeRecord } from '../volumes/volume-index.js';

/** A validated ControllerExpandVolume request. */
export interface ExpandPlan {
  readonly volumeId: string;
  /** required > 0; limit 0 = no limit. */
  readonly range: SizeRange;
  readonly capability: csi.VolumeCapability__Output | null;
}

/** Validate a ControllerExpandVolume request (no side effects). @throws InvalidArgumentError */
export function planExpand(req: csi.ControllerExpandVolumeRequest__Output): ExpandPlan {
  const volumeId = requireField(req.volume_id, 'volume_id');
  if (req.capacity_range === null)
    throw new InvalidArgumentError('capacity_range is required: required_bytes is the size to grow the volume to');
  const range = sizeRange(req.capacity_range);
  if (range.required === 0)
    throw new InvalidArgumentError('capacity_range.required_bytes is required and must be greater than 0');
  if (req.volume_capability !== null) {
    const problem = capabilityProblem(req.volume_capability, 'volume_capability');
    if (problem !== undefined) throw new InvalidArgumentError(problem);
  }
  return { volumeId, range, capability: req.volume_capability };
}

const quote = JSON.stringify;

/** The volume's record; an id only an unsettled create may have made is not provably absent. */
function knownVolume(deps: ControllerDeps, volumeId: string): VolumeRecord {
  const rec = deps.index.get(volumeId);
  if (rec !== undefined) return rec;
  const uncertain = deps.index.uncertainNode(volumeId);
  if (uncertain !== undefined) {
    throw new UnavailableError(
      `volume ${quote(volumeId)} is not known: a create of it on node ${quote(uncertain)} has an unknown outcome; retry`,
    );
  }
  return lookupVolume(deps, volumeId);
}

/** Limit below the current size: growing cannot satisfy it and volumes never shrink. */
function checkLimit(rec: VolumeRecord, range: SizeRange): void {
  if (range.limit === 0 || range.limit >= rec.capacityBytes) return;
  throw new OutOfRangeError(
    `volume ${quote(rec.volumeId)} on node ${quote(rec.nodeId)} has ${formatBytes(rec.capacityBytes)}; ` +
      `capacity_range.limit_bytes ${formatBytes(range.limit)} is below that and volumes never shrink`,
  );
}

/** A node's refusal for lack of space, as the CSI table wants it for expansion (OUT_OF_RANGE). */
function noRoom(deps: ControllerDeps, rec: VolumeRecord, range: SizeRange, cause: unknown): OutOfRangeError {
  const free = deps.registry.view(rec.nodeId)?.capacity.available ?? 0;
  return new OutOfRangeError(
    `not enough free PMEM on node ${quote(rec.nodeId)} to grow volume ${quote(rec.volumeId)} by ` +
      `${formatBytes(range.required - rec.capacityBytes)} (from ${formatBytes(rec.capacityBytes)} to ` +
      `${formatBytes(range.required)}); the node has ${formatBytes(free)} free`,
    { cause },
  );
}

function nodeRequest(plan: ExpandPlan): csi.ControllerExpandVolumeRequest {
  return {
    volume_id: plan.volumeId,
    capacity_range: { required_bytes: String(plan.range.required), limit_bytes: String(plan.range.limit) },
    volume_capability: plan.capability,
  };
}

/** The new size into the index and the owner's capacity estimate (see the header). */
function book(deps: ControllerDeps, rec: VolumeRecord, answer: NodeExpansionAnswer, reportsBefore: number): void {
  const growth = answer.capacityBytes - rec.capacityBytes;
  if (growth === 0) return;
  deps.index.resize(rec.volumeId, answer.capacityBytes);
  // A negative difference is not a shrink: the index was behind the node (grown through another replica).
  if (growth > 0) deps.registry.adjustCapacity(rec.nodeId, -growth, reportsBefore);
  deps.capacity.schedule(rec.nodeId);
}

/** ControllerExpandVolume after validation, holding the volume's lock. */
export async function expandVolumeLocked(
  deps: ControllerDeps,
  plan: ExpandPlan,
  ctx: CallContext,
): Promise<csi.ControllerExpandVolumeResponse> {
  const rec = knownVolume(deps, plan.volumeId);
  const { nodeId } = rec;
  const view = deps.registry.view(nodeId);
  if (!isReachable(view)) throw ownerUnreachable(nodeId, plan.volumeId, unreachableReason(view));
  checkLimit(rec, plan.range);
  const reportsBefore = deps.registry.capacityReports(nodeId);
  let answer: NodeExpansionAnswer;
  try {
    answer = await deps.nodePort.expandVolume(nodeId, nodeRequest(plan), ctx.signal);
  } catch (err) {
    if (err instanceof NodeUnreachableError) throw ownerUnreachable(nodeId, plan.volumeId, err.detail, err);
    // A refused or unfinished growth may still have changed the node's free space (or shown our estimate wrong).
    deps.capacity.schedule(nodeId);
    // Nodes of earlier versions refuse a growth without room with RESOURCE_EXHAUSTED.
    if (err instanceof ResourceExhaustedError) throw noRoom(deps, rec, plan.range, err);
    throw err;
  }
  book(deps, rec, answer, reportsBefore);
  ctx.log.info(answer.capacityBytes > rec.capacityBytes ? 'volume expanded' : 'volume already large enough', {
    volume: plan.volumeId,
    node: nodeId,
    from: rec.capacityBytes,
    bytes: answer.capacityBytes,
  });
  return {
    capacity_bytes: String(answer.capacityBytes),
    node_expansion_required: answer.nodeExpansionRequired,
  };
}
