// Builders of ndctl/LVM outputs in the shapes of the JSON fixtures next to this file (see README.md),
// for manager tests that need many scenario variants. Test-only code.
import type { ScriptedReply } from '@pmem-csi/runtime/testing';

export interface RegionSpec {
  dev: string;
  size: number;
  available?: number;
  extent?: number;
  /** Omit the align field with null. */
  align?: number | null;
  dimms?: string[];
  disabled?: boolean;
}

export interface NamespaceSpec {
  dev: string;
  size: number;
  name?: string;
  mode?: 'fsdax' | 'sector' | 'raw';
  blockdev?: string;
  disabled?: boolean;
  /** Label-less io namespaces have no uuid. */
  uuid?: string | null;
  /** The namespace's own uuid (`ndctl list -v`'s raw_uuid), e.g. one carrying an owner mark. */
  rawUuid?: string;
}

function region(r: RegionSpec): Record<string, unknown> {
  const dimms = r.dimms ?? ['nmem0'];
  const out: Record<string, unknown> = { dev: r.dev, size: r.size };
  if (r.align !== null) out['align'] = r.align ?? 16777216;
  Object.assign(out, {
    available_size: r.available ?? r.size,
    max_available_extent: r.extent ?? r.available ?? r.size,
    type: 'pmem',
    iset_id: 52512795602891,
    mappings: dimms.map((dimm, position) => ({ dimm, offset: 0, length: r.size / dimms.length, position })),
  });
  if (r.disabled) out['state'] = 'disabled';
  out['persistence_domain'] = 'unknown';
  return out;
}

/** `ndctl list --buses --regions --dimms --idle` output. */
export function ndctlRegions(buses: Array<{ dev: string; regions: RegionSpec[] }>): string {
  return JSON.stringify(buses.map((b) => ({
    provider: 'ACPI.NFIT', dev: b.dev, scrub_state: 'idle',
    dimms: [...new Set(b.regions.flatMap((r) => r.dimms ?? ['nmem0']))].map((dev, handle) => ({ dev, id: `8680-5634120${handle}`, handle, phys_id: handle })),
    regions: b.regions.map(region),
  })), null, 2);
}

function namespace(n: NamespaceSpec): Record<string, unknown> {
  const mode = n.mode ?? 'fsdax';
  const out: Record<string, unknown> = { dev: n.dev, mode };
  if (mode === 'fsdax') out['map'] = 'dev';
  out['size'] = n.size;
  if (n.uuid !== null) out['uuid'] = n.uuid ?? '0d4f6a2e-8b1c-4d3e-9f5a-6b7c8d9e0f1a';
  if (n.rawUuid !== undefined) out['raw_uuid'] = n.rawUuid;
  out['sector_size'] = mode === 'sector' ? 4096 : 512;
  if (mode === 'fsdax') out['align'] = 2097152;
  if (!n.disabled && n.blockdev !== undefined) out['blockdev'] = n.blockdev;
  if (n.disabled) out['state'] = 'disabled';
  if (n.name !== undefined) out['name'] = n.name;
  return out;
}

/** `ndctl list --namespaces ...` output: nothing at all when nothing matches. */
export function ndctlNamespaces(namespaces: NamespaceSpec[]): string {
  return namespaces.length === 0 ? '' : JSON.stringify(namespaces.map(namespace), null, 2);
}

/** `ndctl create-namespace` output (human-readable size, as the tool prints it). */
export function ndctlCreated(n: NamespaceSpec): string {
  return JSON.stringify({ ...namespace(n), size: `${(n.size / 2 ** 30).toFixed(2)} GiB` }, null, 2);
}

function report(kind: string, rows: Array<Record<string, string>>): string {
  return JSON.stringify({ report: [{ [kind]: rows }] }, null, 4);
}

export interface VgSpec { name: string; size: number; free: number; extent?: number; tags?: string }
/** An LV; `path: ''` for an internal one. */
export interface LvSpec { name: string; vg: string; size: number; path?: string }

const vgRow = (g: VgSpec): Record<string, string> => ({
  vg_name: g.name, vg_size: String(g.size), vg_free: String(g.free), vg_extent_size: String(g.extent ?? 4194304), vg_tags: g.tags ?? '',
});
const lvRow = (l: LvSpec): Record<string, string> => ({
  lv_name: l.name, vg_name: l.vg, lv_size: String(l.size), lv_path: l.path ?? `/dev/${l.vg}/${l.name}`, lv_attr: '-wi-a-----',
});

export function vgsReport(vgs: VgSpec[]): string {
  return report('vg', vgs.map(vgRow));
}

