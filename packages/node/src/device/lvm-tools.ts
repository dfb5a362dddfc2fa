// Typed wrapper around the LVM commands the lvm device manager needs, and strict parsers for their
// JSON reports. LVM's JSON (`--reportformat json`) is {"report":[{"vg":[{...}]}]} with EVERY value a
// string, numbers included ("4194304"); `--units b --nosuffix` makes sizes plain byte counts.
// Callers serialize calls per node. "Not found" is recognized the way TopoLVM does it: exit code 5
// first (LVM's ECMD_FAILED), and only then the message, because exit code 5 has other causes too.
import { CommandError, runJson, type CommandRunner } from '@pmem-csi/runtime';
import { InternalError } from '@pmem-csi/csi';

export interface VolumeGroup {
  readonly name: string;
  readonly size: number;
  readonly free: number;
  readonly extentSize: number;
  readonly tags: readonly string[];
}

export interface LogicalVolume {
  readonly name: string;
  readonly vgName: string;
  readonly size: number;
  /** /dev/<vg>/<lv>; empty for internal LVs. */
  readonly path: string;
  /** e.g. "-wi-a-----" (5th character "a" = active). */
  readonly attr: string;
}

export interface PhysicalVolume {
  readonly name: string;
  /** Empty when the PV belongs to no VG. */
  readonly vgName: string;
}

export interface LvmCallOptions {
  readonly signal?: AbortSignal;
}

/** LVM's exit code for a failed command (ECMD_FAILED), which includes "not found". */
export const LVM_EXIT_FAILED = 5;
const NOT_FOUND = /Volume group "(.*?)" not found|Failed to find logical volume "(.*?)"/;

/** True when an LVM command failed because its VG or LV does not exist. */
export function isLvmNotFound(err: unknown): boolean {
  return err instanceof CommandError && err.exitCode === LVM_EXIT_FAILED && NOT_FOUND.test(err.stderr);
}

const REPORT_ARGS = ['--reportformat', 'json', '--units', 'b', '--nosuffix', '-o'];
const VG_FIELDS = 'vg_name,vg_size,vg_free,vg_extent_size,vg_tags';
const LV_FIELDS = 'lv_name,vg_name,lv_size,lv_path,lv_attr';
const PV_FIELDS = 'pv_name,vg_name';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(source: string, path: string, problem: string): never {
  throw new InternalError(`${source}: unexpected output at ${path || '<top>'}: ${problem}`);
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The rows of one kind ("vg", "lv", "pv") across all reports; empty output counts as no rows. */
function reportRows(value: unknown, kind: string, source: string): Array<{ row: Json; path: string }> {
  if (value === undefined) return [];
  if (!isObject(value) || !Array.isArray(value['report']))
    fail(source, '', `expected {"report":[...]}, got ${describe(value)}`);
  const rows: Array<{ row: Json; path: string }> = [];
  value['report'].forEach((report: unknown, i: number) => {
    const at = `.report[${i}]`;
    if (!isObject(report)) fail(source, at, `expected an object, got ${describe(report)}`);
    const list = report[kind];
    if (!Array.isArray(list)) fail(source, `${at}.${kind}`, `expected an array, got ${describe(list)}`);
    list.forEach((row: unknown, j: number) => {
      if (!isObject(row)) fail(source, `${at}.${kind}[${j}]`, `expected an object, got ${describe(row)}`);
      rows.push({ row, path: `${at}.${kind}[${j}]` });
    });
  });
  return rows;
}

function text(r: { row: Json; path: string }, field: string, source: string): string {
  const v = r.row[field];
  if (typeof v !== 'string') fail(source, `${r.path}.${field}`, `expected a string, got ${describe(v)}`);
  return v;
}

function bytes(r: { row: Json; path: string }, field: string, source: string): number {
  const v = text(r, field, source);
  const n = /^\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n))
    fail(source, `${r.path}.${field}`, `expected a byte count as a string of digits, got ${describe(v)}`);
  return n;
}

/** Parse `vgs --reportformat json --units b --nosuffix -o vg_name,vg_size,vg_free,vg_extent_size,vg_tags`. */
export function parseVgsReport(value: unknown, source = 'vgs'): VolumeGroup[] {
  return reportRows(value, 'vg', source).map((r) => {
    const tags = text(r, 'vg_tags', source);
    return {
      name: text(r, 'vg_name', source),
      size: bytes(r, 'vg_size', source),
      free: bytes(r, 'vg_free', source),
      extentSize: bytes(r, 'vg_extent_size', source),
      tags: tags === '' ? [] : tags.split(','),
    };
  });
}

