// Kata Containers volumes (kataContainers: "true", issue 26) in the node service. Staging formats
// and mounts the volume as usual, then creates the Kata image file in its root (kata/: MBR, DAX
// info block, a filesystem of the requested type at 2 MiB) and binds that filesystem to a loop
// device. Kata's runtime recognises such a mount by its loop device's backing file and hands the
// file to its VM as an NVDIMM, where the guest mounts it with DAX. runc containers get the same
// filesystem through the loop device, mounted at the target WITHOUT dax: loop devices do not
// support DAX, and a mount that claimed it would lie. Every step is idempotent, so a node killed
// between any two of them recovers when the kubelet retries: a complete image is kept (it may hold
// data), a partial one rebuilt, a lost loop device (restart, reboot) attached again at publish.
// Unstaging detaches the loop devices before the volume's filesystem is unmounted.
import type { CallContext } from '@pmem-csi/runtime';
import { AlreadyExistsError, InvalidArgumentError, type FsType } from '@pmem-csi/csi';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { attachImage, createImageFile, detachImage, imagePath } from '../kata/image-file.js';
import { probeDevice } from '../mount/filesystem.js';
import { findMountAt, type MountEntry } from '../mount/findmnt.js';
import { mountFilesystem, unmount } from '../mount/mount.js';
import { filesystemMountOptions } from '../mount/mount-options.js';
import { checkTargetIsFree } from '../mount/paths.js';
import { ensureDirectory } from '../mount/targets.js';
import type { NodeServiceDeps } from '../volumes/deps.js';
import { isMountOf, isReadOnlyMount, occupiedMessage } from './format-mount.js';
import { checkTargetLimit } from './publications.js';
import type { AccessMode } from './access-request.js';

const FLAGS_FIELD = 'volume_capability.mount.mount_flags';

/** INVALID_ARGUMENT for a raw block request on a Kata volume: a block device cannot reach a Kata VM with DAX. */
export function kataBlockRefused(volumeId: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `volume_capability: volume ${volumeId} has kataContainers "true", which needs a filesystem (the Kata image file lives in it); raw block access is not possible, use a mount capability`,
  );
}

/** After staging: the image file in the staged filesystem (created when missing) and its loop device. */
export async function stageKataImage(
  deps: NodeServiceDeps,
  s: { volumeId: string; staging: string; fsType: FsType },
  ctx: CallContext,
): Promise<void> {
  const img = await createImageFile(
    deps.runner,
    {
      volumeId: s.volumeId,
      dir: s.staging,
      fsType: s.fsType,
      afterHeader: () => deps.hooks?.reached('kata:image-partial', s.volumeId),
    },
    ctx,
  );
  if (img.created) deps.hooks?.reached('kata:after-image', s.volumeId);
  const loop = await attachImage(deps.runner, img.path, ctx);
  ctx.log.info(img.created ? 'Kata Containers image file created' : 'Kata Containers image file found', {
    volumeId: s.volumeId,
    image: img.path,
    imageBytes: img.sizeBytes,
    filesystemBytes: img.dataBytes,
    loopDevice: loop,
  });
}

/** Before unstaging: detach the loop devices of the image (only when the staging path holds this volume). */
export async function unstageKataImage(
  deps: NodeServiceDeps,
  s: { volumeId: string; staging: string; device: PmemDeviceInfo },
  ctx: CallContext,
): Promise<void> {
  const staged = await findMountAt(deps.runner, s.staging, ctx);
  if (staged === undefined || !(await isMountOf(staged, s.device))) return;
  const detached = await detachImage(deps.runner, imagePath(s.staging), ctx);
  if (detached.length > 0)
    ctx.log.info('Kata Containers image detached', { volumeId: s.volumeId, loopDevices: detached });
}

export interface KataPublish {
  readonly volumeId: string;
  readonly device: PmemDeviceInfo;
  readonly staging: string;
  readonly target: string;
  readonly fsType: FsType;
  readonly flags: readonly string[];
  readonly readonly: boolean;
  readonly mode: AccessMode;
}

