// Mount-table queries through `findmnt -J` (JSON output, decoded and validated here), so the CSI
// services can tell whether a path is staged/published and with which device and options. The
// per-mount (VFS) and per-filesystem (superblock) options are kept apart: a filesystem that the
// kernel switched to read-only after errors shows `ro` only in the latter.
import { CommandFailedError, renderCommand, runJson, type CommandRunner } from '@pmem-csi/runtime';
import { TOOL_TIMEOUTS, type ToolCallOptions } from './tool-options.js';

/** One mount as findmnt reports it. */
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

/** The mount whose mount point is exactly `path` (the topmost one when mounts are stacked), if any. */
export async function findMountAt(
  runner: CommandRunner,
  path: string,
  o: ToolCallOptions = {},
): Promise<MountEntry | undefined> {
  const entries = await query(runner, ['-J', '-o', COLUMNS, '--mountpoint', path], o);
  return entries.at(-1);
}

/** The whole mount table, in mount order (oldest first). */
export async function listMounts(runner: CommandRunner, o: ToolCallOptions = {}): Promise<MountEntry[]> {
  return query(runner, ['-J', '--list', '-o', COLUMNS], o);
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
