// NodeStageVolume / NodeUnstageVolume. Staging mounts the volume's filesystem once per node at the
// staging path (creating it when the device is blank); publishing then bind-mounts from there.
// Raw block volumes need no staging. Both RPCs are idempotent: staged already with this device →
// OK; something else mounted there → ALREADY_EXISTS; unstage of a path that is not mounted → OK.
// The staging path must be absolute and no system directory (co-paths.ts); staging refuses a
// directory that already holds files, and unstaging never unmounts what is not this volume.
import type { CallContext } from '@pmem-csi/runtime';
import { findMountAt } from '../mount/findmnt.js';
import { checkTargetIsFree } from '../mount/paths.js';
import { accessRequest } from './access-request.js';
import { coPath, unmountVolumeAt } from './co-paths.js';
import type { NodeServiceDeps } from '../volumes/deps.js';
import { formatAndMount, isMountOf, occupiedMessage, volumeUsage } from './format-mount.js';
import { requireField, AlreadyExistsError, type csi } from '@pmem-csi/csi';
import { findDevice, isKataVolume, requireDevice } from '../volumes/volumes.js';
import { kataBlockRefused, stageKataImage, unstageKataImage } from './kata-volume.js';

/** NodeStageVolume. */
export async function stageVolumeRpc(
  deps: NodeServiceDeps,
  req: csi.NodeStageVolumeRequest__Output,
  ctx: CallContext,
): Promise<csi.NodeStageVolumeResponse> {
  const volumeId = requireField(req.volume_id, 'volume_id');
  const staging = await coPath(deps, req.staging_target_path, 'staging_target_path');
  const access = accessRequest(req.volume_capability);
  return deps.locks.withLocks([volumeId], 'volume', async () => {
    const device = await requireDevice(deps, volumeId, ctx.signal);
    const kata = await isKataVolume(deps, volumeId);
    if (access.kind === 'block') {
      if (kata) throw kataBlockRefused(volumeId);
      return {};
    }
    const mounted = await findMountAt(deps.runner, staging, ctx);
    if (mounted !== undefined) {
      if (!(await isMountOf(mounted, device)))
        throw new AlreadyExistsError(occupiedMessage('staging_target_path', staging, mounted, volumeId));
      if (mounted.fstype !== access.fsType) {
        throw new AlreadyExistsError(
          `volume ${volumeId} is already staged at ${staging} as ${mounted.fstype}; the request asks for ${access.fsType}`,
        );
      }
      if (kata) await stageKataImage(deps, { volumeId, staging, fsType: access.fsType }, ctx); // a retry finishes it
      return {};
    }
    await checkTargetIsFree(staging, 'staging_target_path', 'directory');
    const usage = await volumeUsage(deps, volumeId, req.volume_context);
    await formatAndMount(
      deps,
      { volumeId, device, fsType: access.fsType, flags: access.flags, usage, target: staging },
      ctx.signal,
    );
    if (kata) await stageKataImage(deps, { volumeId, staging, fsType: access.fsType }, ctx);
    ctx.log.info('volume staged', { volumeId, device: device.path, stagingPath: staging, fsType: access.fsType, kata });
    return {};
  });
}

/** NodeUnstageVolume: unmount what is mounted at the staging path; the directory belongs to the CO. */
export async function unstageVolumeRpc(
  deps: NodeServiceDeps,
  req: csi.NodeUnstageVolumeRequest__Output,
  ctx: CallContext,
): Promise<csi.NodeUnstageVolumeResponse> {
  const volumeId = requireField(req.volume_id, 'volume_id');
  const staging = await coPath(deps, req.staging_target_path, 'staging_target_path');
  return deps.locks.withLocks([volumeId], 'volume', async () => {
    const device = await findDevice(deps.dm, volumeId, ctx.signal);
    if (device !== undefined && (await isKataVolume(deps, volumeId)))
      await unstageKataImage(deps, { volumeId, staging, device }, ctx);
    const removed = await unmountVolumeAt(deps, { path: staging, field: 'staging_target_path', volumeId, device }, ctx);
    if (removed > 0) ctx.log.info('volume unstaged', { volumeId, stagingPath: staging });
    return {};
  });
}
