// Erasing a device before it is removed, as the Go driver did: first claim it exclusively (the
// kernel refuses O_EXCL on a block device that is mounted or claimed, so "busy" is detected
// without parsing /proc/mounts), then overwrite it with zeros through the command runner's dd.
// The exclusive handle is held during the erase so nobody can mount the device meanwhile.
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { CommandRunner } from '@pmem-csi/runtime';
import { DeviceInUseError } from './device-manager.js';

const MiB = 1024 * 1024;
/** Bytes zeroed when the caller does not ask for a full erase (kills filesystem signatures). */
export const HEAD_ERASE_BYTES = 4096;
/** Generous floor for slow disks: 10 MiB/s plus one minute. */
const ERASE_BYTES_PER_MS = (10 * MiB) / 1000;

/** Open `device` exclusively; EBUSY (mounted, or claimed by someone else) → DeviceInUseError. */
export async function claimExclusive(device: string, volumeId: string): Promise<FileHandle> {
  try {
    return await open(device, constants.O_RDONLY | constants.O_EXCL);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EBUSY') {
      throw new DeviceInUseError(`device ${device} of volume ${JSON.stringify(volumeId)} is in use (mounted or open exclusively)`, { cause: e });
    }
    throw e;
  }
}

/** dd arguments that overwrite the first `bytes` of `device` with zeros, flushed to the medium. */
export function zeroArgs(device: string, bytes: number): string[] {
  // 1 MiB blocks when the size allows it (every size we allocate does); 512-byte sectors otherwise,
  // so dd never runs past the end of the device (which it reports as a failure).
  const bs = bytes % MiB === 0 ? MiB : 512;
  return ['if=/dev/zero', `of=${device}`, `bs=${bs}`, `count=${Math.floor(bytes / bs)}`, 'oflag=direct', 'conv=fsync', 'status=none'];
}

/** Overwrite the first `bytes` of `device` with zeros. */
export async function zeroDevice(runner: CommandRunner, device: string, bytes: number, signal?: AbortSignal): Promise<void> {
  await runner.run('dd', zeroArgs(device, bytes), { signal, timeoutMs: 60_000 + Math.ceil(bytes / ERASE_BYTES_PER_MS) });
}
