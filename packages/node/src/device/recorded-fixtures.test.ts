// The ndctl and LVM parsers on outputs RECORDED in the QEMU guest of the real-PMEM tier (two
// emulated 4 GiB NVDIMMs; see __fixtures__/recorded/README.md for how and with which versions).
// Every recorded file goes through the parser of the command that printed it; then the facts the
// device managers rely on are checked on the real shapes (label-less regions, idle seeds that keep
// their name, create-namespace printing numbers, LVM's string-only JSON, ...).
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { GiB, MiB } from '@pmem-csi/csi';
import { maxVolumeSize, usableInExtent } from './direct-layout.js';
import { largestLvSize, lvmNamespaceSize } from './lvm-layout.js';
import { parseFullReport, parseLvsReport, parsePvsReport, parseVgsReport } from './lvm-tools.js';
import { labelLessNamespace, parseCreatedNamespace, parseNdctlListing, type NdRegion } from './ndctl.js';

type Mode = 'lvm' | 'direct';

interface RecordedIndex {
  readonly recordedWith: Record<string, string>;
  /** File name → the exact command line that printed it. */
  readonly files: Record<string, string>;
}

const text = (mode: Mode, file: string): string =>
  readFileSync(new URL(`./__fixtures__/recorded/${mode}/${file}`, import.meta.url), 'utf8');

/** Tool output as runJson sees it: empty output is "nothing". */
const json = (mode: Mode, file: string): unknown => {
  const t = text(mode, file).trim();
  return t === '' ? undefined : (JSON.parse(t) as unknown);
};

const index = (mode: Mode): RecordedIndex => JSON.parse(text(mode, 'index.json')) as RecordedIndex;

/** The parser for the command that printed a file (by tool name and subcommand). */
function parserFor(command: string): (value: unknown, source: string) => unknown {
  const [exe = '', sub = ''] = command.split(' ');
  const tool = exe.slice(exe.lastIndexOf('/') + 1);
  if (tool === 'ndctl' && sub === 'list') return parseNdctlListing;
  if (tool === 'ndctl' && sub === 'create-namespace') return parseCreatedNamespace;
  if (tool === 'vgs') return parseVgsReport;
  if (tool === 'lvs') return parseLvsReport;
  if (tool === 'pvs') return parsePvsReport;
  if (tool === 'lvm' && sub === 'fullreport') return parseFullReport;
  throw new Error(`no parser for ${command}`);
}

const listing = (mode: Mode, file: string) => parseNdctlListing(json(mode, file), index(mode).files[file]);
const region = (regions: readonly NdRegion[], dev: string): NdRegion => {
  const r = regions.find((x) => x.dev === dev);
  if (r === undefined) throw new Error(`no ${dev} in the recorded listing`);
  return r;
};

describe.each(['lvm', 'direct'] as const)('recorded %s-mode outputs', (mode) => {
  it('were recorded with the versions of the guest image', () => {
    expect(Object.keys(index(mode).recordedWith)).toEqual(expect.arrayContaining(['KERNEL', 'NDCTL', 'LVM2', 'QEMU']));
  });

  it.each(Object.entries(index(mode).files))(
    '%s parses with the parser of the command that printed it',
    (file, command) => {
      expect(() => parserFor(command)(json(mode, file), command)).not.toThrow();
    },
  );
});

