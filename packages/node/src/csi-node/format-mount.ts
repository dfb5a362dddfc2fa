// The filesystem half of NodeStageVolume and of ephemeral NodePublishVolume: make sure the device
// holds a filesystem of the requested type (mkfs only when it holds nothing at all, so data is
// never formatted away), mount it with dax when the device and the volume's usage allow, and set
// the xfs extent size hint on a fresh xfs. An existing ext4 that is smaller than its device (the
// volume was expanded while no pod used it) is grown before it is mounted: offline growth needs no
// CAP_SYS_RESOURCE, so the NodeExpandVolume the kubelet sends right after staging finds nothing
// left to do even where the node lacks that capability. Also the checks shared by stage and
// publish: is this mount the volume's device, and is it read-only.
import { parseVolumeParameters, type VolumeUsage } from '@pmem-csi/api';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { type FsType, AlreadyExistsError, errorMessage, InternalError } from '@pmem-csi/csi';
import {
  checkFilesystemFits,
  growExt4Offline,
  makeFilesystem,
  probeDevice,
  setXfsExtentSize,
} from '../mount/filesystem.js';
import { isWholeFilesystem, sourceDevice, type MountEntry } from '../mount/findmnt.js';
import { mountFilesystem, unmount } from '../mount/mount.js';
import { filesystemMountOptions } from '../mount/mount-options.js';
import { ensureDirectory, sameBlockDevice } from '../mount/targets.js';
import type { NodeServiceDeps } from '../volumes/deps.js';
import { parametersOf } from '../volumes/volumes.js';

export interface FilesystemMount {
  readonly volumeId: string;
  readonly device: PmemDeviceInfo;
  readonly fsType: FsType;
  readonly flags: readonly string[];
  readonly usage: VolumeUsage;
  readonly target: string;
  /** Mount read-only (ephemeral volumes published readonly). */
  readonly readonly?: boolean;
}

const FLAGS_FIELD = 'volume_capability.mount.mount_flags';

/** Whether `entry` mounts the root of `device`'s filesystem. */
export async function isMountOf(entry: MountEntry, device: PmemDeviceInfo): Promise<boolean> {
  const source = sourceDevice(entry.source);
  return source !== undefined && isWholeFilesystem(entry) && (await sameBlockDevice(source, device.path));
}

/** Whether this mount (not just its filesystem) is read-only. */
export function isReadOnlyMount(entry: MountEntry): boolean {
  return entry.vfsOptions.includes('ro') || (entry.vfsOptions.length === 0 && entry.options.includes('ro'));
}

/** The usage (AppDirect/FileIO) of a volume: from its record, else from the volume context. */
export async function volumeUsage(
  deps: NodeServiceDeps,
  volumeId: string,
  context: Readonly<Record<string, string>>,
): Promise<VolumeUsage> {
  const record = await deps.state.get(volumeId);
  if (record !== undefined) return parametersOf(record, deps.log).usage;
  const parsed = parseVolumeParameters(context, 'volumeContext');
  return parsed.ok ? parsed.value.usage : 'AppDirect';
}

async function ensureFilesystem(deps: NodeServiceDeps, m: FilesystemMount, signal?: AbortSignal): Promise<boolean> {
  const found = await probeDevice(deps.runner, m.device.path, { signal });
  if (found === undefined) {
    await makeFilesystem(
      deps.runner,
      { fsType: m.fsType, device: m.device.path, sizeBytes: m.device.size },
      { signal },
    );
    deps.log.info('filesystem created', { volumeId: m.volumeId, device: m.device.path, fsType: m.fsType });
    return true;
  }
  if (found.type === m.fsType) return false;
  const what =
    found.type !== undefined ? `a ${found.type} filesystem` : `a ${found.ptType ?? 'unknown'} partition table`;
  throw new AlreadyExistsError(
    `volume ${m.volumeId}: device ${m.device.path} already holds ${what}; the request asks for ${m.fsType} (volume_capability.mount.fs_type)`,
  );
}

/**
 * Grow an existing ext4 to its device before mounting it read-write. Best effort: when the check or
 * the growth fails (e.g. e2fsck finds errors it may not fix unattended), the volume is mounted as it
 * is and NodeExpandVolume reports the problem; the filesystem is never left unmountable by it.
 */
async function growBeforeMount(deps: NodeServiceDeps, m: FilesystemMount, signal?: AbortSignal): Promise<void> {
  try {
    if (await growExt4Offline(deps.runner, { device: m.device.path, sizeBytes: m.device.size }, { signal }))
      deps.log.info('filesystem grown to its device before mounting', {
        volumeId: m.volumeId,
        device: m.device.path,
        size: m.device.size,
      });
  } catch (e) {
    if (signal?.aborted) throw e;
    deps.log.warn('could not grow the ext4 filesystem before mounting; mounting it as it is', {
      volumeId: m.volumeId,
      device: m.device.path,
      error: errorMessage(e),
    });
  }
}

/** Create the filesystem when the device is blank (grow an ext4 smaller than its device), then mount it at `m.target`. */
export async function formatAndMount(deps: NodeServiceDeps, m: FilesystemMount, signal?: AbortSignal): Promise<void> {
  checkFilesystemFits(m.fsType, m.device.size, m.volumeId);
  const dax = m.device.dax && m.usage !== 'FileIO';
  const options = filesystemMountOptions(m.flags, dax, FLAGS_FIELD);
  if (m.readonly === true && !options.includes('ro')) options.push('ro');
  const fresh = await ensureFilesystem(deps, m, signal);
  if (!fresh && m.fsType === 'ext4' && !options.includes('ro')) await growBeforeMount(deps, m, signal);
  await ensureDirectory(m.target);
  await mountFilesystem(
    deps.runner,
    { source: m.device.path, target: m.target, fsType: m.fsType, options },
    { signal },
  );
  if (!fresh || m.fsType !== 'xfs' || options.includes('ro')) return;
  try {
    await setXfsExtentSize(deps.runner, m.target, { signal });
  } catch (e) {
    await unmount(deps.runner, m.target).catch(() => undefined);
    throw new InternalError(`volume ${m.volumeId}: setting the xfs extent size failed: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

/** The message of an AlreadyExists for a path that holds another mount. */
export function occupiedMessage(field: string, path: string, entry: MountEntry, volumeId: string): string {
  return `${field} ${path} already has ${entry.source} (${entry.fstype}) mounted, which is not volume ${volumeId}`;
}
