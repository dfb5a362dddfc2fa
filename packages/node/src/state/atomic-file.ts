// Crash-safe file replacement: after a crash at any point a reader sees either the old content or
// the new, never a torn file. Write a temp file in the same directory (rename is only atomic within
// one filesystem), fsync it, rename it over the target, then fsync the directory so the rename
// itself is durable. Temp files carry a marker so that start-up can remove the ones a crash left.
import { randomUUID } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Temp files are hidden (leading dot) and end with this suffix. */
export const TEMP_SUFFIX = '.tmp';

/** The steps of an atomic write, in order; tests observe them (and may fail one, like a crash). */
export type AtomicStep = 'write-temp' | 'fsync-temp' | 'rename' | 'fsync-dir';
export type StepHook = (step: AtomicStep, path: string) => void;

/** Whether a directory entry is a temp file left by writeFileAtomic. */
export function isTempFile(name: string): boolean {
  return name.startsWith('.') && name.endsWith(TEMP_SUFFIX);
}

/** Make a directory's entries (creations, renames, removals) durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Replace `path` with `data` atomically and durably; the temp file is removed when a step fails. */
export async function writeFileAtomic(path: string, data: string, onStep: StepHook = () => undefined): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${randomUUID()}${TEMP_SUFFIX}`);
  try {
    const fh = await open(tmp, 'wx', 0o600);
    try {
      await fh.writeFile(data, 'utf8');
      onStep('write-temp', tmp);
      await fh.sync();
      onStep('fsync-temp', tmp);
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
    onStep('rename', path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  await fsyncDir(dir);
  onStep('fsync-dir', dir);
}