/**
 * `lvm fullreport` output (FULL_REPORT_ARGS of lvm-tools.ts), in the shape lvm2 2.03.16 prints: one
 * report object per VG with its vg, pv, lv, pvseg and seg rows ("lv": [] without LVs), then one
 * with only pv and pvseg for the PVs in no VG (`orphanPvs`). The VGs come in the order given (LVM's
 * own order is not by name). Every LV must be in one of `vgs`, as in LVM.
 */
export function fullReport(r: { vgs: VgSpec[]; lvs?: LvSpec[]; orphanPvs?: string[] }): string {
  const lvs = r.lvs ?? [];
  const stray = lvs.filter((l) => !r.vgs.some((g) => g.name === l.vg));
  if (stray.length > 0) throw new Error(`fullReport: LVs of no given VG: ${stray.map((l) => `${l.vg}/${l.name}`).join(', ')}`);
  const reports: Array<Record<string, Array<Record<string, string>>>> = r.vgs.map((g, i) => {
    const own = lvs.filter((l) => l.vg === g.name);
    return {
      vg: [vgRow(g)],
      pv: [{ pv_name: `/dev/pmem${i}` }],
      lv: own.map(lvRow),
      pvseg: [{ pvseg_start: '0' }],
      seg: own.map(() => ({ seg_start: '0' })),
    };
  });
  const orphans = r.orphanPvs ?? [];
  if (orphans.length > 0)
    reports.push({ pv: orphans.map((pv_name) => ({ pv_name })), pvseg: orphans.map(() => ({ pvseg_start: '0' })) });
  return JSON.stringify({ report: reports }, null, 4);
}

export function pvsReport(pvs: Array<{ name: string; vg: string }>): string {
  return report('pv', pvs.map((p) => ({ pv_name: p.name, vg_name: p.vg })));
}

const REPORT = ['--reportformat', 'json', '--units', 'b', '--nosuffix', '-o'];
const FULL_REPORT = [
  'fullreport', '--reportformat', 'json', '--units', 'b', '--nosuffix',
  '--configreport', 'vg', '-o', 'vg_name,vg_size,vg_free,vg_extent_size,vg_tags',
  '--configreport', 'lv', '-o', 'lv_name,vg_name,lv_size,lv_path,lv_attr',
  '--configreport', 'pv', '-o', 'pv_name',
  '--configreport', 'pvseg', '-o', 'pvseg_start',
  '--configreport', 'seg', '-o', 'seg_start',
];

/** Scripted replies for the exact ndctl and LVM report commands (setup's vgs and pvs, every call's fullreport). */
export const reply = {
  regions: (stdout: string): ScriptedReply => ({ command: 'ndctl', args: ['list', '--buses', '--regions', '--dimms', '--idle'], exact: true, stdout }),
  namespaces: (filter: string[], stdout: string): ScriptedReply => ({ command: 'ndctl', args: ['list', '--namespaces', '--idle', '-v', ...filter], exact: true, stdout }),
  vgs: (stdout: string): ScriptedReply => ({ command: 'vgs', args: [...REPORT, 'vg_name,vg_size,vg_free,vg_extent_size,vg_tags'], exact: true, stdout }),
  pvs: (stdout: string): ScriptedReply => ({ command: 'pvs', args: [...REPORT, 'pv_name,vg_name'], exact: true, stdout }),
  /** The state read of every call after setup: one `lvm fullreport` (see fullReport()). */
  fullReport: (stdout: string): ScriptedReply => ({ command: 'lvm', args: FULL_REPORT, exact: true, stdout }),
};

/** A recorded call, for asserting exact sequences. */
export type Call = { command: string; args: readonly string[] };

export const calls = {
  regions: { command: 'ndctl', args: ['list', '--buses', '--regions', '--dimms', '--idle'] },
  namespaces: (...filter: string[]): Call => ({ command: 'ndctl', args: ['list', '--namespaces', '--idle', '-v', ...filter] }),
  vgs: { command: 'vgs', args: [...REPORT, 'vg_name,vg_size,vg_free,vg_extent_size,vg_tags'] },
  pvs: { command: 'pvs', args: [...REPORT, 'pv_name,vg_name'] },
  fullReport: { command: 'lvm', args: FULL_REPORT },
  zeroHead: (path: string): Call => ({ command: 'dd', args: ['if=/dev/zero', `of=${path}`, 'bs=4096', 'count=1', 'oflag=direct', 'conv=fsync'] }),
  zeroAll: (path: string, bytes: number): Call => ({
    command: 'dd', args: ['if=/dev/zero', `of=${path}`, 'bs=1M', `count=${bytes}`, 'iflag=count_bytes', 'oflag=direct', 'conv=fsync'],
  }),
};
