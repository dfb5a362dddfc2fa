import { readFileSync } from 'node:fs';
import { createLogger, type LogFields } from '@pmem-csi/runtime';
import { InternalError } from '@pmem-csi/csi';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import { initLabelsIfSafe } from './label-init.js';
import { Ndctl, labelLessNamespace, parseCreatedNamespace, parseNdctlListing, type NdRegion } from './ndctl.js';

const fixture = (name: string): string => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
const json = (name: string): unknown => JSON.parse(fixture(name));

describe('parseNdctlListing', () => {
  it('reads buses with regions and DIMM mappings (QEMU guest)', () => {
    const { regions, namespaces } = parseNdctlListing(json('ndctl-list-BRDi-qemu.json'));
    expect(namespaces).toEqual([]);
    // iset_id 52512795602891997 is beyond double precision: kept as (imprecise) text, never used.
    expect(regions).toEqual([
      {
        dev: 'region0',
        bus: 'ndbus0',
        provider: 'ACPI.NFIT',
        size: 4292870144,
        availableSize: 4292870144,
        maxAvailableExtent: 4292870144,
        align: 16777216,
        type: 'pmem',
        isetId: '52512795602892000',
        interleaveWays: 1,
        dimms: ['nmem0'],
        enabled: true,
      },
    ]);
  });

  it('reads several buses, interleave ways, disabled regions and every iset_id form', () => {
    const { regions } = parseNdctlListing(json('ndctl-list-BRDi-two-buses.json'));
    expect(regions.map((r) => [r.dev, r.bus, r.interleaveWays, r.enabled, r.align, r.isetId])).toEqual([
      ['region0', 'ndbus0', 2, true, 16777216, '0x2aa95c1c8a2a1111'],
      ['region1', 'ndbus0', 1, false, 100663296, '-5807432881699911000'],
      ['region2', 'ndbus1', 1, true, 16777216, undefined],
    ]);
    expect(regions[0]?.dimms).toEqual(['nmem0', 'nmem1']);
    expect(regions[0]?.maxAvailableExtent).toBe(135291469824);
  });

  it('accepts a bare object (old ndctl) and falls back to available_size without max_available_extent', () => {
    const { regions } = parseNdctlListing(json('ndctl-list-R-single-object.json'));
    expect(regions).toHaveLength(1);
    expect(regions[0]).toMatchObject({
      dev: 'region1',
      bus: undefined,
      maxAvailableExtent: 34359738368,
      align: undefined,
      interleaveWays: 1,
    });
  });

  it('reads the {"regions":[...]} platform shape with nested namespaces', () => {
    const { regions, namespaces } = parseNdctlListing(json('ndctl-list-RN-platform.json'));
    expect(regions.map((r) => r.dev)).toEqual(['region0']);
    expect(namespaces).toEqual([
      {
        dev: 'namespace0.0',
        region: 'region0',
        mode: 'raw',
        size: 34357641216,
        uuid: undefined,
        rawUuid: undefined,
        name: undefined,
        blockdev: 'pmem0',
        map: undefined,
        sectorSize: 512,
        align: undefined,
        enabled: true,
      },
    ]);
  });

  it('reads namespaces of every kind, deriving the region from the name', () => {
    const { namespaces } = parseNdctlListing(json('ndctl-list-Ni-mixed.json'));
    expect(namespaces.map((n) => [n.dev, n.region, n.mode, n.name, n.blockdev, n.enabled, n.size])).toEqual([
      ['namespace1.2', 'region1', 'raw', undefined, undefined, false, 0],
      [
        'namespace1.1',
        'region1',
        'fsdax',
        'pvc-9b-d82cd557a6efd84c123ebeeb1d119479e378cc8eae34f8edf0fc1db5',
        undefined,
        false,
        2147483648,
      ],
      ['namespace1.0', 'region1', 'fsdax', 'app-data', 'pmem1', true, 33820770304],
      [
        'namespace0.2',
        'region0',
        'sector',
        'pvc-1f-af6f31a22c859d4ca1474db88e5ba1bc04a6ffe5327cd1ec0e127e14',
        'pmem0.2s',
        true,
        1069056000,
      ],
      [
        'namespace0.1',
        'region0',
        'fsdax',
        'pvc-8a-933e210faec20ae105ba0ee4eacbb67925ecb09fb3bede2edd23c303',
        'pmem0.1',
        true,
        1056964608,
      ],
      ['namespace0.0', 'region0', 'fsdax', 'pmem-csi', 'pmem0', true, 3170893824],
    ]);
    expect(namespaces[3]?.sectorSize).toBe(4096);
    expect(namespaces[4]).toMatchObject({ map: 'dev', align: 2097152 });
  });

  it('accepts a bare namespace object and bus objects with namespaces', () => {
    expect(parseNdctlListing(json('ndctl-list-N-single-object.json')).namespaces.map((n) => n.name)).toEqual([
      'pmem-csi',
    ]);
    const { namespaces } = parseNdctlListing(json('ndctl-list-BN-buses.json'));
    expect(namespaces.map((n) => [n.dev, n.region])).toEqual([
      ['namespace9.0', 'region9'],
      ['namespace0.0', 'region0'],
    ]);
  });

  it('treats empty output (nothing matched) as an empty listing', () => {
    expect(parseNdctlListing(undefined)).toEqual({ regions: [], namespaces: [] });
    expect(parseNdctlListing([])).toEqual({ regions: [], namespaces: [] });
  });

  it.each([
    [
      [{ dev: 'region0', available_size: 1, type: 'pmem' }],
      'ndctl list: unexpected output at [0].size: missing (expected a byte count)',
    ],
    [
      [{ dev: 'region0', size: '2.00 GiB (2.15 GB)', available_size: 1, type: 'pmem' }],
      'ndctl list: unexpected output at [0].size: expected a byte count (non-negative integer), got "2.00 GiB (2.15 GB)"',
    ],
    [
      { dev: 'region0', size: 1, available_size: 1, type: 'pmem', mappings: {} },
      'ndctl list: unexpected output at .mappings: expected an array, got {}',
    ],
    [
      [{ dev: 'namespace0.0', mode: 'fsdax' }],
      'ndctl list: unexpected output at [0].size: missing (expected a byte count)',
    ],
    [[{ dev: 'btt0.0' }], 'ndctl list: unexpected output at [0].dev: unknown device "btt0.0"'],
    [[{ foo: 1 }], 'ndctl list: unexpected output at [0]: expected a bus, region or namespace object, got {"foo":1}'],
    ['oops', 'ndctl list: unexpected output at <top>: expected JSON objects or arrays, got "oops"'],
    [
      { regions: [{ dev: 'region0', size: -1, available_size: 1, type: 'pmem' }] },
      'ndctl list: unexpected output at .regions[0].size: expected a byte count (non-negative integer), got -1',
    ],
  ])('fails clearly on %j', (value, message) => {
    expect(() => parseNdctlListing(value)).toThrow(new InternalError(message));
  });
});

