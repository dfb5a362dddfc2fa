// NodeGetVolumeStats: bytes and inodes of a published filesystem (statfs, no tool needed), the size
// of a raw block volume, and the volume's condition: abnormal when the path no longer shows the
// volume's device, when the staging mount vanished, or when the filesystem was switched to
// read-only behind our back (ext4 errors=remount-ro: `ro` in the superblock options while the mount
// itself is read-write).
import { statfs } from 'node:fs/promises';
import { NotFoundError, type CallContext, type csi } from '@pmem-csi/runtime';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { findMountAt, type MountEntry } from '../mount/findmnt.js';
import { sameBlockDevice, statOrUndefined } from '../mount/targets.js';
import type { NodeServiceDeps } from './deps.js';
import { isMountOf } from './format-mount.js';
import { requireField } from './requests.js';
import { localVolumeId, requireDevice } from './volumes.js';

type Condition = csi.VolumeCondition;
const HEALTHY: Condition = { abnormal: false, message: 'volume is mounted and writable' };

async function filesystemCondition(deps: NodeServiceDeps, v: { mount: MountEntry; device: PmemDeviceInfo; staging: string }, ctx: CallContext): Promise<Condition> {
  const { mount, device } = v;
  if (!(await isMountOf(mount, device))) return { abnormal: true, message: `${mount.target} shows ${mount.source}, not the volume's device ${device.path}` };
  if (mount.fsOptions.includes('ro') && !mount.vfsOptions.includes('ro')) {
    return { abnormal: true, message: `the ${mount.fstype} filesystem on ${device.path} was switched to read-only (filesystem errors?); check the kernel log` };
  }
  if (v.staging !== '' && (await findMountAt(deps.runner, v.staging, ctx)) === undefined) {
    return { abnormal: true, message: `the staging mount at ${v.staging} vanished` };
  }
  return HEALTHY;
}

async function filesystemStats(path: string): Promise<csi.VolumeUsage[]> {
  const s = await statfs(path);
  return [
    { unit: 'BYTES', total: String(s.blocks * s.bsize), available: String(s.bavail * s.bsize), used: String((s.blocks - s.bfree) * s.bsize) },
    { unit: 'INODES', total: String(s.files), available: String(s.ffree), used: String(s.files - s.ffree) },
  ];
}

/** NodeGetVolumeStats. */
export async function volumeStatsRpc(deps: NodeServiceDeps, req: csi.NodeGetVolumeStatsRequest__Output, ctx: CallContext): Promise<csi.NodeGetVolumeStatsResponse> {
  const volumeId = requireField(req.volume_id, 'volume_id');
  const path = requireField(req.volume_path, 'volume_path');
  // The kubelet asks for ephemeral inline volumes by its handle too.
  const device = await requireDevice(deps, await localVolumeId(deps, volumeId), ctx.signal);
  const st = await statOrUndefined(path);
  if (st === undefined) throw new NotFoundError(`volume_path ${path} does not exist`);
  if (st.isBlockDevice()) {
    const same = await sameBlockDevice(path, device.path);
    return {
      usage: [{ unit: 'BYTES', total: String(device.size) }],
      volume_condition: same ? { abnormal: false, message: 'block device is published' } : { abnormal: true, message: `${path} is no longer the device ${device.path}` },
    };
  }
  const mount = await findMountAt(deps.runner, path, ctx);
  if (mount === undefined) throw new NotFoundError(`volume_path ${path} is not a mount point: volume ${volumeId} is not published there`);
  const [usage, condition] = await Promise.all([filesystemStats(path), filesystemCondition(deps, { mount, device, staging: req.staging_target_path }, ctx)]);
  return { usage, volume_condition: condition };
}