/** Parse `lvs --reportformat json --units b --nosuffix -o lv_name,vg_name,lv_size,lv_path,lv_attr`. */
export function parseLvsReport(value: unknown, source = 'lvs'): LogicalVolume[] {
  return reportRows(value, 'lv', source).map((r) => ({
    name: text(r, 'lv_name', source),
    vgName: text(r, 'vg_name', source),
    size: bytes(r, 'lv_size', source),
    path: text(r, 'lv_path', source),
    attr: text(r, 'lv_attr', source),
  }));
}

/** Parse `pvs --reportformat json --units b --nosuffix -o pv_name,vg_name`. */
export function parsePvsReport(value: unknown, source = 'pvs'): PhysicalVolume[] {
  return reportRows(value, 'pv', source).map((r) => ({
    name: text(r, 'pv_name', source),
    vgName: text(r, 'vg_name', source),
  }));
}

/** The LVM commands the lvm device manager runs (each a separate tool name, as Debian's lvm2 installs them). */
export class LvmTools {
  readonly #runner: CommandRunner;

  constructor(runner: CommandRunner) {
    this.#runner = runner;
  }

  async #report<T>(command: string, fields: string, parse: (v: unknown) => T, o: LvmCallOptions): Promise<T> {
    return runJson(this.#runner, { command, args: [...REPORT_ARGS, fields], options: { signal: o.signal } }, parse);
  }

  async #run(command: string, args: string[], o: LvmCallOptions): Promise<void> {
    await this.#runner.run(command, args, { signal: o.signal });
  }

  /** All volume groups on the host. */
  vgs(o: LvmCallOptions = {}): Promise<VolumeGroup[]> {
    return this.#report('vgs', VG_FIELDS, (v) => parseVgsReport(v), o);
  }

  /** All logical volumes on the host. */
  lvs(o: LvmCallOptions = {}): Promise<LogicalVolume[]> {
    return this.#report('lvs', LV_FIELDS, (v) => parseLvsReport(v), o);
  }

  /** All physical volumes on the host. */
  pvs(o: LvmCallOptions = {}): Promise<PhysicalVolume[]> {
    return this.#report('pvs', PV_FIELDS, (v) => parsePvsReport(v), o);
  }

  /** Initialize a PV; -y answers LVM's "wipe signature?" prompt (callers only pass devices they own). */
  pvcreate(device: string, o: LvmCallOptions = {}): Promise<void> {
    return this.#run('pvcreate', ['-y', device], o);
  }

  /** Create a VG, with `tags` (--addtag each) from its first moment, so that it is never untagged. */
  vgcreate(
    vg: string,
    devices: readonly string[],
    o: LvmCallOptions & { tags?: readonly string[] } = {},
  ): Promise<void> {
    const tags = (o.tags ?? []).flatMap((t) => ['--addtag', t]);
    return this.#run('vgcreate', [...tags, vg, ...devices], o);
  }

  /** Add a tag to an existing VG (adopting one made before the owner tags). */
  vgAddTag(vg: string, tag: string, o: LvmCallOptions = {}): Promise<void> {
    return this.#run('vgchange', ['--addtag', tag, vg], o);
  }

  vgextend(vg: string, device: string, o: LvmCallOptions = {}): Promise<void> {
    return this.#run('vgextend', [vg, device], o);
  }

  /** Create an LV of exactly `size` bytes (a multiple of the extent size) without zeroing (-Zn). */
  lvcreate(req: { vg: string; name: string; size: number }, o: LvmCallOptions = {}): Promise<void> {
    return this.#run('lvcreate', ['-Zn', '-y', '-L', `${req.size}b`, '-n', req.name, req.vg], o);
  }

  lvremove(vg: string, lv: string, o: LvmCallOptions = {}): Promise<void> {
    return this.#run('lvremove', ['-fy', `${vg}/${lv}`], o);
  }

  /** Grow an LV to `size` bytes (a multiple of the extent size). */
  lvextend(req: { vg: string; name: string; size: number }, o: LvmCallOptions = {}): Promise<void> {
    return this.#run('lvextend', ['-L', `${req.size}b`, `${req.vg}/${req.name}`], o);
  }
}
