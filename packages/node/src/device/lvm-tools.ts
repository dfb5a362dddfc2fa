// Typed wrapper around the LVM commands the lvm device manager needs, and strict parsers for their
// JSON reports. LVM's JSON (`--reportformat json`) is {"report":[{"vg":[{...}]}]} with EVERY value a
// string, numbers included ("4194304"); `--units b --nosuffix` makes sizes plain byte counts.
// The device manager reads its state (VGs with their tags, LVs) with ONE `lvm fullreport` process
// rather than `vgs` and then `lvs`: each LVM process scans every device (~0.35 s under TCG in the
// QEMU tier, where the two calls took half of the lvm guest's time), and one report is one
// consistent snapshot.
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
/**
 * `lvm fullreport`: per VG one report object with all five subreports (vg, pv, lv, pvseg, seg); the
 * PVs in no VG come as a last object with only pv and pvseg. Every subreport gets a field list
 * (without one it prints LVM's default columns); pv, pvseg and seg get one cheap field each, as
 * they cannot be left out. LVs as `lvs` shows them: hidden ones (`[x_cdata]`, `[lvol0_pmspare]`)
 * only with --all, which is not given.
 */
const FULL_REPORT_ARGS = [
  'fullreport',
  '--reportformat',
  'json',
  '--units',
  'b',
  '--nosuffix',
  '--configreport',
  'vg',
  '-o',
  VG_FIELDS,
  '--configreport',
  'lv',
  '-o',
  LV_FIELDS,
  '--configreport',
  'pv',
  '-o',
  'pv_name',
  '--configreport',
  'pvseg',
  '-o',
  'pvseg_start',
  '--configreport',
  'seg',
  '-o',
  'seg_start',
];

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

/** The report objects of LVM JSON output; empty output counts as none. */
function reportObjects(value: unknown, source: string): Array<{ report: Json; at: string }> {
  if (value === undefined) return [];
  if (!isObject(value) || !Array.isArray(value['report']))
    fail(source, '', `expected {"report":[...]}, got ${describe(value)}`);
  return value['report'].map((report: unknown, i: number) => {
    const at = `.report[${i}]`;
    if (!isObject(report)) fail(source, at, `expected an object, got ${describe(report)}`);
    return { report, at };
  });
}

/**
 * The rows of one kind ("vg", "lv", "pv") across all reports; empty output counts as no rows. With
 * `optional`, a report object without that kind has none of it (fullreport's object of PVs in no VG).
 */
function reportRows(
  value: unknown,
  kind: string,
  source: string,
  optional = false,
): Array<{ row: Json; path: string }> {
  const rows: Array<{ row: Json; path: string }> = [];
  for (const { report, at } of reportObjects(value, source)) {
    const list = report[kind];
    if (list === undefined && optional) continue;
    if (!Array.isArray(list)) fail(source, `${at}.${kind}`, `expected an array, got ${describe(list)}`);
    list.forEach((row: unknown, j: number) => {
      if (!isObject(row)) fail(source, `${at}.${kind}[${j}]`, `expected an object, got ${describe(row)}`);
      rows.push({ row, path: `${at}.${kind}[${j}]` });
    });
  }
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

function vgRow(r: { row: Json; path: string }, source: string): VolumeGroup {
  const tags = text(r, 'vg_tags', source);
  return {
    name: text(r, 'vg_name', source),
    size: bytes(r, 'vg_size', source),
    free: bytes(r, 'vg_free', source),
    extentSize: bytes(r, 'vg_extent_size', source),
    tags: tags === '' ? [] : tags.split(','),
  };
}

function lvRow(r: { row: Json; path: string }, source: string): LogicalVolume {
  return {
    name: text(r, 'lv_name', source),
    vgName: text(r, 'vg_name', source),
    size: bytes(r, 'lv_size', source),
    path: text(r, 'lv_path', source),
    attr: text(r, 'lv_attr', source),
  };
}

/** Parse `vgs --reportformat json --units b --nosuffix -o vg_name,vg_size,vg_free,vg_extent_size,vg_tags`. */
export function parseVgsReport(value: unknown, source = 'vgs'): VolumeGroup[] {
  return reportRows(value, 'vg', source).map((r) => vgRow(r, source));
}

/** Parse `lvs --reportformat json --units b --nosuffix -o lv_name,vg_name,lv_size,lv_path,lv_attr`. */
export function parseLvsReport(value: unknown, source = 'lvs'): LogicalVolume[] {
  return reportRows(value, 'lv', source).map((r) => lvRow(r, source));
}

/** Parse `pvs --reportformat json --units b --nosuffix -o pv_name,vg_name`. */
export function parsePvsReport(value: unknown, source = 'pvs'): PhysicalVolume[] {
  return reportRows(value, 'pv', source).map((r) => ({
    name: text(r, 'pv_name', source),
    vgName: text(r, 'vg_name', source),
  }));
}

/** The VGs and LVs of the host, from one `lvm fullreport`. */
export interface LvmReport {
  /** By name, as `vgs` lists them. */
  readonly vgs: VolumeGroup[];
  /** By VG name, then LV name, as `lvs` lists them. */
  readonly lvs: LogicalVolume[];
}

/** Byte order, as LVM sorts its report rows (strcmp; LVM names are ASCII). */
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Parse `lvm fullreport` (FULL_REPORT_ARGS): the rows of its "vg" and "lv" subreports, in the order
 * `vgs` and `lvs` print them (fullreport orders its per-VG objects otherwise, and which VG a new LV
 * goes to, and which of two same-named LVs is found, depend on that order). A report object has
 * "vg" and "lv" both (a VG's, "lv" empty when it has none) or neither (the PVs in no VG).
 */
export function parseFullReport(value: unknown, source = 'lvm fullreport'): LvmReport {
  for (const { report, at } of reportObjects(value, source)) {
    const has = ['vg', 'lv'].filter((k) => report[k] !== undefined);
    if (has.length === 1)
      fail(source, at, `expected "vg" and "lv" together, or neither (PVs in no VG), got only "${has[0] ?? ''}"`);
  }
  const vgs = reportRows(value, 'vg', source, true).map((r) => vgRow(r, source));
  const lvs = reportRows(value, 'lv', source, true).map((r) => lvRow(r, source));
  return {
    vgs: vgs.sort((a, b) => byText(a.name, b.name)),
    lvs: lvs.sort((a, b) => byText(a.vgName, b.vgName) || byText(a.name, b.name)),
  };
}

/**
 * The LVM commands the lvm device manager runs: the reports and changes each by its own tool name,
 * as Debian's lvm2 installs them, and fullreport through `lvm` itself.
 */
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

  /** All volume groups and (visible) logical volumes on the host, from one LVM process. */
  fullReport(o: LvmCallOptions = {}): Promise<LvmReport> {
    return runJson(this.#runner, { command: 'lvm', args: FULL_REPORT_ARGS, options: { signal: o.signal } }, (v) =>
      parseFullReport(v),
    );
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
