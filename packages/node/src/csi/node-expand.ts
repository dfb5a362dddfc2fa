// NodeExpandVolume: grow the device (a no-op when ControllerExpandVolume already did), then the
// filesystem on the mount — resize2fs for ext4 (online, on the device), xfs_growfs for xfs (on the
// mount point). A raw block volume only needs the device. Not offered in direct mode.
import {
  FailedPreconditionError,
  NotFoundError,
  UnimplementedError,
  type CallContext,
  type csi,
} from '@pmem-csi/runtime';
import { isFsType, requireField, sizeRange } from '@pmem-csi/csi';
import { growFilesystem } from '../mount/filesystem.js';
import { findMountAt } from '../mount/findmnt.js';
import { CAP_SYS_RESOURCE, hasCapability } from '../mount/process-caps.js';
import { absolutePath } from '../mount/paths.js';
import { statOrUndefined } from '../mount/targets.js';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { growVolume } from './controller-expand.js';
import { canExpand, type NodeServiceDeps } from './deps.js';
import { isMountOf } from './format-mount.js';
import { requireDevice } from './volumes.js';

async function growMountedFilesystem(
  deps: NodeServiceDeps,
  v: { volumeId: string; device: PmemDeviceInfo; path: string },
  ctx: CallContext,
): Promise<void> {
  const { volumeId, device, path } = v;
  const mount = await findMountAt(deps.runner, path, ctx);
  if (mount === undefined || !(await isMountOf(mount, device))) {
    throw new FailedPreconditionError(
      `volume_path ${path} is not a mount of volume ${volumeId}; publish or stage it before expanding the filesystem`,
    );
  }
  if (!isFsType(mount.fstype))
    throw new FailedPreconditionError(
      `volume ${volumeId} holds a ${mount.fstype} filesystem, which this driver cannot grow`,
    );
  if (mount.fstype === 'ext4' && !(await (deps.hasCapability ?? hasCapability)(CAP_SYS_RESOURCE))) {
    throw new FailedPreconditionError(
      `volume ${volumeId}: the device grew to ${device.size} bytes, but growing a mounted ext4 filesystem needs CAP_SYS_RESOURCE, which the node driver lacks; run it privileged (or add SYS_RESOURCE) and retry`,
    );
  }
  await growFilesystem(deps.runner, { fsType: mount.fstype, device: device.path, mountpoint: path }, ctx);
}

/** NodeExpandVolume. */
export async function expandVolumeRpc(
  deps: NodeServiceDeps,
  req: csi.NodeExpandVolumeRequest__Output,
  ctx: CallContext,
): Promise<csi.NodeExpandVolumeResponse> {
  if (!canExpand(deps)) throw new UnimplementedError(`volumes cannot be expanded in device mode ${deps.dm.mode}`);
  const volumeId = requireField(req.volume_id, 'volume_id');
  const path = requireField(req.volume_path, 'volume_path');
  const range = sizeRange(req.capacity_range);
  return deps.locks.withLocks([volumeId], 'volume', async () => {
    const current = await requireDevice(deps, volumeId, ctx.signal);
    // After the lookup: csi-sanity expects NOT_FOUND for an unknown volume asked with "some/path".
    absolutePath(path, 'volume_path');
    const st = await statOrUndefined(path);
    if (st === undefined) throw new NotFoundError(`volume_path ${path} does not exist`);
    // Without a capacity range (spec: OPTIONAL) the filesystem grows to the device's current size,
    // e.g. after ControllerExpandVolume grew the device.
    const device = range.required === 0 ? current : await growVolume(deps, volumeId, range, ctx.signal);
    if (req.volume_capability?.access_type === 'block' || st.isBlockDevice())
      return { capacity_bytes: String(device.size) };
    await growMountedFilesystem(deps, { volumeId, device, path }, ctx);
    ctx.log.info('volume expanded', { volumeId, size: device.size });
    return { capacity_bytes: String(device.size) };
  });
}
