// The backing files of the emulated device manager (emulated.ts): their names, writing one so that its
// final name never shows a short file, and the start-up scan that finds the volumes again and clears
// what a crashed create left. Loop devices are emulated.ts's concern; this module only reads the
// loop listing it is given, to tell a file in use from a leftover.
import { link, open, readdir, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@pmem-csi/runtime';
import { InvalidArgumentError } from '@pmem-csi/csi';
import { DeviceExistsError } from './device-manager.js';
import { boundTo, fileIdentity, type LoopDevice } from './emulated-losetup.js';

const SUFFIX = '.img';
/** Scratch name of a backing file being created: `.<volumeId>.img.creating` (never a volume id: ids do not start with a dot). */
const CREATING = '.creating';
/** Volume ids become file names: no path separators, no leading dot or dash, bounded length. */
const SAFE_ID = /^[A-Za-z0-9_+][A-Za-z0-9_.+-]{0,127}$/;

/** The backing file of a volume in `dir`. */
export function backingFile(dir: string, volumeId: string): string {
  return join(dir, `${volumeId}${SUFFIX}`);
}

/** @throws InvalidArgumentError when the volume id cannot be a file name */
export function assertSafeId(volumeId: string): void {
  if (!SAFE_ID.test(volumeId)) {
    throw new InvalidArgumentError(
      `volumeId ${JSON.stringify(volumeId)} is not usable as a backing file name: allowed are 1-128 of A-Z a-z 0-9 _ + . - (not starting with . or -)`,
    );
  }
}

/**
 * Write the sparse backing file of `size` bytes: it gets its size under a scratch name and is then
 * linked under its volume's name (link, unlike rename, refuses an existing name), so that name never
 * shows a file smaller than the volume; the directory entry is made durable.
 * @throws DeviceExistsError when the volume's file already exists
 */
export async function writeBackingFile(dir: string, volumeId: string, size: number): Promise<string> {
  const file = backingFile(dir, volumeId);
  const scratch = join(dir, `.${volumeId}${SUFFIX}${CREATING}`);
  try {
    const fh = await open(scratch, 'w', 0o600);
    try {
      await fh.truncate(size);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await link(scratch, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new DeviceExistsError(`backing file ${file} of volume ${JSON.stringify(volumeId)} already exists`, {
        cause: e,
      });
    }
    throw e;
  } finally {
    await unlink(scratch).catch(() => undefined);
  }
  return file;
}

/** Make the directory's entries (a new link) durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Backing files in `dir` by volume id → size. Files that are not ours by name are left alone; scratch
 * files of creates that a crash interrupted are removed (they never held data: the file is linked
 * under its volume's name only once complete), and so is an empty `<id>.img` that no loop device
 * holds (left by a driver before files were created under a scratch name; an empty file holds no
 * data and is no usable volume).
 */
export async function scanBackingFiles(
  dir: string,
  loops: readonly LoopDevice[],
  log: Logger,
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isFile() && entry.name.startsWith('.') && entry.name.endsWith(SUFFIX + CREATING)) {
      const path = join(dir, entry.name);
      await rm(path, { force: true });
      log.info('removed the scratch file of a create that did not finish', { path });
      continue;
    }
    const id = entry.name.slice(0, -SUFFIX.length);
    if (!entry.isFile() || !entry.name.endsWith(SUFFIX) || !SAFE_ID.test(id)) {
      log.warn('ignoring unexpected entry in the emulated backing directory', { path: join(dir, entry.name) });
      continue;
    }
    const path = join(dir, entry.name);
    const size = (await stat(path)).size;
    if (size === 0 && boundTo(loops, path, await fileIdentity(path)).length === 0) {
      await rm(path, { force: true });
      log.warn('removed an empty backing file (a create that did not finish); its volume has no device', {
        volumeId: id,
        path,
      });
      continue;
    }
    found.set(id, size);
  }
  return found;
}

/** Log loop devices that still hold deleted files of ours; never detach them (they may be in use). */
export function reportStrayLoops(
  dir: string,
  loops: readonly LoopDevice[],
  files: ReadonlyMap<string, number>,
  log: Logger,
): void {
  for (const l of loops) {
    if (!l.backFile.startsWith(`${dir}/`)) continue;
    const id = l.backFile.slice(dir.length + 1, -SUFFIX.length);
    if (l.deleted || !files.has(id))
      log.warn('loop device holds a removed backing file; leaving it attached', { device: l.name, file: l.backFile });
  }
}
