// Mount-table queries, so the CSI services can tell whether a path is staged/published and with
// which device and options. The per-mount (VFS) and per-filesystem (superblock) options are kept
// apart: a filesystem that the kernel switched to read-only after errors shows `ro` only in the
// latter. The table comes through a small port: on a host it is /proc/self/mountinfo, parsed in
// mountinfo.ts (no process per query); a test double that simulates a host carries its own table,
// usually `findmnt -J` answers scripted on its command runner (findmntTable below).
import { CommandFailedError, renderCommand, runJson, type CommandRunner } from '@pmem-csi/runtime';
import { readMountinfo, resolveMountPoint, stackAt, toMountEntry, type MountEntry } from '../device/mountinfo.js';
import { TOOL_TIMEOUTS, type ToolCallOptions } from './tool-options.js';

export type { MountEntry } from '../device/mountinfo.js';

/** Where the mount table comes from. */
export interface MountTable {
  /** Every mount, in mount order (oldest first). */
  list(o: ToolCallOptions): Promise<MountEntry[]>;
  /** The mounts whose mount point is `path` (resolved as `findmnt --mountpoint` does), bottom first. */
  at(path: string, o: ToolCallOptions): Promise<MountEntry[]>;
}

/** A command runner that answers for the mount table itself (a test double simulating a host). */
export interface RunnerWithMountTable extends CommandRunner {
  readonly mountTable: MountTable;
}

/** The mount table of this process's mount namespace, from /proc/self/mountinfo. */
export const hostMountTable: MountTable = {
  async list(o) {
    return (await readMountinfo(o.signal)).map(toMountEntry);
  },
  async at(path, o) {
    const [lines, resolved] = await Promise.all([readMountinfo(o.signal), resolveMountPoint(path)]);
    return stackAt(lines, resolved).map(toMountEntry);
  },
};

function carriesMountTable(runner: CommandRunner): runner is RunnerWithMountTable {
  return 'mountTable' in runner;
}

/** The table the helpers below read for `runner`: its own when it carries one, else the host's. */
export function mountTableOf(runner: CommandRunner): MountTable {
  return carriesMountTable(runner) ? runner.mountTable : hostMountTable;
}

const COLUMNS = 'TARGET,SOURCE,FSTYPE,OPTIONS,VFS-OPTIONS,FS-OPTIONS';

function text(entry: Record<string, unknown>, key: string): string {
  const v = entry[key];
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') throw new TypeError(`"${key}" is not a string`);
  return v;
}

function split(options: string): string[] {
  return options === '' ? [] : options.split(',');
}

function decodeEntry(value: unknown, out: MountEntry[]): void {
  if (typeof value !== 'object' || value === null) throw new TypeError('a filesystem entry is not an object');
  const e = value as Record<string, unknown>;
  out.push({
    target: text(e, 'target'),
    source: text(e, 'source'),
    fstype: text(e, 'fstype'),
    options: split(text(e, 'options')),
    vfsOptions: split(text(e, 'vfs-options')),
    fsOptions: split(text(e, 'fs-options')),
  });
  const children = e['children'];
  if (Array.isArray(children)) children.forEach((c) => decodeEntry(c, out));
}

/** Decode `findmnt -J` output (flat or nested); no output at all means no mounts. */
export function decodeFindmnt(value: unknown): MountEntry[] {
  if (value === undefined) return [];
  const list = (value as { filesystems?: unknown } | null)?.filesystems;
  if (!Array.isArray(list)) throw new TypeError('"filesystems" is not an array');
  const out: MountEntry[] = [];
  list.forEach((v) => decodeEntry(v, out));
  return out;
}

async function query(runner: CommandRunner, args: string[], o: ToolCallOptions): Promise<MountEntry[]> {
  // Exit code 1: nothing matched (also when the path does not exist).
  const options = { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.query, okExitCodes: [0, 1] };
  return runJson(runner, { command: 'findmnt', args, options }, (v) => {
    try {
      return decodeFindmnt(v);
    } catch (e) {
      const rendered = renderCommand('findmnt', args);
      throw new CommandFailedError(`${rendered}: unexpected output (${(e as Error).message})`, rendered, 0, '');
    }
  });
}

/** The table as `findmnt -J` on `runner` reports it (test doubles script these calls). */
export function findmntTable(runner: CommandRunner): MountTable {
  return {
    list: (o) => query(runner, ['-J', '--list', '-o', COLUMNS], o),
    at: (path, o) => query(runner, ['-J', '-o', COLUMNS, '--mountpoint', path], o),
  };
}

/** The mount whose mount point is exactly `path` (the topmost one when mounts are stacked), if any. */
export async function findMountAt(
  runner: CommandRunner,
  path: string,
  o: ToolCallOptions = {},
): Promise<MountEntry | undefined> {
  return (await mountTableOf(runner).at(path, o)).at(-1);
}

/** The whole mount table, in mount order (oldest first). */
export async function listMounts(runner: CommandRunner, o: ToolCallOptions = {}): Promise<MountEntry[]> {
  return mountTableOf(runner).list(o);
}

/** Every mount whose mount point is `path` or below it (for cleanup), deepest first. */
export async function findMountsUnder(
  runner: CommandRunner,
  path: string,
  o: ToolCallOptions = {},
): Promise<MountEntry[]> {
  const all = await listMounts(runner, o);
  const prefix = path.endsWith('/') ? path : `${path}/`;
  return all.filter((m) => m.target === path || m.target.startsWith(prefix)).reverse();
}

/**
 * The device part of a findmnt SOURCE: "/dev/loop3" for "/dev/loop3" and "/dev/loop3[/dir]"
 * (a bind mount of a subtree); undefined for pseudo sources such as "devtmpfs[/loop3]".
 */
export function sourceDevice(source: string): string | undefined {
  const device = source.replace(/\[.*\]$/, '');
  return device.startsWith('/') ? device : undefined;
}

/** Whether the mount's subtree is the filesystem root (not a bind of a subdirectory). */
export function isWholeFilesystem(entry: MountEntry): boolean {
  const root = /\[(.*)\]$/.exec(entry.source)?.[1];
  return root === undefined || root === '/';
}
