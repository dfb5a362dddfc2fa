// NodeGetVolumeStats: bytes and inodes of a published filesystem (statfs, no tool needed), the size
// of a raw block volume, and the volume's condition: abnormal when the staging mount vanished, or
// when the filesystem was switched to read-only behind our back (ext4 errors=remount-ro: `ro` in the
// superblock options while the mount itself is read-write). It answers only for a path where the
// volume itself is mounted (its staging mount, a bind of it, or the bind of its block device):
// any other path — `/`, `/proc`, another volume's mount, a relative path — is NOT_FOUND (CSI:
// the volume does not exist on that volume_path), so no other filesystem's usage is disclosed.
import { statfs } from 'node:fs/promises';
import type { CallContext } from '@pmem-csi/runtime';
import { absolutePath, isAbsolutePathText } from '../mount/paths.js';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { findMountAt, type MountEntry } from '../mount/findmnt.js';
import { sameBlockDevice, statOrUndefined } from '../mount/targets.js';
import type { NodeServiceDeps } from '../volumes/deps.js';
import { isMountOf } from './format-mount.js';
import { isKataImageMount } from '../kata/volume-mounts.js';
import { requireField, NotFoundError, type csi } from '@pmem-csi/csi';
import { localVolumeId, requireDevice } from '../volumes/volumes.js';

type Condition = csi.VolumeCondition;
const HEALTHY: Condition = { abnormal: false, message: 'volume is mounted and writable' };

async function filesystemCondition(
  deps: NodeServiceDeps,
  v: { mount: MountEntry; device: PmemDeviceInfo; staging: string },
  ctx: CallContext,
): Promise<Condition> {
  const { mount, device } = v;
  if (mount.fsOptions.includes('ro') && !mount.vfsOptions.includes('ro')) {
    return {
      abnormal: true,
      message: `the ${mount.fstype} filesystem on ${device.path} was switched to read-only (filesystem errors?); check the kernel log`,
    };
  }
  if (v.staging !== '' && (await findMountAt(deps.runner, v.staging, ctx)) === undefined) {
    return { abnormal: true, message: `the staging mount at ${v.staging} vanished` };
  }
  return HEALTHY;
}

async function filesystemStats(path: string): Promise<csi.VolumeUsage[]> {
  const s = await statfs(path);
  return [
    {
      unit: 'BYTES',
      total: String(s.blocks * s.bsize),
      available: String(s.bavail * s.bsize),
      used: String((s.blocks - s.bfree) * s.bsize),
    },
    { unit: 'INODES', total: String(s.files), available: String(s.ffree), used: String(s.files - s.ffree) },
  ];
}

/** The answer for a path where something else is mounted: named as NOT_FOUND, its usage never read. */
function notThisVolume(path: string, volumeId: string): NotFoundError {
  return new NotFoundError(`volume_path ${path} is not where volume ${volumeId} is staged or published`);
}

/** NodeGetVolumeStats. */
export async function volumeStatsRpc(
  deps: NodeServiceDeps,
  req: csi.NodeGetVolumeStatsRequest__Output,
  ctx: CallContext,
): Promise<csi.NodeGetVolumeStatsResponse> {
  const volumeId = requireField(req.volume_id, 'volume_id');
  const path = requireField(req.volume_path, 'volume_path');
  const staging = req.staging_target_path === '' ? '' : absolutePath(req.staging_target_path, 'staging_target_path');
  // The kubelet asks for ephemeral inline volumes by its handle too.
  const device = await requireDevice(deps, await localVolumeId(deps, volumeId), ctx.signal);
  // NOT_FOUND rather than INVALID_ARGUMENT: csi-sanity asks with "some/path" and expects it.
  if (!isAbsolutePathText(path))
    throw new NotFoundError(
      `volume_path ${JSON.stringify(path)} is not an absolute path, so volume ${volumeId} is not staged or published there (CSI requires absolute paths)`,
    );
  const st = await statOrUndefined(path);
  if (st === undefined) throw new NotFoundError(`volume_path ${path} does not exist`);
  const mount = await findMountAt(deps.runner, path, ctx);
  if (mount === undefined)
    throw new NotFoundError(`volume_path ${path} is not a mount point: volume ${volumeId} is not published there`);
  if (st.isBlockDevice()) {
    if (!(await sameBlockDevice(path, device.path))) throw notThisVolume(path, volumeId);
    return {
      usage: [{ unit: 'BYTES', total: String(device.size) }],
      volume_condition: { abnormal: false, message: 'block device is published' },
    };
  }
  // A Kata volume's publication mounts the filesystem inside its image: its figures are that filesystem's.
  if (!(await isMountOf(mount, device)) && !(await isKataImageMount(mount, device)))
    throw notThisVolume(path, volumeId);
  const [usage, condition] = await Promise.all([
    filesystemStats(path),
    filesystemCondition(deps, { mount, device, staging }, ctx),
  ]);
  return { usage, volume_condition: condition };
}