describe('QEMU NVDIMMs, blank (label-less)', () => {
  const { regions, namespaces } = listing('lvm', 'ndctl-list-BRDi-labelless.json');

  it('two 4 GiB regions on one ACPI.NFIT bus, one DIMM each, no iset_id, and NOTHING available', () => {
    expect(regions.map((r) => r.dev)).toEqual(['region1', 'region0']);
    for (const [i, r] of regions.entries()) {
      expect(r).toEqual({
        dev: `region${1 - i}`,
        bus: 'ndbus0',
        provider: 'ACPI.NFIT',
        size: 4 * GiB,
        availableSize: 0,
        maxAvailableExtent: 0,
        align: 16 * MiB,
        type: 'pmem',
        isetId: undefined,
        interleaveWays: 1,
        dimms: [`nmem${1 - i}`],
        enabled: true,
      });
    }
    expect(namespaces).toEqual([]);
  });

  it('so a namespace cannot be sized from this listing: it must be listed again after init-labels', () => {
    for (const r of regions) expect(lvmNamespaceSize(r, 60)).toBe(0);
    const labelled = listing('direct', 'ndctl-list-BRDi-labelled.json').regions;
    for (const r of labelled) {
      expect(r).toMatchObject({ size: 4 * GiB, availableSize: 4 * GiB, maxAvailableExtent: 4 * GiB });
      expect(lvmNamespaceSize(r, 60)).toBe(2 * GiB);
      expect(lvmNamespaceSize(r, 100)).toBe(4 * GiB);
    }
  });

  it('each region has one raw namespace spanning it, without uuid: the label-less marker', () => {
    for (const dev of ['region0', 'region1']) {
      const ns = listing('lvm', `ndctl-list-Ni-labelless-${dev}.json`).namespaces;
      const n = dev.slice('region'.length);
      expect(labelLessNamespace(ns)).toEqual({
        dev: `namespace${n}.0`,
        region: dev,
        mode: 'raw',
        size: 4 * GiB,
        uuid: undefined,
        rawUuid: undefined,
        name: undefined,
        blockdev: `pmem${n}`,
        map: undefined,
        sectorSize: 512,
        align: undefined,
        enabled: true,
      });
    }
    expect(listing('lvm', 'ndctl-list-Ni-labelless-all.json').namespaces.map((ns) => ns.blockdev)).toEqual([
      'pmem1',
      'pmem0',
    ]);
  });

  it('after init-labels only idle seeds are left (size 0, zero uuid, disabled): no label-less marker', () => {
    const ns = listing('direct', 'ndctl-list-Ni-labelled-idle.json').namespaces;
    expect(ns.length).toBeGreaterThan(0);
    for (const n of ns)
      expect(n).toMatchObject({
        mode: 'raw',
        size: 0,
        uuid: '00000000-0000-0000-0000-000000000000',
        enabled: false,
        blockdev: undefined,
      });
    expect(labelLessNamespace(ns)).toBeUndefined();
  });
});

