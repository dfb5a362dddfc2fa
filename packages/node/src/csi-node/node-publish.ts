// NodePublishVolume / NodeUnpublishVolume of persistent volumes: a bind mount of the staging mount
// onto the pod's target directory, or of the raw device onto a target FILE for block volumes;
// read-only on request or when the access mode is SINGLE_NODE_READER_ONLY (a bind mount needs a
// remount for that). The access mode also limits the number of targets (publications.ts:
// SINGLE_NODE_SINGLE_WRITER publishes at one target per node). Ephemeral inline volumes branch off
// to node-ephemeral.ts. Unpublish unmounts, removes the target we created, and deletes an ephemeral
// volume. Idempotent both ways: published the same way → OK; missing target → OK. Targets must be
// absolute and no system directory (co-paths.ts); publish refuses a target that already holds other
// content, and unpublish never unmounts what is not this volume.
import { isEphemeralVolumeContext } from '@pmem-csi/api';
import type { CallContext } from '@pmem-csi/runtime';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { findMountAt } from '../mount/findmnt.js';
import { bindMount } from '../mount/mount.js';
import { absolutePath, checkTargetIsFree, samePathText } from '../mount/paths.js';
import { ensureDirectory, ensureFile, removeTarget, sameBlockDevice } from '../mount/targets.js';
import { accessRequest, type AccessMode } from './access-request.js';
import { coPath, unmountVolumeAt } from './co-paths.js';
import type { NodeServiceDeps } from '../volumes/deps.js';
import { isMountOf, isReadOnlyMount, occupiedMessage } from './format-mount.js';
import { publishEphemeralVolume } from './node-ephemeral.js';
import { checkTargetLimit, readOnlyByMode } from './publications.js';
import {
  requireField,
  AlreadyExistsError,
  FailedPreconditionError,
  InvalidArgumentError,
  type FsType,
  type csi,
} from '@pmem-csi/csi';
import {
  deleteVolume,
  ephemeralVolumeId,
  findDevice,
  isKataVolume,
  localVolumeId,
  parametersOf,
  requireDevice,
} from '../volumes/volumes.js';
import { unpublishKataEphemeral } from './kata-ephemeral.js';
import { kataBlockRefused, publishKataFilesystem } from './kata-volume.js';

interface PublishTarget {
  readonly volumeId: string;
  readonly device: PmemDeviceInfo;
  readonly target: string;
  readonly readonly: boolean;
  readonly mode: AccessMode;
}

function mode(readonly: boolean): string {
  return readonly ? 'read-only' : 'read-write';
}

async function publishFilesystem(
  deps: NodeServiceDeps,
  p: PublishTarget & { staging: string },
  ctx: CallContext,
): Promise<void> {
  const staged = await findMountAt(deps.runner, p.staging, ctx);
  if (staged === undefined || !(await isMountOf(staged, p.device))) {
    throw new FailedPreconditionError(`volume ${p.volumeId} is not staged at ${p.staging}: call NodeStageVolume first`);
  }
  const existing = await findMountAt(deps.runner, p.target, ctx);
  if (existing !== undefined) {
    if (!(await isMountOf(existing, p.device)))
      throw new AlreadyExistsError(occupiedMessage('target_path', p.target, existing, p.volumeId));
    if (isReadOnlyMount(existing) !== p.readonly) {
      throw new AlreadyExistsError(
        `volume ${p.volumeId} is already published at ${p.target} ${mode(isReadOnlyMount(existing))}; the request asks for ${mode(p.readonly)}`,
      );
    }
    return;
  }
  await checkTargetLimit(deps, { ...p, block: false, notPublications: [p.staging] }, ctx);
  await checkTargetIsFree(p.target, 'target_path', 'directory');
  await ensureDirectory(p.target, 'target_path');
  await bindMount(deps.runner, { source: p.staging, target: p.target, readonly: p.readonly }, ctx);
}

/** A Kata volume: staged like any other, then its image's filesystem at the target (kata-volume.ts). */
async function publishKata(
  deps: NodeServiceDeps,
  p: PublishTarget & { staging: string; fsType: FsType; flags: readonly string[] },
  ctx: CallContext,
): Promise<void> {
  const staged = await findMountAt(deps.runner, p.staging, ctx);
  if (staged === undefined || !(await isMountOf(staged, p.device))) {
    throw new FailedPreconditionError(`volume ${p.volumeId} is not staged at ${p.staging}: call NodeStageVolume first`);
  }
  await publishKataFilesystem(deps, p, ctx);
}

