// Durable file primitives of the volume state. replaceFileAtomic: after a crash at any point a
// reader sees either the old content or the new, never a torn file — write a temp file in the same
// directory (rename is only atomic within one filesystem), fsync it, rename it over the target,
// then fsync the directory so the rename itself is durable. Temp files carry a marker so that
// start-up can remove the ones a crash left. Raw file descriptors (not FileHandle objects) because
// the journal keeps one open for the life of the store: a FileHandle that is never closed is
// closed by the garbage collector with a warning.
import { randomUUID } from 'node:crypto';
import { close, fdatasync, fsync, open, write } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';

/** Temp files are hidden (leading dot) and end with this suffix. */
export const TEMP_SUFFIX = '.tmp';

/** The steps of an atomic replace, in order; tests observe them (and may fail one, like a crash). */
export type AtomicStep = 'write-temp' | 'fsync-temp' | 'rename' | 'fsync-dir';
export type StepHook = (step: AtomicStep, path: string) => void;
/** Called (and awaited) before every fsync/fdatasync with the path being synced; throwing fails that sync. */
export type SyncHook = (path: string) => void | Promise<void>;

export interface DurabilityHooks {
  readonly onStep?: StepHook;
  readonly onSync?: SyncHook;
}

const openFd = promisify(open);
const writeFd = promisify(write);
const fsyncFd = promisify(fsync);
const fdatasyncFd = promisify(fdatasync);
export const closeFd = promisify(close);

/** Whether a directory entry is a temp file left by replaceFileAtomic. */
export function isTempFile(name: string): boolean {
  return name.startsWith('.') && name.endsWith(TEMP_SUFFIX);
}

/** Open a file for writing at explicit positions (no O_APPEND: the journal rolls back by position). */
export function openForWrite(path: string): Promise<number> {
  return openFd(path, 'r+');
}

/** Write all of `data` at `position` (a regular file may take fewer bytes per call). */
export async function writeAll(fd: number, data: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await writeFd(fd, data, done, data.length - done, position + done);
    done += bytesWritten;
  }
}

/** fsync (or fdatasync: data and the size, not the times) an open file, after the hook. */
export async function syncFd(fd: number, path: string, onSync: SyncHook | undefined, dataOnly = false): Promise<void> {
  await onSync?.(path);
  await (dataOnly ? fdatasyncFd(fd) : fsyncFd(fd));
}

/** Make a directory's entries (creations, renames, removals) durable. */
export async function fsyncDir(dir: string, onSync?: SyncHook): Promise<void> {
  const fd = await openFd(dir, 'r');
  try {
    await syncFd(fd, dir, onSync);
  } finally {
    await closeFd(fd);
  }
}

/**
 * Replace `path` with `data` atomically and durably and return a descriptor of the new file, open
 * for writing (the journal goes on appending to it). On failure the descriptor is closed and a temp
 * file not yet renamed is removed.
 */
export async function replaceFileAtomic(path: string, data: Buffer, hooks: DurabilityHooks = {}): Promise<number> {
  const step = hooks.onStep ?? ((): void => undefined);
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${randomUUID()}${TEMP_SUFFIX}`);
  const fd = await openFd(tmp, 'wx', 0o600);
  try {
    try {
      await writeAll(fd, data, 0);
      step('write-temp', tmp);
      await syncFd(fd, tmp, hooks.onSync);
      step('fsync-temp', tmp);
      await rename(tmp, path);
      step('rename', path);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
    await fsyncDir(dir, hooks.onSync);
    step('fsync-dir', dir);
    return fd;
  } catch (e) {
    await closeFd(fd);
    throw e;
  }
}