describe('ndctl list -v (raw_uuid: the namespace uuid that carries the owner mark)', () => {
  // Shapes per ndctl's util_namespace_to_json: with -v, fsdax/sector/devdax namespaces print the
  // pfn/btt/dax device's uuid as "uuid" and their own as "raw_uuid"; raw ones print their own as
  // "uuid" and no raw_uuid; plus numa_node, badblocks and (devdax) a nested daxregion, none of them read.
  it('reads raw_uuid where ndctl prints it, and nothing nested in a namespace', () => {
    const listing = [
      {
        dev: 'namespace0.1',
        mode: 'fsdax',
        map: 'dev',
        size: 1056964608,
        uuid: '3e0b5f7a-9c1d-4e2f-8a3b-4c5d6e7f8a9b',
        raw_uuid: '706d656d-59f0-83d8-8b1e-0123456789ab',
        sector_size: 512,
        align: 2097152,
        blockdev: 'pmem0.1',
        name: 'pmem-csi',
        numa_node: 0,
        badblock_count: 1,
        badblocks: [{ offset: 8, length: 1, dimms: ['nmem0'] }],
      },
      {
        dev: 'namespace0.2',
        mode: 'devdax',
        map: 'dev',
        size: 4225761280,
        uuid: '18ae1bbb-bb62-4efc-86df-4a5caacb5dcc',
        raw_uuid: '915361ad-fe6a-42dd-848f-d6dc9f5af362',
        daxregion: { id: 0, size: 4225761280, align: 2097152, devices: [{ chardev: 'dax0.0', size: 4225761280 }] },
      },
      { dev: 'namespace0.3', mode: 'raw', size: 1073741824, uuid: '706d656d-59f0-83d8-8b1e-ba9876543210' },
    ];
    const { regions, namespaces } = parseNdctlListing(listing, 'ndctl list --namespaces --idle -v');
    expect(regions).toEqual([]);
    expect(namespaces.map((n) => [n.dev, n.uuid, n.rawUuid])).toEqual([
      ['namespace0.1', '3e0b5f7a-9c1d-4e2f-8a3b-4c5d6e7f8a9b', '706d656d-59f0-83d8-8b1e-0123456789ab'],
      ['namespace0.2', '18ae1bbb-bb62-4efc-86df-4a5caacb5dcc', '915361ad-fe6a-42dd-848f-d6dc9f5af362'],
      ['namespace0.3', '706d656d-59f0-83d8-8b1e-ba9876543210', undefined],
    ]);
  });

  it('fails clearly on a raw_uuid that is not text', () => {
    expect(() => parseNdctlListing([{ dev: 'namespace0.1', mode: 'fsdax', size: 1, raw_uuid: 7 }])).toThrow(
      new InternalError('ndctl list: unexpected output at [0].raw_uuid: expected a string, got 7'),
    );
  });
});

