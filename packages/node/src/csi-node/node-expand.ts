// NodeExpandVolume: grow the device (a no-op when ControllerExpandVolume already did), then the
// filesystem on the mount — resize2fs for ext4 (online, on the device; where it was already grown
// offline at NodeStageVolume, see format-mount.ts, resize2fs has nothing to do), xfs_growfs for xfs
// (on the mount point). A raw block volume only needs the device. Not offered in direct mode.
// volume_path is where the kubelet sees the volume: a publish target, or the staging path (the
// kubelet calls NodeExpandVolume right after NodeStageVolume when the volume was expanded while no
// pod used it, "at the next stage"). Both are mounts of the volume's filesystem, so both grow it. A
// path that is neither — nothing mounted, another filesystem, another block device — is NOT_FOUND
// (CSI: the volume does not exist at that path), checked before anything grows.
import type { CallContext } from '@pmem-csi/runtime';
import type { Stats } from 'node:fs';
import {
  capabilityProblem,
  InvalidArgumentError,
  isFsType,
  requireField,
  sizeRange,
  type FsType,
  NotFoundError,
  FailedPreconditionError,
  UnimplementedError,
  type csi,
} from '@pmem-csi/csi';
import { growFilesystem } from '../mount/filesystem.js';
import { findMountAt, type MountEntry } from '../mount/findmnt.js';
import { CAP_SYS_RESOURCE, hasCapability } from '../mount/process-caps.js';
import { absolutePath } from '../mount/paths.js';
import { sameBlockDevice, statOrUndefined } from '../mount/targets.js';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { growVolume } from '../volumes/grow-volume.js';
import { canExpand, type NodeServiceDeps } from '../volumes/deps.js';
import { isMountOf, isReadOnlyMount } from './format-mount.js';
import { requireDevice } from '../volumes/volumes.js';

/** What volume_path shows: the volume's block device, or a mount of its filesystem. */
type VolumeAtPath =
  { readonly kind: 'block' } | { readonly kind: 'filesystem'; readonly fsType: FsType; readonly mount: MountEntry };

interface PathCheck {
  readonly volumeId: string;
  readonly device: PmemDeviceInfo;
  readonly path: string;
  readonly stat: Stats;
  readonly block: boolean;
}

function notThere(p: Pick<PathCheck, 'path' | 'volumeId'>, why: string): NotFoundError {
  return new NotFoundError(
    `volume_path ${p.path} is neither the staging path nor a publish target of volume ${p.volumeId}: ${why}`,
  );
}

/** Where volume_path shows the volume, or NOT_FOUND naming what is there instead. */
async function volumeAtPath(deps: NodeServiceDeps, p: PathCheck, ctx: CallContext): Promise<VolumeAtPath> {
  if (p.block) {
    if (!p.stat.isBlockDevice())
      throw notThere(p, 'a raw block volume is expanded at its publish target, the device file');
    if (!(await sameBlockDevice(p.path, p.device.path)))
      throw notThere(p, `it is another block device, not ${p.device.path}`);
    return { kind: 'block' };
  }
  const mount = await findMountAt(deps.runner, p.path, ctx);
  if (mount === undefined) throw notThere(p, 'nothing is mounted there');
  if (!(await isMountOf(mount, p.device)))
    throw notThere(p, `it has ${mount.source} (${mount.fstype}) mounted, which is not this volume`);
  if (!isFsType(mount.fstype))
    throw new FailedPreconditionError(
      `volume ${p.volumeId} holds a ${mount.fstype} filesystem, which this driver cannot grow`,
    );
  return { kind: 'filesystem', fsType: mount.fstype, mount };
}

/**
 * Where to run the growth: the kernel grows a filesystem only through a writable mount, so a
 * read-only publish target is grown through the (writable) staging mount when the CO names one.
 */
async function writableMountpoint(
  deps: NodeServiceDeps,
  v: { path: string; mount: MountEntry; staging: string; device: PmemDeviceInfo },
  ctx: CallContext,
): Promise<string> {
  if (!isReadOnlyMount(v.mount) || v.staging === '' || v.staging === v.path) return v.path;
  const staged = await findMountAt(deps.runner, v.staging, ctx);
  return staged !== undefined && !isReadOnlyMount(staged) && (await isMountOf(staged, v.device)) ? v.staging : v.path;
}

async function growMountedFilesystem(
  deps: NodeServiceDeps,
  v: { volumeId: string; device: PmemDeviceInfo; fsType: FsType; mountpoint: string },
  ctx: CallContext,
): Promise<void> {
  const { volumeId, device, fsType, mountpoint } = v;
  try {
    // resize2fs itself decides whether there is anything to grow ("Nothing to do" needs no
    // capability: e.g. the filesystem was grown offline at NodeStageVolume).
    await growFilesystem(deps.runner, { fsType, device: device.path, mountpoint }, ctx);
  } catch (e) {
    if (fsType !== 'ext4' || ctx.signal?.aborted || (await (deps.hasCapability ?? hasCapability)(CAP_SYS_RESOURCE)))
      throw e;
    throw new FailedPreconditionError(
      `volume ${volumeId}: the device grew to ${device.size} bytes, but growing a mounted ext4 filesystem needs CAP_SYS_RESOURCE, which the node driver lacks; run it privileged (or add SYS_RESOURCE) and retry, or stop the pods that use the volume: the node grows ext4 without it when the volume is staged next`,
      { cause: e },
    );
  }
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
  const cap = req.volume_capability;
  const problem = cap === null ? undefined : capabilityProblem(cap, 'volume_capability');
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  const staging = req.staging_target_path === '' ? '' : absolutePath(req.staging_target_path, 'staging_target_path');
  return deps.locks.withLocks([volumeId], 'volume', async () => {
    const current = await requireDevice(deps, volumeId, ctx.signal);
    // After the lookup: csi-sanity expects NOT_FOUND for an unknown volume asked with "some/path".
    absolutePath(path, 'volume_path');
    const stat = await statOrUndefined(path);
    if (stat === undefined) throw new NotFoundError(`volume_path ${path} does not exist`);
    const block = cap?.access_type === 'block' || stat.isBlockDevice();
    const at = await volumeAtPath(deps, { volumeId, device: current, path, stat, block }, ctx);
    // Without a capacity range (spec: OPTIONAL) the filesystem grows to the device's current size,
    // e.g. after ControllerExpandVolume grew the device.
    const device = range.required === 0 ? current : await growVolume(deps, volumeId, range, ctx.signal);
    if (at.kind === 'filesystem') {
      const mountpoint = await writableMountpoint(deps, { path, mount: at.mount, staging, device }, ctx);
      await growMountedFilesystem(deps, { volumeId, device, fsType: at.fsType, mountpoint }, ctx);
    }
    ctx.log.info('volume expanded', { volumeId, size: device.size, volumePath: path, access: at.kind });
    return { capacity_bytes: String(device.size) };
  });
}
