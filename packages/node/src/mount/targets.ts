// Creating and removing the paths the CO hands us: staging and publish targets are directories,
// raw block targets are files (a device node is bind-mounted onto a file). Removal is idempotent
// and never recursive, so a mount we failed to see can never cause data under it to be deleted.
import type { Stats } from 'node:fs';
import { mkdir, open, rm, rmdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FailedPreconditionError } from '@pmem-csi/csi';

function errno(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** stat() that returns undefined for a path that cannot exist: missing, below a file (`<file>/`), or a name too long. */
export async function statOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch (e) {
    if (errno(e) === 'ENOENT' || errno(e) === 'ENOTDIR' || errno(e) === 'ENAMETOOLONG') return undefined;
    throw e;
  }
}

/**
 * mkdir -p of `dir` for the CO path `path` (the request's `field`): a path that exists as something
 * else than a directory, here or in a parent (EEXIST, ENOTDIR: e.g. a target below a raw block
 * volume's staging file), is the CO's precondition to fix, not an internal error.
 */
async function makeDirectories(dir: string, path: string, field: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o750 });
  } catch (e) {
    if (errno(e) === 'EEXIST' || errno(e) === 'ENOTDIR')
      throw new FailedPreconditionError(
        `${field} ${path}: cannot create the directory ${dir}, because it or one of its parents exists and is not a directory`,
      );
    throw e;
  }
}

/** Make sure `path` is a directory (creating parents); `field` names it in errors. */
export async function ensureDirectory(path: string, field = 'path'): Promise<void> {
  await makeDirectories(path, path, field);
}

/** Make sure `path` is a regular (empty) file to bind a device onto; an empty directory there is replaced. */
export async function ensureFile(path: string, field = 'path'): Promise<void> {
  await makeDirectories(dirname(path), path, field);
  const st = await statOrUndefined(path);
  if (st?.isDirectory()) {
    try {
      await rmdir(path);
    } catch (e) {
      if (errno(e) === 'ENOTEMPTY')
        throw new FailedPreconditionError(
          `${field} ${path} is a non-empty directory; a raw block volume needs a file there`,
        );
      throw e;
    }
  }
  const fh = await open(path, 'a', 0o640);
  await fh.close();
}

/** Remove an unmounted target: an empty directory or a file; a missing path is fine. Never recursive. */
export async function removeTarget(path: string): Promise<void> {
  const st = await statOrUndefined(path);
  if (st === undefined) return;
  if (!st.isDirectory()) {
    await rm(path, { force: true });
    return;
  }
  try {
    await rmdir(path);
  } catch (e) {
    if (errno(e) === 'ENOENT') return;
    if (errno(e) === 'ENOTEMPTY')
      throw new FailedPreconditionError(`${path} is not empty after unmounting; refusing to delete its content`);
    throw e;
  }
}

/** Whether two paths name the same block device (same device number); false when either is not one. */
export async function sameBlockDevice(a: string, b: string): Promise<boolean> {
  if (a === b) return true;
  const [sa, sb] = await Promise.all([
    statOrUndefined(a).catch(() => undefined),
    statOrUndefined(b).catch(() => undefined),
  ]);
  return sa !== undefined && sb !== undefined && sa.isBlockDevice() && sb.isBlockDevice() && sa.rdev === sb.rdev;
}
