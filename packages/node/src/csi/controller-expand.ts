// ControllerExpandVolume of the node-controller service: grow the device (the device manager never
// shrinks, so retries are harmless) and remember the new size. The filesystem is grown later by
// NodeExpandVolume on the mount (node_expansion_required), which also grows the device itself when
// the CO skips this call — so either order works.
import {
  InvalidArgumentError,
  NotFoundError,
  OutOfRangeError,
  UnimplementedError,
  type CallContext,
  type csi,
} from '@pmem-csi/runtime';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { canExpand, type NodeServiceDeps } from './deps.js';
import { requireField, sizeRange, type SizeRange } from '@pmem-csi/csi';

/** Grow a volume's device to at least `range.required` and update its record. Callers hold the lock. */
export async function growVolume(
  deps: NodeServiceDeps,
  volumeId: string,
  range: SizeRange,
  signal?: AbortSignal,
): Promise<PmemDeviceInfo> {
  if (range.required === 0)
    throw new InvalidArgumentError('capacity_range.required_bytes is required and must be greater than 0');
  const record = await deps.state.get(volumeId);
  const device = await deps.dm.resizeDevice(volumeId, range.required, { signal });
  if (record !== undefined && record.size !== device.size) await deps.state.put({ ...record, size: device.size });
  if (range.limit > 0 && device.size > range.limit) {
    throw new OutOfRangeError(
      `volume ${volumeId} now has ${device.size} bytes (device alignment), above capacity_range.limit_bytes ${range.limit}`,
    );
  }
  return device;
}

/** ControllerExpandVolume. */
export async function controllerExpandVolumeRpc(
  deps: NodeServiceDeps,
  req: csi.ControllerExpandVolumeRequest__Output,
  ctx: CallContext,
): Promise<csi.ControllerExpandVolumeResponse> {
  if (!canExpand(deps)) throw new UnimplementedError(`volumes cannot be expanded in device mode ${deps.dm.mode}`);
  const volumeId = requireField(req.volume_id, 'volume_id');
  if (req.capacity_range === null) throw new InvalidArgumentError('capacity_range is required');
  const range = sizeRange(req.capacity_range);
  return deps.locks.withLocks([volumeId], 'volume', async () => {
    if ((await deps.state.get(volumeId)) === undefined)
      throw new NotFoundError(`volume ${volumeId} does not exist on node ${deps.nodeId}`);
    const device = await growVolume(deps, volumeId, range, ctx.signal);
    return {
      capacity_bytes: String(device.size),
      node_expansion_required: req.volume_capability?.access_type !== 'block',
    };
  });
}