async function publishBlock(deps: NodeServiceDeps, p: PublishTarget, ctx: CallContext): Promise<void> {
  const existing = await findMountAt(deps.runner, p.target, ctx);
  if (existing !== undefined) {
    // The source of a bound device node reads "devtmpfs[/loop3]": compare device numbers instead.
    if (!(await sameBlockDevice(p.target, p.device.path)))
      throw new AlreadyExistsError(occupiedMessage('target_path', p.target, existing, p.volumeId));
    if (isReadOnlyMount(existing) !== p.readonly) {
      throw new AlreadyExistsError(
        `block volume ${p.volumeId} is already published at ${p.target} ${mode(isReadOnlyMount(existing))}; the request asks for ${mode(p.readonly)}`,
      );
    }
    return;
  }
  await checkTargetLimit(deps, { ...p, block: true, notPublications: [] }, ctx);
  await checkTargetIsFree(p.target, 'target_path', 'file');
  await ensureFile(p.target, 'target_path');
  await bindMount(deps.runner, { source: p.device.path, target: p.target, readonly: p.readonly }, ctx);
}

/** NodePublishVolume. */
export async function publishVolumeRpc(
  deps: NodeServiceDeps,
  req: csi.NodePublishVolumeRequest__Output,
  ctx: CallContext,
): Promise<csi.NodePublishVolumeResponse> {
  const volumeId = requireField(req.volume_id, 'volume_id');
  const target = await coPath(deps, req.target_path, 'target_path');
  const access = accessRequest(req.volume_capability);
  if (isEphemeralVolumeContext(req.volume_context)) return publishEphemeralVolume(deps, { req, access, target }, ctx);
  // Only a bind source, and only once it is a mount of this volume's device (publishFilesystem).
  const staging = absolutePath(req.staging_target_path, 'staging_target_path');
  if (samePathText(target, staging))
    throw new InvalidArgumentError(
      `target_path ${target} is the staging_target_path; a volume is published at a path of its own`,
    );
  if (access.kind === 'block' && target.endsWith('/'))
    throw new InvalidArgumentError(
      `target_path ${target} ends in "/": a raw block volume is published on a file, not in a directory`,
    );
  return deps.locks.withLocks([volumeId], 'volume', async () => {
    const device = await requireDevice(deps, volumeId, ctx.signal);
    const readonly = req.readonly || readOnlyByMode(access.mode);
    const p = { volumeId, device, target, readonly, mode: access.mode };
    const kata = await isKataVolume(deps, volumeId);
    if (access.kind === 'block') {
      if (kata) throw kataBlockRefused(volumeId);
      await publishBlock(deps, p, ctx);
    } else if (kata) await publishKata(deps, { ...p, staging, fsType: access.fsType, flags: access.flags }, ctx);
    else await publishFilesystem(deps, { ...p, staging }, ctx);
    ctx.log.info('volume published', {
      volumeId,
      targetPath: target,
      access: access.kind,
      accessMode: access.mode,
      readonly,
    });
    return {};
  });
}

/** NodeUnpublishVolume: unmount, remove the target, delete an ephemeral volume. */
export async function unpublishVolumeRpc(
  deps: NodeServiceDeps,
  req: csi.NodeUnpublishVolumeRequest__Output,
  ctx: CallContext,
): Promise<csi.NodeUnpublishVolumeResponse> {
  const volumeId = requireField(req.volume_id, 'volume_id');
  const target = await coPath(deps, req.target_path, 'target_path');
  return deps.locks.withLocks([volumeId, ephemeralVolumeId(volumeId)], 'volume', async () => {
    const local = await localVolumeId(deps, volumeId);
    const device = await findDevice(deps.dm, local, ctx.signal);
    await unmountVolumeAt(deps, { path: target, field: 'target_path', volumeId, device }, ctx);
    await removeTarget(target);
    const record = await deps.state.get(local);
    if (record?.ephemeral !== true) return {};
    if (parametersOf(record, deps.log).kataContainers)
      await unpublishKataEphemeral(deps, { volumeId: local, device, target }, ctx);
    await deleteVolume(deps, local, { ephemeral: true, signal: ctx.signal });
    return {};
  });
}
