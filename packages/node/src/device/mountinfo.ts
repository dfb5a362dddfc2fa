// The mount table read from /proc/self/mountinfo (proc(5)) instead of running findmnt: the same
// entries findmnt lists (TARGET, SOURCE with "[root]" for a bind of a subtree, FSTYPE, OPTIONS,
// VFS-OPTIONS, FS-OPTIONS), without a process per query. A line that does not follow proc(5) is an
// error naming the line and what was expected; nothing is skipped silently. It lives in device/ so
// that both mount/ (findmnt.ts) and direct mode's start-up /sys check (direct.ts) use this one parser.
//
// A line: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
//   mount ID, parent ID, major:minor, root, mount point, per-mount options, optional fields (zero
//   or more) up to the "-" separator, filesystem type, source, superblock options.
import { readFile, realpath } from 'node:fs/promises';

/** One mount as findmnt lists it. */
export interface MountEntry {
  readonly target: string;
  /** As listed, e.g. "/dev/loop3", "/dev/vda[/some/dir]" (bind of a subtree) or "devtmpfs[/loop3]". */
  readonly source: string;
  readonly fstype: string;
  /** All options (VFS + filesystem). */
  readonly options: readonly string[];
  /** Options of this mount (e.g. `ro` of a read-only bind mount). */
  readonly vfsOptions: readonly string[];
  /** Options of the filesystem (superblock), shared by every mount of it. */
  readonly fsOptions: readonly string[];
}

/** One mountinfo line, decoded (paths unescaped). */
export interface MountinfoLine {
  readonly mountId: number;
  readonly parentId: number;
  /** "major:minor" of the filesystem's device. */
  readonly device: string;
  /** The directory of the filesystem that forms this mount's root ("/" unless a subtree is bound). */
  readonly root: string;
  readonly mountPoint: string;
  readonly vfsOptions: readonly string[];
  readonly optionalFields: readonly string[];
  readonly fstype: string;
  readonly source: string;
  readonly fsOptions: readonly string[];
}

/** What the kernel appends to the path of an unlinked mount point (findmnt does not show it). */
const DELETED = ' (deleted)';

/** Undo the kernel's octal escapes of space, tab, newline and backslash (any "\ooo" in fact). */
export function unescapeMountinfo(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Options split at the commas the kernel left unescaped (a comma inside a value is "\054"). */
function options(field: string): string[] {
  return field === '' ? [] : field.split(',').map(unescapeMountinfo);
}

class MountinfoError extends Error {
  constructor(lineNo: number, line: string, expected: string) {
    super(`/proc/self/mountinfo line ${lineNo} (${JSON.stringify(line)}): expected ${expected}`);
  }
}

/** The six fixed fields of a line: what each must look like, as the error states it. */
const FIXED: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\d+$/, 'a mount ID (decimal) as field 1'],
  [/^\d+$/, 'a parent ID (decimal) as field 2'],
  [/^\d+:\d+$/, '"major:minor" as field 3'],
  [/^./, 'the root of the mount as field 4'],
  [/^\//, 'an absolute mount point as field 5'],
  [/^./, 'the mount options as field 6'],
];

/** The fields of a line once checked: the six fixed ones, the optional ones, and the three after " - ". */
function splitFields(line: string, lineNo: number): { fixed: string[]; optional: string[]; tail: string[] } {
  const fields = line.split(' ');
  const fail = (expected: string): never => {
    throw new MountinfoError(lineNo, line, expected);
  };
  FIXED.forEach(([pattern, expected], i) => {
    if (!pattern.test(fields[i] ?? '')) fail(expected);
  });
  const separator = fields.indexOf('-', FIXED.length);
  if (separator < 0) fail('the " - " separator after the optional fields');
  const tail = fields.slice(separator + 1);
  if (tail.length !== 3)
    fail(`filesystem type, source and superblock options after " - " (found ${tail.length} fields)`);
  if (tail[0] === '') fail('a filesystem type after " - "');
  return { fixed: fields.slice(0, FIXED.length), optional: fields.slice(FIXED.length, separator), tail };
}

function parseLine(line: string, lineNo: number): MountinfoLine {
  const { fixed, optional, tail } = splitFields(line, lineNo);
  const [mountId, parentId, device, root, mountPoint, vfs] = fixed as [string, string, string, string, string, string];
  const [fstype, source, fsOptions] = tail as [string, string, string];
  let target = unescapeMountinfo(mountPoint);
  if (target.endsWith(DELETED) && target.length > DELETED.length) target = target.slice(0, -DELETED.length);
  return {
    mountId: Number(mountId),
    parentId: Number(parentId),
    device,
    root: unescapeMountinfo(root),
    mountPoint: target,
    vfsOptions: options(vfs),
    optionalFields: optional,
    fstype: unescapeMountinfo(fstype),
    source: unescapeMountinfo(source),
    fsOptions: options(fsOptions),
  };
}

/** Parse the whole text of a mountinfo file, in its order (the kernel lists mounts oldest first). */
export function parseMountinfo(text: string): MountinfoLine[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, i) => parseLine(line, i + 1));
}

/**
 * All options as findmnt's OPTIONS column shows them: the per-mount options, then the superblock
 * options, with one read-write flag in front ("ro" when either side says ro); the same list once
 * when both sides are equal.
 */
export function mergedOptions(vfs: readonly string[], fs: readonly string[]): string[] {
  if (vfs.join(',') === fs.join(',')) return [...vfs];
  const rest = [...vfs, ...fs].filter((o) => o !== 'rw' && o !== 'ro');
  const readOnly = vfs.includes('ro') || fs.includes('ro');
  return [readOnly ? 'ro' : 'rw', ...rest];
}

/** The entry as findmnt lists it: SOURCE carries "[root]" when the mount shows a subtree. */
export function toMountEntry(m: MountinfoLine): MountEntry {
  return {
    target: m.mountPoint,
    source: m.root === '/' ? m.source : `${m.source}[${m.root}]`,
    fstype: m.fstype,
    options: mergedOptions(m.vfsOptions, m.fsOptions),
    vfsOptions: [...m.vfsOptions],
    fsOptions: [...m.fsOptions],
  };
}

/**
 * The mounts at one mount point, bottom first: a mount stacked on another has the covered mount as
 * its parent (that is what findmnt's tree shows, the top one deepest), so the order follows the
 * parent links, not the file's order.
 */
export function stackAt(lines: readonly MountinfoLine[], target: string): MountinfoLine[] {
  const here = lines.filter((m) => m.mountPoint === target);
  if (here.length < 2) return here;
  const ids = new Set(here.map((m) => m.mountId));
  const byParent = new Map(here.map((m) => [m.parentId, m]));
  const ordered: MountinfoLine[] = [];
  let next = here.find((m) => !ids.has(m.parentId));
  while (next !== undefined && ordered.length < here.length) {
    ordered.push(next);
    next = byParent.get(next.mountId);
  }
  // Not one chain (e.g. mounts moved around): the file's order, as findmnt's list shows it.
  return ordered.length === here.length ? ordered : here;
}

/** Read and parse the calling process's mount table. */
export async function readMountinfo(signal?: AbortSignal, file = '/proc/self/mountinfo'): Promise<MountinfoLine[]> {
  return parseMountinfo(await readFile(file, { encoding: 'utf8', signal }));
}

/** `path` resolved as `findmnt --mountpoint` resolves it (symlinks, "..", trailing "/"); as given when that fails. */
export async function resolveMountPoint(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return path;
  }
}
