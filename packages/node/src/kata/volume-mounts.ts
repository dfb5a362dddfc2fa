// Which mounts belong to a Kata Containers volume: its filesystem inside the image file, mounted
// through a loop device (runc-side publications). Such a mount's source is /dev/loopN, not the
// volume's device, so the checks that a path holds "this volume" (unpublish, stats, the access-mode
// limit) accept it when the loop device's backing file is the volume's image file: named
// IMAGE_FILE_NAME and stored on the filesystem of the volume's device (its st_dev is the device's
// rdev). Another volume's image, or any other loop device, never matches.
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { PmemDeviceInfo } from '../device/device-manager.js';
import { isWholeFilesystem, sourceDevice, type MountEntry } from '../mount/findmnt.js';
import { IMAGE_FILE_NAME } from './layout.js';

const LOOP = /^\/dev\/(loop\d+)$/;

/** The backing file of loop device `device` (/dev/loopN) as sysfs shows it; undefined when none or no loop device. */
export async function loopBackingFile(device: string, sysBlock = '/sys/block'): Promise<string | undefined> {
  const name = LOOP.exec(device)?.[1];
  if (name === undefined) return undefined;
  try {
    const text = (await readFile(`${sysBlock}/${name}/loop/backing_file`, 'utf8')).trim();
    return text === '' || text.endsWith(' (deleted)') ? undefined : text;
  } catch {
    return undefined; // not attached (any more)
  }
}

/** Whether loop device `loop` is bound to a Kata image file on the filesystem of `device`. */
export async function isImageLoopOf(loop: string, device: PmemDeviceInfo): Promise<boolean> {
  const backing = await loopBackingFile(loop);
  if (backing === undefined || basename(backing) !== IMAGE_FILE_NAME) return false;
  try {
    const [file, dev] = await Promise.all([stat(backing), stat(device.path)]);
    return dev.isBlockDevice() && file.dev === dev.rdev;
  } catch {
    return false;
  }
}

/** Whether `entry` mounts the filesystem inside the Kata image file of `device` (through a loop device). */
export async function isKataImageMount(entry: MountEntry, device: PmemDeviceInfo): Promise<boolean> {
  const source = sourceDevice(entry.source);
  return source !== undefined && isWholeFilesystem(entry) && (await isImageLoopOf(source, device));
}
