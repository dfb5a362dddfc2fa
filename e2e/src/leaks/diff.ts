// What a test file left behind, from the snapshots before and after it (snapshot.ts). Only what is
// new since the file started counts, so that what the machine had before (another run's leftovers,
// other work) never fails the file:
// - a loop device whose backing file lies below a watched root (the temporary directory, kubelet's
//   or the driver's state directory), not bound to the same file before; or one bound to a deleted
//   file wherever its path (a device attached in a container reports its file under that
//   container's paths once the container is gone, "/emulated/<id>.img"): a device whose file was
//   removed under it serves nobody;
// - a mount at or below a watched root that was not there before;
// - a live process the file started: one whose environment carries the file's tag (inherited by
//   whatever it started, also after its parent died and init adopted it) or that descends from the
//   Jest process; a zombie (exited, not yet reaped) is gone already;
// - an emulated volume file (`*.img`) below a watched root, created while the file ran.
// Pure functions: the unit tests feed them scripted snapshots.
import { isBelow, procKey, type HostSnapshot, type Proc } from './snapshot.js';

export type LeakKind = 'loop device' | 'mount' | 'process' | 'volume file';

export interface Leak {
  readonly kind: LeakKind;
  /** What is left: device and backing file, mount point and source, pid and command line, path. */
  readonly what: string;
}

/** Counts of each key, so that a second mount at the same place is new even when one was there before. */
function counts(keys: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

/** The entries of `after` beyond what `before` had of the same key. */
function added<T>(before: readonly T[], after: readonly T[], key: (t: T) => string): T[] {
  const left = counts(before.map(key));
  const out: T[] = [];
  for (const t of after) {
    const k = key(t);
    const n = left.get(k) ?? 0;
    if (n > 0) left.set(k, n - 1);
    else out.push(t);
  }
  return out;
}

/** The backing file without the kernel's " (deleted)" suffix. */
function backingPath(file: string): string {
  return file.endsWith(' (deleted)') ? file.slice(0, -' (deleted)'.length) : file;
}

/** Whether `p` descends from `rootPid` (by the parent pids of `procs`). */
export function descendsFrom(p: Proc, rootPid: number, procs: ReadonlyMap<number, Proc>): boolean {
  let cur: Proc | undefined = p;
  for (let hops = 0; cur !== undefined && cur.ppid > 0 && hops < 256; hops++) {
    if (cur.ppid === rootPid) return true;
    cur = procs.get(cur.ppid);
  }
  return false;
}

function leakedProcesses(before: HostSnapshot, after: HostSnapshot, rootPid: number): Leak[] {
  const byPid = new Map(after.processes.map((p) => [p.pid, p]));
  return added(before.processes, after.processes, procKey)
    .filter((p) => p.pid !== rootPid && p.state !== 'Z')
    .filter((p) => after.tagged.has(p.pid) || descendsFrom(p, rootPid, byPid))
    .map((p) => ({ kind: 'process', what: `pid ${p.pid} (parent ${p.ppid}): ${p.command}` }));
}

/**
 * Everything the file left: new since `before`, below `after.roots` (loop devices, mounts, volume
 * files) or started by the file (processes; `rootPid` is the Jest process that ran it).
 */
export function findLeaks(before: HostSnapshot, after: HostSnapshot, rootPid: number): Leak[] {
  const roots = after.roots;
  const loops = added(before.loops, after.loops, (l) => `${l.device} ${l.backingFile}`)
    .filter((l) => isBelow(backingPath(l.backingFile), roots) || l.backingFile.endsWith(' (deleted)'))
    .map((l): Leak => ({ kind: 'loop device', what: `${l.device} -> ${l.backingFile}` }));
  const mounts = added(before.mounts, after.mounts, (m) => `${m.target} ${m.source}`)
    .filter((m) => isBelow(m.target, roots))
    .map((m): Leak => ({ kind: 'mount', what: `${m.target} (${m.fstype} from ${m.source})` }));
  const files = after.imageFiles
    .filter((f) => f.bornMs >= before.takenAtMs && isBelow(f.path, roots))
    .map((f): Leak => ({ kind: 'volume file', what: f.path }));
  return [...loops, ...mounts, ...leakedProcesses(before, after, rootPid), ...files];
}

/** The report for a file that left something: one line per leak under a heading naming the file. */
export function formatLeaks(file: string, leaks: readonly Leak[]): string {
  return [
    `leak check: ${file} left ${leaks.length} thing(s) behind that it created (new since it started):`,
    ...leaks.map((l) => `  ${l.kind}: ${l.what}`),
  ].join('\n');
}

/** The one-line summary for a file that left nothing. */
export function formatClean(file: string, after: HostSnapshot, ms: number): string {
  const truncated =
    after.truncated.length === 0
      ? ''
      : `; volume-file search stopped early in ${after.truncated.slice(0, 3).join(', ')}`;
  return (
    `leak check: ${file} left nothing (${after.loops.length} loop devices, ${after.mounts.length} mounts, ` +
    `${after.processes.length} processes on the host; ${ms} ms${truncated})`
  );
}