/** The image's loop device as a device of its own: what the target mounts (never DAX). */
async function innerDevice(deps: NodeServiceDeps, p: KataPublish, ctx: CallContext): Promise<PmemDeviceInfo> {
  // Normally staging made it; a node killed between the staging mount and the image makes it now.
  const img = await createImageFile(deps.runner, { volumeId: p.volumeId, dir: p.staging, fsType: p.fsType }, ctx);
  if (img.created)
    ctx.log.warn('Kata Containers image file was missing after staging; created it', { volumeId: p.volumeId });
  const path = await attachImage(deps.runner, img.path, ctx);
  return { ...p.device, path, size: img.dataBytes, dax: false };
}

/** INVALID_ARGUMENT for a dax mount flag: the runc side has no DAX, and a mount must never claim it. */
function refuseDaxFlags(p: KataPublish): void {
  const dax = p.flags.find((f) => /^dax(=|$)/.test(f) && f !== 'dax=never');
  if (dax !== undefined)
    throw new InvalidArgumentError(
      `${FLAGS_FIELD} asks for ${JSON.stringify(dax)}, but volume ${p.volumeId} has kataContainers "true": runc containers reach its filesystem through a loop device, which has no DAX (a Kata VM gets DAX from the image file itself); remove the option`,
    );
}

/** An existing mount at the target: the same publication (OK) or ALREADY_EXISTS naming the difference. */
async function checkExisting(existing: MountEntry, inner: PmemDeviceInfo, p: KataPublish): Promise<void> {
  if (!(await isMountOf(existing, inner)))
    throw new AlreadyExistsError(occupiedMessage('target_path', p.target, existing, p.volumeId));
  const ro = isReadOnlyMount(existing);
  if (ro !== p.readonly)
    throw new AlreadyExistsError(
      `volume ${p.volumeId} is already published at ${p.target} ${ro ? 'read-only' : 'read-write'}; the request asks for ${p.readonly ? 'read-only' : 'read-write'}`,
    );
}

/**
 * Mount the loop device at the target. Every target mounts the one loop device, so they share its
 * superblock: mounted read-write (a read-only superblock would refuse a later read-write target,
 * and a read-only mount of a device mounted read-write fails), read-only targets made so per mount
 * by a remount — never left writable when that fails.
 */
async function mountInner(
  deps: NodeServiceDeps,
  inner: PmemDeviceInfo,
  p: KataPublish,
  ctx: CallContext,
): Promise<void> {
  const options = filesystemMountOptions(p.flags, false, FLAGS_FIELD);
  const readonly = p.readonly || options.includes('ro');
  const rw = options.filter((o) => o !== 'ro');
  await mountFilesystem(deps.runner, { source: inner.path, target: p.target, fsType: p.fsType, options: rw }, ctx);
  if (!readonly) return;
  try {
    await deps.runner.run('mount', ['-o', 'remount,bind,ro', p.target], { signal: ctx.signal });
  } catch (e) {
    await unmount(deps.runner, p.target).catch(() => undefined);
    throw e;
  }
}

/** Publish the filesystem inside the image at the target (mounted from the loop device, without dax). */
export async function publishKataFilesystem(deps: NodeServiceDeps, p: KataPublish, ctx: CallContext): Promise<void> {
  refuseDaxFlags(p);
  const inner = await innerDevice(deps, p, ctx);
  const existing = await findMountAt(deps.runner, p.target, ctx);
  if (existing !== undefined) return checkExisting(existing, inner, p);
  const found = await probeDevice(deps.runner, inner.path, ctx);
  if (found?.type !== p.fsType)
    throw new AlreadyExistsError(
      `volume ${p.volumeId}: its Kata Containers image holds ${found?.type ?? 'no'} filesystem; the request asks for ${p.fsType} (volume_capability.mount.fs_type)`,
    );
  await checkTargetLimit(deps, { ...p, device: inner, block: false, notPublications: [] }, ctx);
  await checkTargetIsFree(p.target, 'target_path', 'directory');
  await ensureDirectory(p.target, 'target_path');
  await mountInner(deps, inner, p, ctx);
  ctx.log.info('Kata Containers volume published for a runc container through a loop device, without DAX', {
    volumeId: p.volumeId,
    targetPath: p.target,
    loopDevice: inner.path,
    reason: 'loop devices do not support DAX; a Kata VM maps the image file with DAX itself',
  });
}
