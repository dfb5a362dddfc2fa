// CSI ephemeral inline volumes: the pod spec carries size/eraseafter/usage as volume attributes and
// the kubelet calls only NodePublishVolume/NodeUnpublishVolume, so the volume is created, formatted
// and mounted straight at the target here (no staging), for the kubelet's volume handle, and its
// record is marked ephemeral (NodeUnpublish deletes it; ListVolumes does not show it). Device and
// record are kept under ephemeralVolumeId(handle): the kubelet's handle is too long for direct mode. A failed
// publish removes what it created, so a pod that never starts leaks nothing. The access mode rules of
// persistent volumes apply (publications.ts): one target for SINGLE_NODE_SINGLE_WRITER, read-only
// for SINGLE_NODE_READER_ONLY. With kataContainers: "true" the volume is mounted next to the target
// and its Kata image file's filesystem at the target (kata-ephemeral.ts).
import type { CallContext } from '@pmem-csi/runtime';
import { findMountAt } from '../mount/findmnt.js';
import { unmountAll } from '../mount/mount.js';
import { checkTargetIsFree } from '../mount/paths.js';
import type { AccessRequest } from './access-request.js';
import type { NodeServiceDeps } from '../volumes/deps.js';
import { formatAndMount, isMountOf, occupiedMessage } from './format-mount.js';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { isKataImageMount } from '../kata/volume-mounts.js';
import { publishKataEphemeral, unpublishKataEphemeral } from './kata-ephemeral.js';
import { checkTargetLimit, readOnlyByMode } from './publications.js';
import {
  checkParameters,
  volumeName,
  AlreadyExistsError,
  errorMessage,
  InvalidArgumentError,
  type csi,
} from '@pmem-csi/csi';
import {
  createOrFindVolume,
  deleteVolume,
  ephemeralVolumeId,
  findDevice,
  type VolumeSpec,
} from '../volumes/volumes.js';

export interface EphemeralPublish {
  readonly req: csi.NodePublishVolumeRequest__Output;
  readonly access: AccessRequest;
  readonly target: string;
}

/** NodePublishVolume of an ephemeral inline volume (volume_id and target_path already checked: absolute, no system directory). */
export async function publishEphemeralVolume(
  deps: NodeServiceDeps,
  p: EphemeralPublish,
  ctx: CallContext,
): Promise<csi.NodePublishVolumeResponse> {
  const { req, access, target } = p;
  if (access.kind !== 'mount')
    throw new InvalidArgumentError(
      'volume_capability must be a mount capability: ephemeral inline volumes are filesystems',
    );
  volumeName(req.volume_id, 'volume_id'); // the handle names the volume: its id must suit every device mode
  const params = checkParameters(req.volume_context, 'ephemeral');
  const size = params.size ?? 0;
  const spec: VolumeSpec = {
    volumeId: ephemeralVolumeId(req.volume_id),
    name: req.volume_id,
    size,
    range: { required: size, limit: 0 },
    params,
    ephemeral: true,
  };
  // Both ids: NodeUnpublishVolume locks the handle and the id it maps to.
  return deps.locks.withLocks([req.volume_id, spec.volumeId], 'volume', async () => {
    const existing = await findMountAt(deps.runner, target, ctx);
    if (existing !== undefined) {
      const device = await findDevice(deps.dm, spec.volumeId, ctx.signal);
      if (device === undefined || !((await isMountOf(existing, device)) || (await isKataImageMount(existing, device))))
        throw new AlreadyExistsError(occupiedMessage('target_path', target, existing, spec.volumeId));
      return {};
    }
    const known = await findDevice(deps.dm, spec.volumeId, ctx.signal);
    if (known !== undefined) {
      const publication = { volumeId: spec.volumeId, device: known, block: false, target, mode: access.mode };
      await checkTargetLimit(deps, { ...publication, notPublications: [] }, ctx);
    }
    await checkTargetIsFree(target, 'target_path', 'directory');
    const volume = await createOrFindVolume(deps, spec, ctx.signal);
    const mount = {
      volumeId: spec.volumeId,
      device: volume.device,
      fsType: access.fsType,
      flags: access.flags,
      usage: params.usage,
      target,
      readonly: req.readonly || readOnlyByMode(access.mode),
    };
    try {
      if (params.kataContainers) await publishKataEphemeral(deps, { ...mount, mode: access.mode }, ctx);
      else await formatAndMount(deps, mount, ctx.signal);
    } catch (e) {
      if (volume.created)
        await rollBack(
          deps,
          { volumeId: spec.volumeId, device: volume.device, target, kata: params.kataContainers },
          ctx,
        );
      throw e;
    }
    ctx.log.info('ephemeral volume published', {
      volumeId: spec.volumeId,
      handle: req.volume_id,
      targetPath: target,
      device: volume.device.path,
      size: volume.device.size,
    });
    return {};
  });
}

async function rollBack(
  deps: NodeServiceDeps,
  v: { volumeId: string; device: PmemDeviceInfo; target: string; kata: boolean },
  ctx: CallContext,
): Promise<void> {
  const { volumeId, target } = v;
  try {
    await unmountAll(deps.runner, target);
    if (v.kata) await unpublishKataEphemeral(deps, v, ctx);
    await deleteVolume(deps, volumeId, { ephemeral: true });
  } catch (e) {
    deps.log.error('could not remove the ephemeral volume of a failed publish; NodeUnpublishVolume will retry', {
      volumeId,
      error: errorMessage(e),
    });
  }
}
