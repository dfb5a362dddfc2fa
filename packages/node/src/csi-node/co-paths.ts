// The paths the CO hands the node service (staging_target_path, target_path), judged once for every
// RPC that mounts on them or unmounts from them: absolute (CSI), not a system directory or the
// driver's own state (also through symbolic links), and unmounted only when what is mounted there is
// the request's volume — NodeUnpublishVolume for volume A never unmounts volume B or a host mount.
import type { CallContext } from '@pmem-csi/runtime';
import { FailedPreconditionError, InternalError } from '@pmem-csi/csi';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { findMountAt, type MountEntry } from '../mount/findmnt.js';
import { unmount } from '../mount/mount.js';
import { absolutePath, checkNotSystemPath } from '../mount/paths.js';
import { sameBlockDevice } from '../mount/targets.js';
import type { NodeServiceDeps } from '../volumes/deps.js';
import { isMountOf } from './format-mount.js';
import { isKataImageMount } from '../kata/volume-mounts.js';

/** Directories of the driver itself that no volume may be mounted on (the volume records). */
function driverDirectories(deps: Pick<NodeServiceDeps, 'state'>): string[] {
  return [deps.state.dir];
}

/**
 * A required CO path field: absolute, not a system directory, not the driver's state.
 * @throws InvalidArgumentError naming `field`
 */
export async function coPath(deps: Pick<NodeServiceDeps, 'state'>, value: string, field: string): Promise<string> {
  const path = absolutePath(value, field);
  await checkNotSystemPath(path, field, driverDirectories(deps));
  return path;
}

/**
 * Whether the mount at `path` shows `device`: its filesystem (staging, bind of it), the device node
 * itself (raw block bind), or the filesystem inside its Kata image file (a loop device, issue 26).
 */
export async function mountShowsDevice(entry: MountEntry, path: string, device: PmemDeviceInfo): Promise<boolean> {
  return (
    (await isMountOf(entry, device)) ||
    (await sameBlockDevice(path, device.path)) ||
    (await isKataImageMount(entry, device))
  );
}

export interface UnmountTarget {
  readonly path: string;
  readonly field: string;
  readonly volumeId: string;
  /** The volume's device; undefined when the volume does not exist here (then nothing mounted is ours). */
  readonly device: PmemDeviceInfo | undefined;
}

/**
 * Unmount every mount of the volume stacked at `t.path`; returns how many were removed (0: nothing
 * was mounted). @throws FailedPreconditionError when something else is mounted there
 */
export async function unmountVolumeAt(
  deps: Pick<NodeServiceDeps, 'runner'>,
  t: UnmountTarget,
  ctx: Pick<CallContext, 'signal'>,
): Promise<number> {
  let count = 0;
  // A bounded loop: a path cannot carry more stacked mounts than this in practice.
  for (let i = 0; i < 16; i++) {
    const entry = await findMountAt(deps.runner, t.path, ctx);
    if (entry === undefined) return count;
    if (t.device === undefined || !(await mountShowsDevice(entry, t.path, t.device))) {
      const whose =
        t.device === undefined ? `volume ${t.volumeId} does not exist on this node` : `it is not volume ${t.volumeId}`;
      throw new FailedPreconditionError(
        `${t.field} ${t.path} has ${entry.source} (${entry.fstype}) mounted and ${whose}; refusing to unmount it`,
      );
    }
    await unmount(deps.runner, t.path, ctx);
    count++;
  }
  throw new InternalError(`${t.path}: still mounted after ${count} unmounts`);
}
