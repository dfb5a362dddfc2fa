// Erasing a device before it is removed, shared by every device mode that owns real block devices
// (lvm, direct, emulated). As the Go driver did: first make sure nobody uses the device (the kernel
// refuses O_EXCL on a block device that is mounted or claimed, so "busy" is detected without
// parsing /proc/mounts), then overwrite it with zeros through the command runner's dd — all of it
// (`eraseafter=true`), or only its first 4 KiB so no filesystem signature survives.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { CommandRunner } from '@pmem-csi/runtime';
import { MiB, FailedPreconditionError } from '@pmem-csi/csi';
import { DeviceInUseError } from './device-manager.js';

/** Bytes zeroed when the caller does not ask for a full erase (kills filesystem signatures). */
export const HEAD_ERASE_BYTES = 4096;

/**
 * Time budget of a full erase: one minute plus 10 MiB/s — far below PMEM or page-cache speed, so
 * only a hung dd hits it (loop devices on a slow host disk included); the caller's signal still
 * applies.
 */
export function eraseTimeoutMs(bytes: number): number {
  return 60_000 + Math.ceil(bytes / (10 * MiB)) * 1000;
}

/** The errno code of a Node.js system error (checked structurally: errors may come from another realm). */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}

/**
 * Open `path` exclusively and keep it open: nobody can mount or claim the device while the handle
 * is held. EBUSY (mounted, or open exclusively elsewhere) → DeviceInUseError; a missing device node
 * → FailedPreconditionError (there is nothing that could be erased).
 */
export async function claimExclusive(path: string, volumeId: string): Promise<FileHandle> {
  try {
    return await open(path, constants.O_RDONLY | constants.O_EXCL);
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'EBUSY')
      throw new DeviceInUseError(`device ${path} of volume ${JSON.stringify(volumeId)} is in use (mounted or open)`, {
        cause: e,
      });
    if (code === 'ENOENT')
      throw new FailedPreconditionError(
        `device node ${path} of volume ${JSON.stringify(volumeId)} does not exist, cannot erase it`,
      );
    throw e;
  }
}

/** Block-device access besides the host tools (injectable for tests). */
export interface BlockDeviceAccess {
  /** Resolves when nobody holds `path` open; DeviceInUseError when it is mounted or open elsewhere. */
  assertNotInUse(path: string, volumeId: string): Promise<void>;
}

/** The real host: claim the device exclusively for a moment. */
export const hostBlockDevices: BlockDeviceAccess = {
  async assertNotInUse(path: string, volumeId: string): Promise<void> {
    const handle = await claimExclusive(path, volumeId);
    await handle.close();
  },
};

/** Whether a device access probe says "unused" (for the label-initialization safety check). */
export async function isUnused(devices: BlockDeviceAccess, path: string): Promise<boolean> {
  try {
    await devices.assertNotInUse(path, '-');
    return true;
  } catch (e) {
    if (e instanceof DeviceInUseError) return false;
    throw e;
  }
}

/**
 * Overwrite the first `bytes` of a device with zeros (default: HEAD_ERASE_BYTES), flushed to the
 * medium. `iflag=count_bytes` gives the exact size with 1 MiB blocks and never writes past the end
 * of the device (dd would fail there with ENOSPC).
 */
export async function zeroDevice(
  runner: CommandRunner,
  target: { path: string; bytes?: number },
  signal?: AbortSignal,
): Promise<void> {
  const bytes = target.bytes ?? HEAD_ERASE_BYTES;
  const args =
    bytes === HEAD_ERASE_BYTES
      ? [`bs=${HEAD_ERASE_BYTES}`, 'count=1']
      : ['bs=1M', `count=${bytes}`, 'iflag=count_bytes'];
  await runner.run('dd', ['if=/dev/zero', `of=${target.path}`, ...args, 'oflag=direct', 'conv=fsync'], {
    signal,
    timeoutMs: eraseTimeoutMs(bytes),
  });
}