describe('lvm mode on the QEMU NVDIMMs (pmemPercentage 60)', () => {
  it('one fsdax map=dev "pmem-csi" namespace of 2 GiB raw per region; the kernel keeps 34 MiB of it', () => {
    const ours = listing('lvm', 'ndctl-list-Ni-lvm.json').namespaces.filter((ns) => ns.name === 'pmem-csi');
    expect(ours.map((ns) => [ns.region, ns.blockdev]).sort()).toEqual([
      ['region0', 'pmem0'],
      ['region1', 'pmem1'],
    ]);
    for (const ns of ours) {
      expect(ns).toMatchObject({
        mode: 'fsdax',
        map: 'dev',
        size: 2 * GiB - 34 * MiB,
        align: 2 * MiB,
        sectorSize: 512,
        enabled: true,
      });
      expect(ns.uuid).toMatch(/^[0-9a-f-]{36}$/);
    }
    const regions = listing('lvm', 'ndctl-list-BRDi-lvm.json').regions;
    for (const r of regions)
      expect(r).toMatchObject({ size: 4 * GiB, availableSize: 2 * GiB, maxAvailableExtent: 2 * GiB });
  });

  it('one VG per region, named <bus><region>fsdax, 4 MiB extents, sizes as digit strings', () => {
    const vgs = parseVgsReport(json('lvm', 'vgs-lvm.json'));
    expect(vgs).toEqual(
      ['ndbus0region0fsdax', 'ndbus0region1fsdax'].map((name) => ({
        name,
        size: 2 * GiB - 36 * MiB,
        free: 2 * GiB - 36 * MiB,
        extentSize: 4 * MiB,
        tags: [],
      })),
    );
    expect(largestLvSize(vgs)).toBe(2 * GiB - 36 * MiB);
    expect(parsePvsReport(json('lvm', 'pvs-lvm.json'))).toEqual([
      { name: '/dev/pmem0', vgName: 'ndbus0region0fsdax' },
      { name: '/dev/pmem1', vgName: 'ndbus0region1fsdax' },
    ]);
  });

  it('LVs: path /dev/<vg>/<lv>, attr -wi-a-----; two volumes went to two VGs', () => {
    expect(parseLvsReport(json('lvm', 'lvs-lvm.json'))).toEqual([
      {
        name: 'spread-a',
        vgName: 'ndbus0region0fsdax',
        size: 100 * MiB,
        path: '/dev/ndbus0region0fsdax/spread-a',
        attr: '-wi-a-----',
      },
      {
        name: 'spread-b',
        vgName: 'ndbus0region1fsdax',
        size: 100 * MiB,
        path: '/dev/ndbus0region1fsdax/spread-b',
        attr: '-wi-a-----',
      },
    ]);
    const used = parseVgsReport(json('lvm', 'vgs-lvm-used.json'));
    expect(used.map((g) => g.size - g.free)).toEqual([100 * MiB, 100 * MiB]);
  });

  it('lvm fullreport (every state read, one process): VGs with their owner tags and LVs at once, sorted as vgs and lvs print them though it printed region1 first', () => {
    const printed = json('lvm', 'fullreport-lvm.json') as { report: Array<{ vg?: Array<{ vg_name?: string }> }> };
    expect(printed.report.map((r) => r.vg?.[0]?.vg_name)).toEqual(['ndbus0region1fsdax', 'ndbus0region0fsdax']);
    const { vgs, lvs } = parseFullReport(json('lvm', 'fullreport-lvm.json'));
    expect(vgs).toEqual(
      ['ndbus0region0fsdax', 'ndbus0region1fsdax'].map((name) => ({
        name,
        size: 2 * GiB - 36 * MiB,
        free: 2 * GiB - 36 * MiB - 100 * MiB,
        extentSize: 4 * MiB,
        tags: ['pmem-csi.intel.com/owner=pmem-csi.intel.com'],
      })),
    );
    expect(lvs.map((l) => [l.vgName, l.name, l.size, l.path, l.attr])).toEqual([
      ['ndbus0region0fsdax', 'spread-a', 100 * MiB, '/dev/ndbus0region0fsdax/spread-a', '-wi-a-----'],
      ['ndbus0region1fsdax', 'spread-b', 100 * MiB, '/dev/ndbus0region1fsdax/spread-b', '-wi-a-----'],
    ]);
    // No PV at all: an empty report list, not empty output and not a report object without rows.
    expect(text('lvm', 'fullreport-empty.json').replace(/\s/g, '')).toBe('{"report":[]}');
    expect(parseFullReport(json('lvm', 'fullreport-empty.json'))).toEqual({ vgs: [], lvs: [] });
  });

  it('empty LVM reports are {"report":[{"vg":[]}]} (not empty output)', () => {
    expect(text('lvm', 'vgs-empty.json').trim()).not.toBe('');
    expect(parseVgsReport(json('lvm', 'vgs-empty.json'))).toEqual([]);
    expect(parsePvsReport(json('lvm', 'pvs-empty.json'))).toEqual([]);
    expect(parseLvsReport(json('lvm', 'lvs-empty.json'))).toEqual([]);
  });

  it('the namespaces read back the same after the reboot', () => {
    const live = (file: string) => listing('lvm', file).namespaces.filter((ns) => ns.size > 0);
    expect(live('ndctl-list-Ni-lvm-after-reboot.json')).toEqual(live('ndctl-list-Ni-lvm.json'));
  });
});