describe('parseCreatedNamespace', () => {
  it('takes only the device name from the human-readable output', () => {
    expect(parseCreatedNamespace(json('ndctl-create-namespace-fsdax.json'))).toBe('namespace0.1');
    expect(parseCreatedNamespace(json('ndctl-create-namespace-sector.json'))).toBe('namespace0.2');
    expect(parseCreatedNamespace([{ dev: 'namespace0.3' }])).toBe('namespace0.3');
  });

  it('fails clearly without a namespace name', () => {
    expect(() => parseCreatedNamespace(undefined)).toThrow(
      'ndctl create-namespace: unexpected output at <top>: expected the created namespace object, got undefined',
    );
    expect(() => parseCreatedNamespace({ dev: 'pfn0.1' })).toThrow(
      'ndctl create-namespace: unexpected output at .dev: not a namespace name: "pfn0.1"',
    );
  });
});

describe('labelLessNamespace', () => {
  it('finds the raw namespace without uuid of a label-less region only', () => {
    expect(labelLessNamespace(parseNdctlListing(json('ndctl-list-Ni-labelless.json')).namespaces)?.dev).toBe(
      'namespace0.0',
    );
    expect(labelLessNamespace(parseNdctlListing(json('ndctl-list-Ni-mixed.json')).namespaces)).toBeUndefined();
  });
});

