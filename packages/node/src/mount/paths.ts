// Which host paths a CO may hand us to mount on or unmount from. CSI requires staging_target_path,
// target_path and volume_path to be absolute paths "in the root filesystem of the process serving
// this request": a relative one would be resolved against the driver's working directory, so it is
// refused, as are '.' and '..' components (a path that is not what it reads as). System
// directories (/, /etc, /usr, /proc, /sys, /dev, the kubelet's own directories, ...) are never a
// mount target, also when a symbolic link leads there; neither is a path that already holds other
// content: a non-empty directory or file that is not our mount (the kubelet creates an empty
// staging directory and the target's parent; the target itself is ours to create).
import type { Stats } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { posix } from 'node:path';
import { FailedPreconditionError, InvalidArgumentError } from '@pmem-csi/csi';

/** Linux PATH_MAX including the terminating NUL. */
const PATH_MAX = 4096;

/** Directories whose whole subtree is never a mount target (a volume there would replace system files or kernel interfaces). */
export const SYSTEM_SUBTREES: readonly string[] = [
  '/proc',
  '/sys',
  '/dev',
  '/etc',
  '/boot',
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
];

/** Directories that are never a mount target themselves (paths below them are: the kubelet's pod directories live there). */
export const SYSTEM_DIRECTORIES: readonly string[] = [
  '/',
  '/root',
  '/home',
  '/opt',
  '/srv',
  '/mnt',
  '/media',
  '/tmp',
  '/run',
  '/var',
  '/var/run',
  '/var/tmp',
  '/var/log',
  '/var/lib',
  '/var/lib/kubelet',
  '/var/lib/kubelet/pods',
  '/var/lib/kubelet/plugins',
  '/var/lib/kubelet/plugins_registry',
  '/var/lib/kubelet/pod-resources',
  '/var/lib/containerd',
  '/var/lib/docker',
];

/** What the path rules allow, for messages. */
const ALLOWED = 'an absolute path without "." or ".." components, e.g. /var/lib/kubelet/pods/<pod uid>/volumes/...';

/** Whether `value` is an absolute, normalised path text (no '.' or '..' components, no NUL). */
export function isAbsolutePathText(value: string): boolean {
  if (!value.startsWith('/') || value.includes('\0')) return false;
  return value.split('/').every((part) => part !== '.' && part !== '..');
}

/**
 * A required absolute path field. @throws InvalidArgumentError naming `field` when it is empty,
 * relative, has '.' or '..' components or is longer than PATH_MAX.
 */
export function absolutePath(value: string, field: string): string {
  if (value === '') throw new InvalidArgumentError(`${field} is required`);
  if (!isAbsolutePathText(value)) {
    throw new InvalidArgumentError(
      `${field} ${JSON.stringify(value)} is not allowed: CSI requires ${ALLOWED} (a relative path would be resolved against the driver's working directory)`,
    );
  }
  if (Buffer.byteLength(value) >= PATH_MAX)
    throw new InvalidArgumentError(
      `${field} is ${Buffer.byteLength(value)} bytes long; the maximum is ${PATH_MAX - 1}`,
    );
  return value;
}

function trimSlashes(path: string): string {
  const normal = posix.normalize(path);
  return normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

/** Whether two absolute paths name the same place as text ("/a/b/", "/a//b" and "/a/b" do; no symlinks followed). */
export function samePathText(a: string, b: string): boolean {
  return trimSlashes(a) === trimSlashes(b);
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);
}

/** The protected directory `path` is or lies in (SYSTEM_SUBTREES, SYSTEM_DIRECTORIES, `extraSubtrees`), if any. */
export function protectedDirectoryOf(path: string, extraSubtrees: readonly string[] = []): string | undefined {
  const p = trimSlashes(path);
  if (SYSTEM_DIRECTORIES.includes(p)) return p;
  return [...SYSTEM_SUBTREES, ...extraSubtrees.map(trimSlashes)].find((dir) => within(p, dir));
}

/**
 * `path` with every symbolic link resolved: the real path of its deepest existing ancestor plus the
 * components that do not exist yet (mount(8) follows links, so this is where a mount would land).
 */
export async function resolvedPath(path: string): Promise<string> {
  const rest: string[] = [];
  let current = trimSlashes(path);
  for (;;) {
    try {
      return posix.join(await realpath(current), ...rest.reverse());
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || current === '/') throw e;
      rest.push(posix.basename(current));
      current = posix.dirname(current);
    }
  }
}

/**
 * Refuse a mount target (or a path to unmount) that is, or through symbolic links leads to, a
 * system directory or one of `extraSubtrees` (the driver's own state). @throws InvalidArgumentError naming `field`
 */
export async function checkNotSystemPath(
  path: string,
  field: string,
  extraSubtrees: readonly string[] = [],
): Promise<void> {
  const literal = protectedDirectoryOf(path, extraSubtrees);
  if (literal !== undefined) throw systemPathError(field, path, literal);
  const real = await resolvedPath(path);
  const resolved = protectedDirectoryOf(real, extraSubtrees);
  if (resolved !== undefined) throw systemPathError(field, path, resolved, real);
}

function systemPathError(field: string, path: string, dir: string, real?: string): InvalidArgumentError {
  const via = real === undefined ? '' : ` (through a symbolic link it is ${real})`;
  const what =
    dir === trimSlashes(real ?? path) ? `the protected directory ${dir}` : `inside the protected directory ${dir}`;
  return new InvalidArgumentError(
    `${field} ${path} is ${what}${via}: the driver never mounts a volume on, or unmounts from, system directories or its own state. Allowed: a directory of the kubelet's pods or plugins, e.g. /var/lib/kubelet/pods/<pod uid>/volumes/...`,
  );
}

async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENAMETOOLONG') return undefined;
    throw e;
  }
}

async function refuseNonEmptyDirectory(path: string, field: string): Promise<void> {
  const entries = await readdir(path);
  if (entries.length === 0) return;
  const shown = entries
    .slice(0, 3)
    .map((e) => JSON.stringify(e))
    .join(', ');
  const count = `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}`;
  throw new FailedPreconditionError(
    `${field} ${path} is a directory that already holds ${count} (${shown}${entries.length > 3 ? ', ...' : ''}) and is not a mount of this volume; the driver mounts only on an empty directory`,
  );
}

function describeEntry(st: Stats): string {
  if (st.isFile()) return `a file of ${st.size} bytes`;
  return st.isSymbolicLink() ? 'a symbolic link' : 'a special file';
}

/**
 * Refuse a mount target that already holds something other than what the driver may mount on: for
 * a filesystem, a missing path or an empty directory; for a raw block volume, a missing path, an
 * empty regular file or an empty directory (replaced by a file). Call it only when nothing is
 * mounted at `path` (a mount of ours is judged by the caller). @throws FailedPreconditionError naming `field`
 */
export async function checkTargetIsFree(path: string, field: string, kind: 'directory' | 'file'): Promise<void> {
  const st = await lstatOrUndefined(path);
  if (st === undefined) return;
  if (st.isDirectory()) return refuseNonEmptyDirectory(path, field);
  if (kind === 'file' && st.isFile() && st.size === 0) return;
  const needs =
    kind === 'directory'
      ? 'a filesystem volume needs a missing path or an empty directory'
      : 'a raw block volume needs a missing path, an empty file or an empty directory';
  throw new FailedPreconditionError(
    `${field} ${path} is ${describeEntry(st)} and not a mount of this volume; ${needs} there`,
  );
}
