// Ephemeral inline volumes with kataContainers: "true" (issue 26). There is no staging path, so the
// volume's own filesystem is mounted at a directory next to the target, in the pod's volume
// directory that the kubelet shares with the host (Kata's runtime opens the image file by the path
// its loop device reports, so that path must exist on the host): "<dirname(target)>/.pmem-csi-kata-
// <volume id>". The image and the target's mount are then made as for a staged persistent volume
// (kata-volume.ts). Every step is idempotent, so a publish killed midway is finished by the retry;
// unpublish undoes them in reverse and removes the directory, before the volume is deleted.
import { dirname, join } from 'node:path';
import type { CallContext } from '@pmem-csi/runtime';
import type { FsType } from '@pmem-csi/csi';
import type { VolumeUsage } from '@pmem-csi/api';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { detachImage, imagePath } from '../kata/image-file.js';
import { findMountAt } from '../mount/findmnt.js';
import { unmount } from '../mount/mount.js';
import { removeTarget } from '../mount/targets.js';
import type { NodeServiceDeps } from '../volumes/deps.js';
import type { AccessMode } from './access-request.js';
import { formatAndMount, isMountOf } from './format-mount.js';
import { publishKataFilesystem, stageKataImage } from './kata-volume.js';

/** Where an ephemeral Kata volume's own filesystem is mounted: next to its target. */
export function kataHolder(target: string, volumeId: string): string {
  return join(dirname(target), `.pmem-csi-kata-${volumeId}`);
}

export interface KataEphemeral {
  readonly volumeId: string;
  readonly device: PmemDeviceInfo;
  readonly target: string;
  readonly fsType: FsType;
  readonly flags: readonly string[];
  readonly usage: VolumeUsage;
  readonly readonly: boolean;
  readonly mode: AccessMode;
}

/** Mount the volume at its holder directory (formatting it when blank), make the image, mount its filesystem at the target. */
export async function publishKataEphemeral(deps: NodeServiceDeps, e: KataEphemeral, ctx: CallContext): Promise<void> {
  const holder = kataHolder(e.target, e.volumeId);
  const mounted = await findMountAt(deps.runner, holder, ctx);
  if (mounted === undefined || !(await isMountOf(mounted, e.device)))
    await formatAndMount(
      deps,
      { volumeId: e.volumeId, device: e.device, fsType: e.fsType, flags: [], usage: e.usage, target: holder },
      ctx.signal,
    );
  await stageKataImage(deps, { volumeId: e.volumeId, staging: holder, fsType: e.fsType }, ctx);
  await publishKataFilesystem(deps, { ...e, staging: holder }, ctx);
}

/** After the target is unmounted: detach the image, unmount the holder and remove its directory. */
export async function unpublishKataEphemeral(
  deps: NodeServiceDeps,
  u: { volumeId: string; device: PmemDeviceInfo | undefined; target: string },
  ctx: CallContext,
): Promise<void> {
  const holder = kataHolder(u.target, u.volumeId);
  const mounted = await findMountAt(deps.runner, holder, ctx);
  if (mounted !== undefined && u.device !== undefined && (await isMountOf(mounted, u.device))) {
    await detachImage(deps.runner, imagePath(holder), ctx);
    await unmount(deps.runner, holder, ctx);
  }
  // Anything else still mounted there is not ours: left alone, and so is the directory.
  if ((await findMountAt(deps.runner, holder, ctx)) === undefined) await removeTarget(holder);
}
