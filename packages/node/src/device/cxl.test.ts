import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { CommandNotFoundError } from '@pmem-csi/runtime';
import { InternalError } from '@pmem-csi/csi';
import { captureLog, ScriptedRunner } from '@pmem-csi/runtime/testing';
import { parseCreatedRegion, parseCxlList } from './cxl-list.js';
import { Cxl, assembleCxlRegions, freePersistentCapacity, planCxlRegions } from './cxl.js';
import { parseNdctlListing } from './ndctl.js';

const fixture = (name: string): string => readFileSync(new URL(`./__fixtures__/cxl/${name}`, import.meta.url), 'utf8');
const json = (name: string): unknown => JSON.parse(fixture(name));
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

describe('parseCxlList (recorded in the QEMU CXL guest)', () => {
  it('two blank devices: memdevs with their host bridges, idle endpoint decoders, two pmem-capable windows', () => {
    const topo = parseCxlList(json('cxl-list-vvv-two-devices.json'));
    expect(topo.memdevs).toEqual([
      {
        memdev: 'mem0',
        pmemSize: 4 * GiB,
        ramSize: 0,
        serial: 2,
        host: '0000:15:00.0',
        hostBridge: 'ACPI0016:00',
        endpoint: 'endpoint3',
      },
      {
        memdev: 'mem1',
        pmemSize: 4 * GiB,
        ramSize: 0,
        serial: 1,
        host: '0000:0d:00.0',
        hostBridge: 'ACPI0016:01',
        endpoint: 'endpoint4',
      },
    ]);
    expect(topo.endpointDecoders).toHaveLength(8);
    expect(topo.endpointDecoders.every((d) => !d.enabled && d.region === undefined && d.dpaSize === 0)).toBe(true);
    expect(topo.rootDecoders).toEqual([
      {
        decoder: 'decoder0.0',
        size: 4 * GiB,
        interleaveWays: 1,
        maxAvailableExtent: 4 * GiB,
        pmemCapable: true,
        targets: ['ACPI0016:01'],
      },
      {
        decoder: 'decoder0.1',
        size: 4 * GiB,
        interleaveWays: 1,
        maxAvailableExtent: 4 * GiB,
        pmemCapable: true,
        targets: ['ACPI0016:00'],
      },
    ]);
    expect(topo.regions).toEqual([]);
  });

  it('after create-region (cxl list -R -vvv): the region under its root decoder, the endpoint decoder holding 256 MiB pmem', () => {
    const topo = parseCxlList(json('cxl-list-R-vvv-one-region.json'));
    expect(topo.regions).toEqual([
      {
        region: 'region0',
        rootDecoder: 'decoder0.0',
        size: 256 * MiB,
        interleaveWays: 1,
        decodeState: 'commit',
        type: undefined,
        memdevs: ['mem0'],
      },
    ]);
    expect(topo.endpointDecoders[0]).toEqual({
      decoder: 'decoder2.0',
      memdev: 'mem0',
      region: 'region0',
      dpaSize: 256 * MiB,
      mode: 'pmem',
      enabled: true,
    });
    expect(topo.rootDecoders[0]?.maxAvailableExtent).toBe(4 * GiB - 256 * MiB);
    expect(topo.memdevs).toEqual([]); // -R leaves the memdev objects out
  });

  it('bare memdev lists (cxl list -M) and empty output', () => {
    expect(parseCxlList(json('cxl-list-M.json')).memdevs.map((m) => [m.memdev, m.pmemSize, m.hostBridge])).toEqual([
      ['mem0', 4 * GiB, undefined],
      ['mem1', 4 * GiB, undefined],
    ]);
    expect(parseCxlList(undefined)).toEqual({ memdevs: [], endpointDecoders: [], rootDecoders: [], regions: [] });
  });

  it('names the command and the field of unexpected output', () => {
    expect(() => parseCxlList([{ memdev: 'mem0', pmem_size: '4G' }])).toThrow(
      new InternalError('cxl list -vvv: unexpected output at [0].pmem_size: expected a non-negative integer, got "4G"'),
    );
    expect(() => parseCxlList([{ foo: 1 }])).toThrow(/at \[0\]: expected a bus, memdev or region object/);
    expect(() => parseCxlList(42)).toThrow(/at <top>: expected an array, got 42/);
    const bad = json('cxl-list-vvv-two-devices.json') as Array<Record<string, unknown>>;
    const root = (bad[0]?.['decoders:root0'] as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
    root['pmem_capable'] = 'yes';
    expect(() => parseCxlList(bad)).toThrow(/at \[0\]\.decoders:root0\[0\]\.pmem_capable: expected true or false/);
  });

  it('parseCreatedRegion: the recorded create-region output', () => {
    expect(parseCreatedRegion(json('cxl-create-region.json'))).toMatchObject({
      region: 'region0',
      size: 256 * MiB,
      decodeState: 'commit',
      memdevs: ['mem0'],
    });
    expect(() => parseCreatedRegion([])).toThrow(/expected the created region object/);
  });
});

describe('planCxlRegions', () => {
  it('one region per blank device, in the root decoder that decodes to ITS host bridge (not the same index)', () => {
    const plan = planCxlRegions(parseCxlList(json('cxl-list-vvv-two-devices.json')));
    expect(plan.create).toEqual([
      { memdev: 'mem0', rootDecoder: 'decoder0.1', size: 4 * GiB },
      { memdev: 'mem1', rootDecoder: 'decoder0.0', size: 4 * GiB },
    ]);
    expect(plan.skipped).toEqual([]);
    expect([...plan.freePmem]).toEqual([
      ['mem0', 4 * GiB],
      ['mem1', 4 * GiB],
    ]);
  });

  it('never touches an existing region nor a device it maps; free capacity counts the decoders pmem', () => {
    const topo = parseCxlList(json('cxl-list-R-vvv-one-region.json'));
    // -R drops memdevs: add mem0 back as the full listing shows it (512 MiB persistent).
    const full = parseCxlList(json('cxl-list-vvv-one-device.json'));
    const merged = { ...topo, memdevs: full.memdevs };
    expect(freePersistentCapacity(merged).get('mem0')).toBe(256 * MiB);
    const plan = planCxlRegions(merged);
    expect(plan.create).toEqual([]);
    expect(plan.skipped).toEqual([
      { what: 'region0', reason: 'existing region (256 MiB, mem0): never changed by the driver' },
      { what: 'mem0', reason: 'already mapped by region0: the driver adds no second region to a device' },
    ]);
  });

  it('after the node assembled both devices (recorded): nothing to do, both regions and memdevs reported', () => {
    const topo = parseCxlList(json('cxl-list-vvv-two-regions.json'));
    expect(topo.regions.map((r) => [r.region, r.rootDecoder, r.size, r.memdevs])).toEqual([
      ['region0', 'decoder0.0', 4 * GiB, ['mem1']],
      ['region1', 'decoder0.1', 4 * GiB, ['mem0']],
    ]);
    expect([...freePersistentCapacity(topo).values()]).toEqual([0, 0]);
    const plan = planCxlRegions(topo);
    expect(plan.create).toEqual([]);
    expect(plan.skipped.map((s) => s.what).sort()).toEqual(['mem0', 'mem1', 'region0', 'region1']);
  });

  it('a volatile-only device is reported and left alone', () => {
    const plan = planCxlRegions(parseCxlList(json('derived-cxl-list-vvv-volatile-only.json')));
    expect(plan.create).toEqual([]);
    expect(plan.skipped).toEqual([
      { what: 'mem0', reason: 'only volatile capacity (ram 512 MiB, no pmem): not a PMEM device' },
    ]);
  });

  it('sizes round down to 256 MiB and to the window; no window for the host bridge is a reason', () => {
    const topo = parseCxlList(json('cxl-list-vvv-two-devices.json'));
    const odd = {
      ...topo,
      memdevs: topo.memdevs.map((m) => (m.memdev === 'mem0' ? { ...m, pmemSize: 300 * MiB } : m)),
      rootDecoders: topo.rootDecoders.map((d) =>
        d.decoder === 'decoder0.0' ? { ...d, maxAvailableExtent: 1 * GiB } : d,
      ),
    };
    expect(planCxlRegions(odd).create).toEqual([
      { memdev: 'mem0', rootDecoder: 'decoder0.1', size: 256 * MiB },
      { memdev: 'mem1', rootDecoder: 'decoder0.0', size: 1 * GiB },
    ]);
    const small = { ...topo, memdevs: topo.memdevs.map((m) => ({ ...m, pmemSize: 100 * MiB })) };
    expect(planCxlRegions(small).skipped.map((s) => s.reason)).toEqual([
      'free persistent capacity 100 MiB is below one 256 MiB region',
      'free persistent capacity 100 MiB is below one 256 MiB region',
    ]);
    const noWindow = { ...topo, rootDecoders: topo.rootDecoders.map((d) => ({ ...d, pmemCapable: false })) };
    expect(planCxlRegions(noWindow).skipped).toEqual([
      {
        what: 'mem0',
        reason: 'no pmem-capable 1-way root decoder with free space decodes to its host bridge ACPI0016:00',
      },
      {
        what: 'mem1',
        reason: 'no pmem-capable 1-way root decoder with free space decodes to its host bridge ACPI0016:01',
      },
    ]);
  });
});

describe('the assembled regions as ndctl lists them (recorded)', () => {
  it('two nd regions of 4 GiB on the CXL bus, as the NVDIMM code reads them', () => {
    const { regions } = parseNdctlListing(json('ndctl-list-BRDi-cxl.json'), 'ndctl list');
    expect(regions.map((r) => [r.dev, r.bus, r.provider, r.size, r.availableSize, r.align, r.type, r.dimms])).toEqual([
      ['region1', 'ndbus0', 'CXL', 4 * GiB, 4 * GiB, 16 * MiB, 'pmem', ['nmem1']],
      ['region0', 'ndbus0', 'CXL', 4 * GiB, 4 * GiB, 16 * MiB, 'pmem', ['nmem0']],
    ]);
  });
});

describe('Cxl and assembleCxlRegions (scripted runner)', () => {
  const list = {
    command: 'cxl',
    args: ['list', '-vvv'],
    exact: true,
    stdout: fixture('cxl-list-vvv-two-devices.json'),
  };

  it('assembles the planned regions with cxl create-region, one per device', async () => {
    const created = (memdev: string, region: string): string =>
      JSON.stringify({
        region,
        size: 4 * GiB,
        interleave_ways: 1,
        decode_state: 'commit',
        mappings: [{ position: 0, memdev, decoder: 'd' }],
      });
    const runner = new ScriptedRunner([
      list,
      {
        command: 'cxl',
        args: ['create-region', '-t', 'pmem', '-m', '-d', 'decoder0.1', '-w', '1', 'mem0', '-s', String(4 * GiB)],
        exact: true,
        stdout: created('mem0', 'region0'),
      },
      {
        command: 'cxl',
        args: ['create-region', '-t', 'pmem', '-m', '-d', 'decoder0.0', '-w', '1', 'mem1', '-s', String(4 * GiB)],
        exact: true,
        stdout: created('mem1', 'region1'),
      },
    ]);
    const { log, lines } = captureLog();
    const r = await assembleCxlRegions({ runner, log }, true);
    expect(r.created.map((x) => x.region)).toEqual(['region0', 'region1']);
    expect(runner.unused()).toEqual([]);
    expect(lines.filter((l) => l['msg'] === 'assembled CXL pmem region').map((l) => l['region'])).toEqual([
      'region0',
      'region1',
    ]);
  });

  it('without permission: lists only, creates nothing, logs what it would assemble', async () => {
    const runner = new ScriptedRunner([list]);
    const { log, lines } = captureLog();
    const r = await assembleCxlRegions({ runner, log }, false);
    expect(r.created).toEqual([]);
    expect(r.notAllowed.map((p) => p.memdev)).toEqual(['mem0', 'mem1']);
    expect(runner.calls.map((c) => c.args[0])).toEqual(['list']);
    expect(lines.filter((l) => String(l['msg']).includes('not allowed by policy'))).toHaveLength(2);
  });

  it('a region that does not commit is an error naming it; a missing cxl tool names the package', async () => {
    const runner = new ScriptedRunner([
      {
        command: 'cxl',
        args: ['create-region'],
        stdout: JSON.stringify({ region: 'region7', size: 256 * MiB, decode_state: 'reset' }),
      },
    ]);
    await expect(
      new Cxl(runner).createRegion({ memdev: 'mem0', rootDecoder: 'decoder0.0', size: 256 * MiB }),
    ).rejects.toThrow('cxl create-region made region7 but its decode_state is reset, not commit');
    await expect(
      new Cxl(runner).createRegion({ memdev: 'mem0', rootDecoder: 'decoder0.0', size: 100 * MiB }),
    ).rejects.toThrow(/not a positive multiple of 256 MiB/);
    const none = new ScriptedRunner([], []);
    const err = await new Cxl(none).list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandNotFoundError);
    expect((err as Error).message).toMatch(/needs the cxl tool.*Debian package: ndctl/);
  });
});
