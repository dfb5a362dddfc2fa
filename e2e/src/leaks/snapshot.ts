// What the leak checker (issue 14, R1) reads from the host before and after each e2e test file:
// loop devices and their backing files (/sys/block/loop*/loop/backing_file), mounts
// (/proc/self/mountinfo), processes (/proc/<pid>/stat, cmdline, and for new ones the environment,
// where the file's tag shows which processes it started, even after they were re-parented to init),
// and the emulated volume files (`*.img`) created meanwhile below the watched roots. Only files under
// /proc and /sys are read and no tool is run, so a snapshot costs a few tens of milliseconds.
// The parsers are exported for the unit tests; diff.ts decides what counts as left behind.
import { readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoopDevice {
  /** `/dev/loop3`. */
  readonly device: string;
  /** The backing file as the kernel names it (`... (deleted)` when it was removed meanwhile). */
  readonly backingFile: string;
}

export interface Mount {
  readonly target: string;
  readonly source: string;
  readonly fstype: string;
}

export interface Proc {
  readonly pid: number;
  readonly ppid: number;
  /** Start time in clock ticks since boot: with the pid, it tells a process from a later one with the same pid. */
  readonly startTicks: string;
  /** One letter of /proc/<pid>/stat (Z: exited, not yet reaped). */
  readonly state: string;
  readonly command: string;
}

export interface ImageFile {
  readonly path: string;
  /** When it was created (birth time; the change time where the file system keeps no birth time). */
  readonly bornMs: number;
}

export interface HostSnapshot {
  readonly takenAtMs: number;
  /** The directories below which loop devices, mounts and volume files count (watchedRoots()). */
  readonly roots: readonly string[];
  readonly loops: readonly LoopDevice[];
  readonly mounts: readonly Mount[];
  readonly processes: readonly Proc[];
  /** Pids (of processes not in the snapshot it was compared with) whose environment carries the file's tag. */
  readonly tagged: ReadonlySet<number>;
  /** `*.img` files created since the snapshot it was compared with (only in an "after" snapshot). */
  readonly imageFiles: readonly ImageFile[];
  /** Where the volume-file search stopped early (its budget), for the report. */
  readonly truncated: readonly string[];
}

/** Where test files keep their state: the temporary directory, kubelet's and the driver's (/var/lib/pmem-csi*). */
export async function watchedRoots(): Promise<string[]> {
  const varLib = await readdir('/var/lib').catch(() => [] as string[]);
  return [
    tmpdir(),
    '/var/lib/kubelet',
    ...varLib.filter((n) => n.startsWith('pmem-csi')).map((n) => join('/var/lib', n)),
  ];
}

/** `path` is one of `roots` or lies below one. */
export function isBelow(path: string, roots: readonly string[]): boolean {
  return roots.some((r) => path === r || path.startsWith(r.endsWith('/') ? r : `${r}/`));
}

/** The octal escapes of /proc/self/mountinfo (`\040` for a space) decoded. */
function unescapeMountPath(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Mounts of /proc/<pid>/mountinfo text: field 5 is the mount point, after " - " the type and the source. */
export function parseMountInfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const target = left.split(' ')[4];
    const [fstype, source] = right.split(' ');
    if (target === undefined || fstype === undefined) continue;
    mounts.push({ target: unescapeMountPath(target), fstype, source: unescapeMountPath(source ?? '') });
  }
  return mounts;
}

/** pid, ppid, state and start time of /proc/<pid>/stat text ("pid (comm) state ppid ..."; comm may hold spaces and parentheses). */
export function parseStat(text: string): Omit<Proc, 'command'> | undefined {
  const close = text.lastIndexOf(')');
  const pid = Number(text.slice(0, text.indexOf(' ')));
  const fields = text.slice(close + 2).split(' ');
  const [state, ppid, startTicks] = [fields[0], Number(fields[1]), fields[19]];
  if (close < 0 || !Number.isSafeInteger(pid) || state === undefined || !Number.isSafeInteger(ppid)) return undefined;
  if (startTicks === undefined) return undefined;
  return { pid, ppid, state, startTicks };
}

/** A command line of /proc/<pid>/cmdline (NUL-separated), shortened for a report. */
export function commandLine(raw: string, max = 300): string {
  const cmd = raw
    .split('\0')
    .filter((a) => a !== '')
    .join(' ');
  return cmd.length > max ? `${cmd.slice(0, max)}…` : cmd;
}

/** Whether /proc/<pid>/environ text (NUL-separated) holds `name=value`. */
export function environHas(raw: string, name: string, value: string): boolean {
  return raw.split('\0').includes(`${name}=${value}`);
}

async function readLoops(): Promise<LoopDevice[]> {
  const names = (await readdir('/sys/block').catch(() => [] as string[])).filter((n) => /^loop\d+$/.test(n));
  const loops = await Promise.all(
    names.map(async (n) => {
      // Present only while the device is bound to a file.
      const file = await readFile(`/sys/block/${n}/loop/backing_file`, 'utf8').catch(() => '');
      return file.trim() === '' ? undefined : { device: `/dev/${n}`, backingFile: file.trim() };
    }),
  );
  return loops.filter((l): l is LoopDevice => l !== undefined);
}

