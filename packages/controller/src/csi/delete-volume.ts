// DeleteVolume: route to the node that holds the volume. Success is only reported for a volume
// that is provably gone — the Go driver answered OK for volumes on nodes that had not registered
// yet, Kubernetes deleted the PV, and the device leaked. So: owner unreachable → UNAVAILABLE;
// unknown volume → OK only after the settle period with every known node available; the owner
// answering NOT_FOUND counts as gone. Runs under the per-id lock (controller-server.ts); the node's
// capacity estimate is adjusted locally and refreshed in the background (placement/capacity-refresh.ts).
import { UnavailableError } from '@pmem-csi/csi';
import type { CallContext } from '@pmem-csi/runtime';
import { isReachable, ownerUnreachable, unreachableReason, type ControllerDeps } from './controller-deps.js';
import { NodeUnreachableError } from '../nodes/node-errors.js';
import { absenceDoubt } from '../volumes/volume-index.js';

/** The node that holds or may hold the volume: its index owner, or where a create had an unknown outcome. */
function ownerOf(deps: ControllerDeps, volumeId: string): string | undefined {
  return deps.index.get(volumeId)?.nodeId ?? deps.index.uncertainNode(volumeId);
}

/** DeleteVolume of a validated id, holding its lock. */
export async function deleteVolumeLocked(deps: ControllerDeps, volumeId: string, ctx: CallContext): Promise<void> {
  const nodeId = ownerOf(deps, volumeId);
  if (nodeId === undefined) {
    const doubt = absenceDoubt(deps.settle, deps.registry.nodesNotAvailable());
    if (doubt !== undefined)
      throw new UnavailableError(`volume ${JSON.stringify(volumeId)} is not known and cannot be proven gone: ${doubt}`);
    ctx.log.info('volume unknown on every node; nothing to delete', { volume: volumeId });
    return;
  }
  const view = deps.registry.view(nodeId);
  if (!isReachable(view)) throw ownerUnreachable(nodeId, volumeId, unreachableReason(view));
  let outcome: 'deleted' | 'notFound';
  const reportsBefore = deps.registry.capacityReports(nodeId);
  try {
    outcome = await deps.nodePort.deleteVolume(nodeId, volumeId, ctx.signal);
  } catch (err) {
    if (err instanceof NodeUnreachableError) throw ownerUnreachable(nodeId, volumeId, err.detail, err);
    throw err;
  }
  const size = deps.index.get(volumeId)?.capacityBytes;
  deps.index.remove(volumeId);
  deps.index.clearUncertain(volumeId);
  if (outcome === 'deleted' && size !== undefined) deps.registry.adjustCapacity(nodeId, size, reportsBefore);
  deps.capacity.schedule(nodeId);
  ctx.log.info(outcome === 'deleted' ? 'volume deleted' : 'volume already gone on its node', {
    volume: volumeId,
    node: nodeId,
  });
}
