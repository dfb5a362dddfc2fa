// ControllerExpandVolume of the node-controller service: grow the device (volumes/grow-volume.ts:
// the sizes a volume cannot take and why they are OUT_OF_RANGE) and remember the new size. The
// filesystem is grown later by NodeExpandVolume on the mount (node_expansion_required), which also
// grows the device itself when the CO skips this call — so either order works.
import type { CallContext } from '@pmem-csi/runtime';
import {
  capabilityProblem,
  requireField,
  sizeRange,
  InvalidArgumentError,
  NotFoundError,
  type csi,
} from '@pmem-csi/csi';
import { canExpand, type NodeServiceDeps } from '../volumes/deps.js';
import { growVolume } from '../volumes/grow-volume.js';

/** ControllerExpandVolume. */
export async function controllerExpandVolumeRpc(
  deps: NodeServiceDeps,
  req: csi.ControllerExpandVolumeRequest__Output,
  ctx: CallContext,
): Promise<csi.ControllerExpandVolumeResponse> {
  const volumeId = requireField(req.volume_id, 'volume_id');
  if (req.capacity_range === null) throw new InvalidArgumentError('capacity_range is required');
  const range = sizeRange(req.capacity_range);
  const problem =
    req.volume_capability === null ? undefined : capabilityProblem(req.volume_capability, 'volume_capability');
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  return deps.locks.withLocks([volumeId], 'volume', async () => {
    if ((await deps.state.get(volumeId)) === undefined)
      throw new NotFoundError(`volume ${volumeId} does not exist on node ${deps.nodeId}`);
    const device = await growVolume(deps, volumeId, range, ctx.signal);
    return {
      capacity_bytes: String(device.size),
      // A raw block volume needs nothing on the node; nor does a direct-mode volume, which never grew
      // (and whose node offers no NodeExpandVolume).
      node_expansion_required: canExpand(deps) && req.volume_capability?.access_type !== 'block',
    };
  });
}