async function readProc(pid: string): Promise<Proc | undefined> {
  try {
    const s = parseStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
    if (s === undefined) return undefined;
    return { ...s, command: commandLine(await readFile(`/proc/${pid}/cmdline`, 'utf8')) };
  } catch {
    return undefined; // gone meanwhile
  }
}

async function readProcesses(): Promise<Proc[]> {
  const pids = (await readdir('/proc')).filter((n) => /^\d+$/.test(n));
  return (await Promise.all(pids.map(readProc))).filter((p): p is Proc => p !== undefined);
}

/** The processes among `procs` whose environment holds `name=value`. */
async function carrying(procs: readonly Proc[], name: string, value: string): Promise<Set<number>> {
  const found = await Promise.all(
    procs.map(async (p) => {
      const env = await readFile(`/proc/${p.pid}/environ`, 'utf8').catch(() => '');
      return environHas(env, name, value) ? p.pid : undefined;
    }),
  );
  return new Set(found.filter((p): p is number => p !== undefined));
}

/** How much the volume-file search may read per check (directory entries, depth below a root entry). */
const WALK = { maxEntries: 30_000, maxDepth: 8 } as const;
/** Never volume files' homes, and large (containerd's content and snapshots of the real node): not searched. */
const skipped = (name: string): boolean =>
  name === 'node_modules' || name === '.git' || name === '.nx' || name.startsWith('io.containerd.');

interface Walk {
  readonly sinceMs: number;
  readonly found: ImageFile[];
  readonly truncated: string[];
  entries: number;
}

/** Whether an entry was added to or removed from `dir` since `sinceMs` (a new directory counts). */
async function changedSince(dir: string, sinceMs: number): Promise<boolean> {
  const s = await stat(dir).catch(() => undefined);
  return s !== undefined && s.mtimeMs >= sinceMs;
}

async function walkImages(dir: string, depth: number, w: Walk): Promise<void> {
  if (depth > WALK.maxDepth) return;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (++w.entries > WALK.maxEntries) {
      if (!w.truncated.includes(dir)) w.truncated.push(dir);
      return;
    }
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (!skipped(e.name) && (await changedSince(path, w.sinceMs))) await walkImages(path, depth + 1, w);
    } else if (e.isFile() && e.name.endsWith('.img')) {
      const s = await stat(path).catch(() => undefined);
      const bornMs = s === undefined ? 0 : s.birthtimeMs > 0 ? s.birthtimeMs : s.ctimeMs;
      if (bornMs >= w.sinceMs) w.found.push({ path, bornMs });
    }
  }
}

/**
 * `*.img` files born since `sinceMs` below `roots`, searched only through directories that changed
 * since then: a new file changes its directory, and a test file makes its directories while it runs
 * (or empties and makes them again), so every directory on the way to its volume files is new. A
 * file created in a directory tree that existed before, below a directory that did not change, is
 * not found (loop devices are found anyway). Symbolic links are not followed; the search reads at
 * most WALK.maxEntries entries (where it stopped: `truncated`).
 */
export async function findImageFiles(
  roots: readonly string[],
  sinceMs: number,
): Promise<{ files: ImageFile[]; truncated: string[] }> {
  const w: Walk = { sinceMs, found: [], truncated: [], entries: 0 };
  for (const root of roots) {
    const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
    // Ours first (pmem-csi-e2e-*, pmem-rn, ...), so that a large foreign tree does not use up the budget.
    entries.sort((a, b) => Number(b.name.startsWith('pmem')) - Number(a.name.startsWith('pmem')));
    for (const e of entries) {
      if (!e.isDirectory() || skipped(e.name)) continue;
      const path = join(root, e.name);
      if (!(await changedSince(path, sinceMs))) continue;
      if (w.entries > WALK.maxEntries) w.truncated.push(path);
      else await walkImages(path, 1, w);
    }
  }
  return { files: w.found, truncated: w.truncated };
}

export interface SnapshotOptions {
  /** The snapshot taken before the file: processes not in it are asked for the tag, volume files born since it are searched. */
  readonly before?: HostSnapshot;
  /** The environment variable (name and value) that marks what the file started. */
  readonly tag?: { readonly name: string; readonly value: string };
}

/** Read the host's loop devices, mounts and processes (and, given `before`, what is new since). */
export async function takeSnapshot(o: SnapshotOptions = {}): Promise<HostSnapshot> {
  const takenAtMs = Date.now();
  const [roots, loops, mountinfo, processes] = await Promise.all([
    watchedRoots(),
    readLoops(),
    readFile('/proc/self/mountinfo', 'utf8'),
    readProcesses(),
  ]);
  const known = new Set(o.before?.processes.map(procKey));
  const fresh = processes.filter((p) => !known.has(procKey(p)));
  const tagged = o.tag === undefined ? new Set<number>() : await carrying(fresh, o.tag.name, o.tag.value);
  const images =
    o.before === undefined ? { files: [], truncated: [] } : await findImageFiles(roots, o.before.takenAtMs);
  return {
    takenAtMs,
    roots,
    loops,
    mounts: parseMountInfo(mountinfo),
    processes,
    tagged,
    imageFiles: images.files,
    truncated: images.truncated,
  };
}

/** A process's identity across snapshots: pid and start time. */
export function procKey(p: Pick<Proc, 'pid' | 'startTicks'>): string {
  return `${p.pid}@${p.startTicks}`;
}