describe('Ndctl commands', () => {
  it('lists regions with buses, dimms and idle ones', async () => {
    const runner = new ScriptedRunner([
      {
        command: 'ndctl',
        args: ['list', '--buses', '--regions', '--dimms', '--idle'],
        exact: true,
        stdout: fixture('ndctl-list-BRDi-qemu.json'),
      },
    ]);
    expect((await new Ndctl(runner).listRegions()).map((r) => r.dev)).toEqual(['region0']);
  });

  it('lists namespaces filtered by region or namespace; empty output is none', async () => {
    const runner = new ScriptedRunner([
      {
        command: 'ndctl',
        args: ['list', '--namespaces', '--idle', '-v', '--region=region0'],
        exact: true,
        stdout: fixture('ndctl-list-Ni-labelless.json'),
      },
      {
        command: 'ndctl',
        args: ['list', '--namespaces', '--idle', '-v', '--namespace=namespace0.7'],
        exact: true,
        stdout: '',
      },
    ]);
    const ndctl = new Ndctl(runner);
    expect((await ndctl.listNamespaces({ region: 'region0' })).map((n) => n.dev)).toEqual(['namespace0.0']);
    expect(await ndctl.listNamespaces({ namespace: 'namespace0.7' })).toEqual([]);
  });

  it('names the command when the output is not JSON', async () => {
    const runner = new ScriptedRunner([{ command: 'ndctl', stdout: 'libndctl: failed\n' }]);
    await expect(new Ndctl(runner).listRegions()).rejects.toThrow(
      /^ndctl list --buses --regions --dimms --idle: output is not JSON/,
    );
  });

  it('creates an fsdax namespace with map=dev and re-lists it for exact sizes', async () => {
    const id = 'pvc-8a-933e210faec20ae105ba0ee4eacbb67925ecb09fb3bede2edd23c303';
    const runner = new ScriptedRunner([
      {
        command: 'ndctl',
        args: [
          'create-namespace',
          '--region=region0',
          '--mode=fsdax',
          '--size=1090519040',
          `--name=${id}`,
          '--map=dev',
        ],
        exact: true,
        stdout: fixture('ndctl-create-namespace-fsdax.json'),
      },
      {
        command: 'ndctl',
        args: ['list', '--namespaces', '--idle', '-v', '--namespace=namespace0.1'],
        exact: true,
        stdout: JSON.stringify(parseNdctlRaw('ndctl-list-Ni-mixed.json', 'namespace0.1')),
      },
    ]);
    const ns = await new Ndctl(runner).createNamespace({
      region: 'region0',
      name: id,
      size: 1090519040,
      mode: 'fsdax',
      map: 'dev',
    });
    expect(ns).toMatchObject({ dev: 'namespace0.1', size: 1056964608, blockdev: 'pmem0.1', name: id });
    expect(runner.unused()).toEqual([]);
  });

  it('creates a namespace with the uuid it is given (the owner mark), re-listed with -v', async () => {
    const uuid = '706d656d-59f0-83d8-8b1e-0123456789ab';
    const runner = new ScriptedRunner([
      {
        command: 'ndctl',
        args: [
          'create-namespace',
          '--region=region1',
          '--mode=fsdax',
          '--size=2147483648',
          '--name=pmem-csi',
          `--uuid=${uuid}`,
          '--map=dev',
        ],
        exact: true,
        stdout: JSON.stringify({ dev: 'namespace1.0', mode: 'fsdax', size: '1.97 GiB (2.11 GB)', name: 'pmem-csi' }),
      },
      {
        command: 'ndctl',
        args: ['list', '--namespaces', '--idle', '-v', '--namespace=namespace1.0'],
        exact: true,
        stdout: JSON.stringify([
          {
            dev: 'namespace1.0',
            mode: 'fsdax',
            map: 'dev',
            size: 2111832064,
            uuid: '935407b0-4c19-48a9-b072-5df78f1e63bf',
            raw_uuid: uuid,
            blockdev: 'pmem1',
            name: 'pmem-csi',
          },
        ]),
      },
    ]);
    const ns = await new Ndctl(runner).createNamespace({
      region: 'region1',
      name: 'pmem-csi',
      size: 2147483648,
      mode: 'fsdax',
      map: 'dev',
      uuid,
    });
    expect(ns).toMatchObject({ dev: 'namespace1.0', rawUuid: uuid, uuid: '935407b0-4c19-48a9-b072-5df78f1e63bf' });
    expect(runner.unused()).toEqual([]);
  });

  it('creates a sector namespace without --map', async () => {
    const runner = new ScriptedRunner([
      {
        command: 'ndctl',
        args: ['create-namespace', '--region=region0', '--mode=sector', '--size=1090519040', '--name=x'],
        exact: true,
        stdout: fixture('ndctl-create-namespace-sector.json'),
      },
      {
        command: 'ndctl',
        args: ['list', '--namespaces', '--idle', '-v', '--namespace=namespace0.2'],
        exact: true,
        stdout: '',
      },
    ]);
    await expect(
      new Ndctl(runner).createNamespace({ region: 'region0', name: 'x', size: 1090519040, mode: 'sector' }),
    ).rejects.toThrow('ndctl create-namespace reported namespace0.2, but ndctl list does not show it');
  });

  it('destroys with --force, and initializes labels of one region between disable and enable', async () => {
    const runner = new ScriptedRunner([
      { command: 'ndctl', args: ['destroy-namespace', '--force', 'namespace0.1'], exact: true },
      { command: 'ndctl', args: ['disable-region', 'region0'], exact: true },
      { command: 'ndctl', args: ['init-labels', '-f', 'nmem0', 'nmem1'], exact: true },
      { command: 'ndctl', args: ['enable-region', 'region0'], exact: true },
      { command: 'ndctl', args: ['disable-region', 'all'], exact: true },
      { command: 'ndctl', args: ['init-labels', '-f', 'all'], exact: true, exitCode: 1, stderr: 'nmem0: failed' },
      { command: 'ndctl', args: ['enable-region', 'all'], exact: true },
    ]);
    const ndctl = new Ndctl(runner);
    await ndctl.destroyNamespace('namespace0.1');
    await ndctl.initLabels({ region: 'region0', dimms: ['nmem0', 'nmem1'] });
    await expect(ndctl.initLabels()).rejects.toThrow('ndctl init-labels -f all: exit code 1: nmem0: failed');
    expect(runner.unused()).toEqual([]);
  });
});