describe('direct mode on the QEMU NVDIMMs', () => {
  it('create-namespace prints the new namespace with NUMERIC sizes (ndctl 76); only dev is used', () => {
    for (const [file, blockdev] of [
      ['ndctl-create-namespace-fsdax.json', 'pmem0'],
      ['ndctl-create-namespace-sector.json', 'pmem0s'],
    ] as const) {
      expect(parseCreatedNamespace(json('direct', file))).toBe('namespace0.0');
      expect(json('direct', file)).toMatchObject({ blockdev, size: expect.any(Number) });
    }
  });

  it('a 64 MiB request: 80 MiB raw (16 MiB region align) → 78 MiB fsdax, 78.9 MiB sector', () => {
    expect(json('direct', 'ndctl-create-namespace-fsdax.json')).toMatchObject({
      mode: 'fsdax',
      map: 'dev',
      size: 78 * MiB,
      align: 2 * MiB,
    });
    expect(json('direct', 'ndctl-create-namespace-sector.json')).toMatchObject({
      mode: 'sector',
      size: 82722816,
      sector_size: 4096,
    });
  });

  it('fragmentation: the hole between namespaces is the largest extent, smaller than what is available', () => {
    const { regions } = listing('direct', 'ndctl-list-BRDi-fragmented.json');
    const r0 = region(regions, 'region0');
    expect(r0.maxAvailableExtent).toBeLessThan(r0.availableSize);
    expect(maxVolumeSize(regions)).toBe(usableInExtent(r0, r0.maxAvailableExtent));
    expect(region(regions, 'region1').maxAvailableExtent).toBe(0); // filled by a foreign namespace
  });

  it("destroy-namespace leaves an idle seed that KEEPS the volume's name (size 0, zero uuid): no volume", () => {
    const ns = listing('direct', 'ndctl-list-Ni-direct-persist.json').namespaces;
    const named = ns.filter((n) => n.size === 0 && n.name !== undefined);
    expect(named.length).toBeGreaterThan(0);
    for (const n of named)
      expect(n).toMatchObject({
        mode: 'raw',
        uuid: '00000000-0000-0000-0000-000000000000',
        enabled: false,
        blockdev: undefined,
      });
  });

  it('the first namespace of a region is pmemN (namespaceN.0 is the first seed), later ones pmemN.M', () => {
    const live = listing('direct', 'ndctl-list-Ni-direct.json').namespaces.filter((n) => n.size > 0);
    expect(live.map((n) => [n.name?.slice(0, 6), n.dev, n.blockdev])).toEqual([
      ['app-da', 'namespace1.0', 'pmem1'],
      ['ct-cre', 'namespace0.0', 'pmem0'],
    ]);
    // The foreign 4 GiB namespace (raw = the whole region): 66 MiB go to page metadata and alignment.
    expect(live[0]).toMatchObject({ name: 'app-data', mode: 'fsdax', map: 'dev', size: 4 * GiB - 66 * MiB });
    const sector = listing('direct', 'ndctl-list-Ni-sector.json').namespaces.filter((n) => n.mode === 'sector');
    expect(sector).toEqual([
      expect.objectContaining({
        blockdev: expect.stringMatching(/^pmem0(\.\d+)?s$/),
        sectorSize: 4096,
        map: undefined,
      }),
    ]);
  });

  it('volumes of every kind in one listing: fsdax pmemN.M, sector pmemN(.M)s without map', () => {
    const ns = listing('direct', 'ndctl-list-Ni-direct-persist.json').namespaces.filter((n) => n.size > 0);
    expect(ns.length).toBeGreaterThanOrEqual(3);
    for (const n of ns) {
      expect(n.name).toMatch(/^.{0,6}-[0-9a-f]{56}$/);
      if (n.mode === 'sector')
        expect(n).toMatchObject({
          map: undefined,
          sectorSize: 4096,
          blockdev: expect.stringMatching(/^pmem\d+(\.\d+)?s$/),
        });
      else
        expect(n).toMatchObject({
          mode: 'fsdax',
          map: 'dev',
          align: 2 * MiB,
          blockdev: expect.stringMatching(/^pmem\d+(\.\d+)?$/),
        });
    }
  });
});