function parseNdctlRaw(file: string, dev: string): unknown {
  return (json(file) as Array<{ dev: string }>).filter((n) => n.dev === dev);
}

describe('initLabelsIfSafe', () => {
  const lines: LogFields[] = [];
  const log = createLogger({ format: 'json', sink: (l) => lines.push(JSON.parse(l) as LogFields) });
  const region = parseNdctlListing(json('ndctl-list-BRDi-qemu.json')).regions[0] as NdRegion;
  const namespaces = parseNdctlListing(json('ndctl-list-Ni-labelless.json')).namespaces;

  beforeEach(() => lines.splice(0));

  it('initializes the labels of an unused, empty, label-less region', async () => {
    const runner = new ScriptedRunner([
      { command: 'blkid', args: ['-p', '/dev/pmem0'], exact: true, exitCode: 2 },
      { command: 'ndctl', args: ['disable-region', 'region0'], exact: true },
      { command: 'ndctl', args: ['init-labels', '-f', 'nmem0'], exact: true },
      { command: 'ndctl', args: ['enable-region', 'region0'], exact: true },
    ]);
    const deps = { ndctl: new Ndctl(runner), runner, log, isUnused: () => Promise.resolve(true) };
    await expect(initLabelsIfSafe(region, { regions: [region], namespaces }, deps)).resolves.toBe(true);
    expect(runner.unused()).toEqual([]);
  });

  it('does nothing for a region that has labels', async () => {
    const runner = new ScriptedRunner([]);
    const deps = { ndctl: new Ndctl(runner), runner, log, isUnused: () => Promise.resolve(true) };
    await expect(initLabelsIfSafe(region, { regions: [region], namespaces: [] }, deps)).resolves.toBe(true);
    expect(runner.calls).toEqual([]);
  });

  it.each([
    [
      'the raw namespace holds a filesystem',
      { blkid: 0, unused: true, other: false },
      '/dev/pmem0 holds data (blkid found a signature)',
    ],
    ['the raw namespace is open', { blkid: 2, unused: false, other: false }, '/dev/pmem0 is in use'],
    ['a DIMM also backs another region', { blkid: 2, unused: true, other: true }, 'its DIMMs also back region5'],
  ])('leaves the region alone when %s', async (_why, c, reason) => {
    const runner = new ScriptedRunner([{ command: 'blkid', exitCode: c.blkid, repeat: true }]);
    const deps = { ndctl: new Ndctl(runner), runner, log, isUnused: () => Promise.resolve(c.unused) };
    const regions = c.other ? [region, { ...region, dev: 'region5' }] : [region];
    await expect(initLabelsIfSafe(region, { regions, namespaces }, deps)).resolves.toBe(false);
    expect(runner.calls.filter((call) => call.command === 'ndctl')).toEqual([]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'region has no namespace labels and is left alone',
        region: 'region0',
        reason,
        fix: 'ndctl disable-region region0; ndctl init-labels -f nmem0; ndctl enable-region region0',
      }),
    );
  });
});
