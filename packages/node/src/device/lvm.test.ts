import { readFileSync } from 'node:fs';
import { createLogger, type CommandRunner, type LogFields, type RunOptions, type RunResult } from '@pmem-csi/runtime';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import { GiB, MiB, FailedPreconditionError, InvalidArgumentError } from '@pmem-csi/csi';
import { DeviceExistsError, DeviceInUseError, DeviceNotFoundError, NotEnoughSpaceError } from './device-manager.js';
import { chooseVg, largestLvSize, lvmNamespaceSize, vgNameFor } from './lvm-layout.js';
import { LvmDeviceManager } from './lvm.js';
import type { PmemOwner } from './ownership.js';
import { FakeDevices, OWNER, OWNER_UUID, region, SECOND, SECOND_UUID } from './testing/pmem-doubles.js';
import {
  calls,
  fullReport,
  ndctlCreated,
  ndctlNamespaces,
  ndctlRegions,
  pvsReport,
  reply,
  vgsReport,
} from './__fixtures__/tool-output.js';

const fixture = (name: string): string => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');

const ID = 'pvc-8a-933e210faec20ae105ba0ee4eacbb67925ecb09fb3bede2edd23c303';
const ID2 = 'pvc-1f-af6f31a22c859d4ca1474db88e5ba1bc04a6ffe5327cd1ec0e127e14';
const VG0 = 'ndbus0region0fsdax';
const VG1 = 'ndbus0region1fsdax';

const TAG = 'pmem-csi.intel.com/owner=pmem-csi.intel.com';
const SECOND_TAG = 'pmem-csi.intel.com/owner=second.pmem-csi.example';

function setup(runner: CommandRunner, pmemPercentage = 100, autoInitLabels = true, owner: PmemOwner = OWNER) {
  const lines: LogFields[] = [];
  const log = createLogger({ format: 'json', level: 'debug', sink: (l) => lines.push(JSON.parse(l) as LogFields) });
  const devices = new FakeDevices();
  const dm = new LvmDeviceManager({ runner, log, pmemPercentage, blockDevices: devices, autoInitLabels, owner });
  return { dm, lines, devices };
}

describe('lvmNamespaceSize', () => {
  it.each([
    [
      '50 % of a 2-way region, aligned to 2 GiB',
      { size: 64 * GiB + 32 * MiB, maxAvailableExtent: 64 * GiB + 32 * MiB, interleaveWays: 2 },
      50,
      32 * GiB,
    ],
    ['0 % means 100 %', { size: 10 * GiB + 5 * MiB, maxAvailableExtent: 10 * GiB + 5 * MiB }, 0, 10 * GiB],
    [
      'LCM with a 96 MiB region align',
      { size: 128 * GiB, maxAvailableExtent: 128 * GiB, align: 96 * MiB },
      100,
      126 * GiB,
    ],
    [
      'no region align reported',
      { size: 5 * GiB, maxAvailableExtent: 5 * GiB, align: undefined, interleaveWays: 2 },
      100,
      4 * GiB,
    ],
    ['capped by the largest free extent', { size: 100 * GiB, maxAvailableExtent: 10 * GiB + GiB / 2 }, 100, 10 * GiB],
    ['exactly 2 GiB', { size: 2 * GiB, maxAvailableExtent: 2 * GiB }, 100, 2 * GiB],
    [
      'a 2 GiB QEMU NVDIMM (minus its label area) is too small',
      { size: 2 * GiB - 2 * MiB, maxAvailableExtent: 2 * GiB - 2 * MiB },
      100,
      0,
    ],
    ['under 2 GiB after the percentage', { size: 3 * GiB, maxAvailableExtent: 3 * GiB }, 50, 0],
  ])('%s', (_what, over, pct, expected) => {
    expect(lvmNamespaceSize(region(over), pct)).toBe(expected);
  });
});

describe('VG choice', () => {
  const vgs = [
    { name: VG0, size: 4 * GiB, free: 2 * GiB, extentSize: 4 * MiB, tags: [] },
    { name: VG1, size: 8 * GiB, free: 5 * GiB + 3 * MiB, extentSize: 4 * MiB, tags: [] },
  ];

  it('takes the VG with the most free space and rounds up to its extent', () => {
    expect(chooseVg(vgs, 1)).toEqual({ vg: vgs[1], size: 4 * MiB });
    expect(chooseVg(vgs, 5 * GiB)).toEqual({ vg: vgs[1], size: 5 * GiB });
    expect(chooseVg(vgs, 5 * GiB + 1)).toBeUndefined();
    expect(chooseVg([], 1)).toBeUndefined();
  });

  it('reports the largest LV as free space rounded down to the extent', () => {
    expect(largestLvSize(vgs)).toBe(5 * GiB);
    expect(largestLvSize([])).toBe(0);
    expect(vgNameFor('ndbus0', 'region3')).toBe('ndbus0region3fsdax');
  });
});

describe('LvmDeviceManager.setup', () => {
  it('creates the pmem-csi namespace and VG per big-enough region, leaving foreign namespaces alone', async () => {
    const runner = new ScriptedRunner([
      reply.regions(
        ndctlRegions([
          {
            dev: 'ndbus0',
            regions: [
              { dev: 'region0', size: 64 * GiB + 32 * MiB, dimms: ['nmem0', 'nmem1'] },
              { dev: 'region1', size: 3 * GiB, dimms: ['nmem2'] },
            ],
          },
        ]),
      ),
      reply.vgs(vgsReport([{ name: 'system', size: 100 * GiB, free: 0 }])),
      reply.namespaces(
        ['--region=region0'],
        ndctlNamespaces([{ dev: 'namespace0.0', size: 2 * GiB, name: 'app-data', blockdev: 'pmem0' }]),
      ),
      {
        command: 'ndctl',
        args: [
          'create-namespace',
          '--region=region0',
          '--mode=fsdax',
          `--size=${32 * GiB}`,
          '--name=pmem-csi',
          `--uuid=${OWNER_UUID}`,
          '--map=dev',
        ],
        exact: true,
        stdout: ndctlCreated({
          dev: 'namespace0.1',
          size: 32 * GiB - 512 * MiB,
          name: 'pmem-csi',
          blockdev: 'pmem0.1',
        }),
      },
      reply.namespaces(
        ['--namespace=namespace0.1'],
        ndctlNamespaces([
          {
            dev: 'namespace0.1',
            size: 32 * GiB - 512 * MiB,
            name: 'pmem-csi',
            blockdev: 'pmem0.1',
            rawUuid: OWNER_UUID,
          },
        ]),
      ),
      reply.pvs(pvsReport([{ name: '/dev/sda3', vg: 'system' }])),
      { command: 'pvcreate', args: ['-y', '/dev/pmem0.1'], exact: true },
      { command: 'vgcreate', args: ['--addtag', TAG, VG0, '/dev/pmem0.1'], exact: true },
      reply.namespaces(['--region=region1'], ''),
    ]);
    const { dm, lines } = setup(runner, 50);
    await dm.setup();
    expect(runner.calls).toEqual([
      calls.regions,
      calls.vgs,
      calls.namespaces('--region=region0'),
      {
        command: 'ndctl',
        args: [
          'create-namespace',
          '--region=region0',
          '--mode=fsdax',
          '--size=34359738368',
          '--name=pmem-csi',
          '--uuid=706d656d-5c3f-8485-8886-0123456789ab',
          '--map=dev',
        ],
      },
      calls.namespaces('--namespace=namespace0.1'),
      calls.pvs,
      { command: 'pvcreate', args: ['-y', '/dev/pmem0.1'] },
      { command: 'vgcreate', args: ['--addtag', 'pmem-csi.intel.com/owner=pmem-csi.intel.com', VG0, '/dev/pmem0.1'] },
      calls.namespaces('--region=region1'),
    ]);
    expect(runner.unused()).toEqual([]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'region skipped: less than 2 GiB usable for the pmem-csi namespace',
        region: 'region1',
        pmemPercentage: 50,
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        msg: 'PMEM this driver takes is marked as its own',
        driver: 'pmem-csi.intel.com',
        ownerMark: '5c3f485886',
        vgTag: TAG,
      }),
    );
    expect(lines.filter((l) => l['level'] === 'warn' && String(l['msg']).startsWith('region refused'))).toEqual([]);
  });

  it('is idempotent: an existing namespace already in its tagged VG only gets listed', async () => {
    const runner = new ScriptedRunner([
      reply.regions(fixture('ndctl-list-BRDi-qemu.json')),
      reply.vgs(fixture('vgs.json').replace('"vg_tags":""', `"vg_tags":"${TAG}"`)),
      reply.namespaces(
        ['--region=region0'],
        ndctlNamespaces([
          { dev: 'namespace0.0', size: 3 * GiB - 48 * MiB, name: 'pmem-csi', blockdev: 'pmem0', rawUuid: OWNER_UUID },
          { dev: 'namespace0.1', size: GiB, name: ID, blockdev: 'pmem0.1' },
        ]),
      ),
      reply.pvs(fixture('pvs.json')),
    ]);
    const { dm } = setup(runner);
    await dm.setup();
    expect(runner.calls).toEqual([calls.regions, calls.vgs, calls.namespaces('--region=region0'), calls.pvs]);
  });

  it('adopts the untagged VG of an unmarked pmem-csi namespace (the Go driver’s, or made before the marks): tags it once, logs it', async () => {
    const runner = new ScriptedRunner([
      reply.regions(fixture('ndctl-list-BRDi-qemu.json')),
      reply.vgs(fixture('vgs.json')),
      reply.namespaces(
        ['--region=region0'],
        ndctlNamespaces([{ dev: 'namespace0.0', size: 3 * GiB - 48 * MiB, name: 'pmem-csi', blockdev: 'pmem0' }]),
      ),
      reply.pvs(fixture('pvs.json')),
      { command: 'vgchange', args: ['--addtag', TAG, VG0], exact: true },
    ]);
    const { dm, lines } = setup(runner);
    await dm.setup();
    expect(runner.unused()).toEqual([]);
    expect(runner.calls.at(-1)).toEqual({ command: 'vgchange', args: ['--addtag', TAG, VG0] });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'info',
        msg: 'volume group adopted: tagged as owned by this driver',
        vg: VG0,
        tag: TAG,
      }),
    );
  });

  it("takes over the Go driver's layout: its untagged VG (a v0.x 'fsdax' tag is no owner), its LVs by id and size, the capacity; its sector VG (older releases) is reported and left alone", async () => {
    const GO_SECTOR = 'ndbus0region0sector';
    const vgs = vgsReport([
      { name: VG0, size: 3 * GiB, free: 2 * GiB, tags: 'fsdax' },
      { name: GO_SECTOR, size: GiB, free: GiB / 2, tags: 'sector' },
    ]);
    const runner = new ScriptedRunner([
      reply.regions(fixture('ndctl-list-BRDi-qemu.json')),
      reply.vgs(vgs),
      reply.namespaces(
        ['--region=region0'],
        // The Go driver's namespace: named pmem-csi, a random (version 1) uuid, no owner mark.
        ndctlNamespaces([
          {
            dev: 'namespace0.0',
            size: 3 * GiB,
            name: 'pmem-csi',
            blockdev: 'pmem0',
            uuid: '9e1c2f4a-2f0e-11ec-8d3d-0242ac130003',
          },
        ]),
      ),
      reply.pvs(fixture('pvs.json')),
      { command: 'vgchange', args: ['--addtag', TAG, VG0], exact: true },
      reply.fullReport(
        fullReport({
          vgs: [
            { name: VG0, size: 3 * GiB, free: 2 * GiB, tags: `fsdax,${TAG}` },
            { name: GO_SECTOR, size: GiB, free: GiB / 2, tags: 'sector' },
          ],
          lvs: [
            { name: ID, vg: VG0, size: GiB },
            { name: 'old-sector-vol', vg: GO_SECTOR, size: GiB / 2 },
          ],
        }),
      ),
      reply.regions(fixture('ndctl-list-BRDi-qemu.json')),
      reply.fullReport(
        fullReport({
          vgs: [
            { name: VG0, size: 3 * GiB, free: 2 * GiB, tags: `fsdax,${TAG}` },
            { name: GO_SECTOR, size: GiB, free: GiB / 2, tags: 'sector' },
          ],
          lvs: [{ name: ID, vg: VG0, size: GiB }],
        }),
      ),
    ]);
    const { dm, lines } = setup(runner);
    await dm.setup();
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'volume group not taken over',
        vg: GO_SECTOR,
        reason: expect.stringMatching(/sector-mode volume group \(older releases\)/),
      }),
    );
    expect(await dm.listDevices()).toEqual([{ volumeId: ID, path: `/dev/${VG0}/${ID}`, size: GiB, dax: true }]);
    const capacity = await dm.getCapacity();
    expect([capacity.available, capacity.managed, capacity.maxVolumeSize]).toEqual([2 * GiB, 3 * GiB, 2 * GiB]);
    expect(runner.unused()).toEqual([]);
    expect(runner.calls.filter((c) => c.args.includes(GO_SECTOR))).toEqual([]);
  });

  it('extends the VG with a pmem-csi namespace that is not yet a PV', async () => {
    const runner = new ScriptedRunner([
      reply.regions(fixture('ndctl-list-BRDi-qemu.json')),
      reply.vgs(vgsReport([{ name: VG0, size: 2 * GiB, free: GiB, tags: TAG }])),
      reply.namespaces(
        ['--region=region0'],
        ndctlNamespaces([
          { dev: 'namespace0.0', size: 2 * GiB, name: 'pmem-csi', blockdev: 'pmem0', rawUuid: OWNER_UUID },
          { dev: 'namespace0.1', size: GiB, name: 'pmem-csi', blockdev: 'pmem0.1' },
        ]),
      ),
      reply.pvs(fixture('pvs.json')),
      { command: 'pvcreate', args: ['-y', '/dev/pmem0.1'], exact: true },
      { command: 'vgextend', args: [VG0, '/dev/pmem0.1'], exact: true },
    ]);
    await setup(runner).dm.setup();
    expect(runner.unused()).toEqual([]);
    expect(runner.calls.slice(-2)).toEqual([
      { command: 'pvcreate', args: ['-y', '/dev/pmem0.1'] },
      { command: 'vgextend', args: [VG0, '/dev/pmem0.1'] },
    ]);
  });

  it('never moves a pmem-csi namespace out of another VG', async () => {
    const runner = new ScriptedRunner([
      reply.regions(fixture('ndctl-list-BRDi-qemu.json')),
      reply.vgs(vgsReport([{ name: 'data', size: 2 * GiB, free: 0 }])),
      reply.namespaces(
        ['--region=region0'],
        ndctlNamespaces([{ dev: 'namespace0.0', size: 2 * GiB, name: 'pmem-csi', blockdev: 'pmem0' }]),
      ),
      reply.pvs(pvsReport([{ name: '/dev/pmem0', vg: 'data' }])),
    ]);
    const { dm, lines } = setup(runner);
    await dm.setup();
    expect(runner.calls.map((c) => c.command)).toEqual(['ndctl', 'vgs', 'ndctl', 'pvs']);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'error', device: '/dev/pmem0', vg: 'data', wanted: VG0 }),
    );
  });

  it('initializes labels of an unused label-less QEMU region, then sizes the namespace from the region listed again', async () => {
    // As recorded in the QEMU guest: a label-less region reports available_size = max_available_extent = 0.
    const labelless = ndctlRegions([
      { dev: 'ndbus0', regions: [{ dev: 'region0', size: 4292870144, available: 0, extent: 0 }] },
    ]);
    const runner = new ScriptedRunner([
      reply.regions(labelless),
      reply.vgs(fixture('vgs-empty.json')),
      reply.namespaces(['--region=region0'], fixture('ndctl-list-Ni-labelless.json')),
      { command: 'blkid', args: ['-p', '/dev/pmem0'], exact: true, exitCode: 2 },
      { command: 'ndctl', args: ['disable-region', 'region0'], exact: true },
      { command: 'ndctl', args: ['init-labels', '-f', 'nmem0'], exact: true },
      { command: 'ndctl', args: ['enable-region', 'region0'], exact: true },
      reply.regions(fixture('ndctl-list-BRDi-qemu.json')),
      reply.namespaces(['--region=region0'], ''),
      {
        command: 'ndctl',
        args: [
          'create-namespace',
          '--region=region0',
          '--mode=fsdax',
          `--size=${3 * GiB}`,
          '--name=pmem-csi',
          `--uuid=${OWNER_UUID}`,
          '--map=dev',
        ],
        exact: true,
        stdout: ndctlCreated({ dev: 'namespace0.0', size: 3 * GiB - 48 * MiB, name: 'pmem-csi', blockdev: 'pmem0' }),
      },
      reply.namespaces(
        ['--namespace=namespace0.0'],
        ndctlNamespaces([
          { dev: 'namespace0.0', size: 3 * GiB - 48 * MiB, name: 'pmem-csi', blockdev: 'pmem0', rawUuid: OWNER_UUID },
        ]),
      ),
      reply.pvs(fixture('vgs-empty.json').replace('"vg"', '"pv"')),
      { command: 'pvcreate', args: ['-y', '/dev/pmem0'], exact: true },
      { command: 'vgcreate', args: ['--addtag', TAG, VG0, '/dev/pmem0'], exact: true },
    ]);
    const { dm, devices } = setup(runner);
    await dm.setup();
    expect(runner.unused()).toEqual([]);
    expect(devices.checked).toEqual(['/dev/pmem0']);
  });

  it('skips a label-less region when automatic label initialization is off', async () => {
    const runner = new ScriptedRunner([
      reply.regions(fixture('ndctl-list-BRDi-qemu.json')),
      reply.vgs(fixture('vgs-empty.json')),
      reply.namespaces(['--region=region0'], fixture('ndctl-list-Ni-labelless.json')),
    ]);
    const { dm, lines } = setup(runner, 100, false);
    await dm.setup();
    expect(runner.calls).toEqual([calls.regions, calls.vgs, calls.namespaces('--region=region0')]);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'region skipped: it has no namespace labels', region: 'region0' }),
    );
  });

  it('skips disabled regions and reports when there is no PMEM at all', async () => {
    const disabled = new ScriptedRunner([
      reply.regions(ndctlRegions([{ dev: 'ndbus0', regions: [{ dev: 'region0', size: 8 * GiB, disabled: true }] }])),
      reply.vgs(fixture('vgs-empty.json')),
    ]);
    const a = setup(disabled);
    await a.dm.setup();
    expect(disabled.calls).toEqual([calls.regions, calls.vgs]);
    expect(a.lines).toContainEqual(
      expect.objectContaining({ msg: 'region skipped', reason: 'region disabled', region: 'region0' }),
    );

    const none = new ScriptedRunner([reply.regions('')]);
    const b = setup(none);
    await b.dm.setup();
    expect(b.lines).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: 'no PMEM regions found: this node offers no capacity' }),
    );
  });

  it('names missing tools', async () => {
    const runner = new ScriptedRunner(
      [],
      ['ndctl', 'lvm', 'vgs', 'pvs', 'pvcreate', 'vgcreate', 'lvcreate', 'lvremove', 'lvextend', 'dd'],
    );
    await expect(setup(runner).dm.setup()).rejects.toThrow(
      /^lvm device mode needs vgextend, vgchange, blkid, not found on this machine \(Debian packages: /,
    );
  });

  it('rejects a bad pmemPercentage', () => {
    expect(() => setup(new ScriptedRunner(), 101)).toThrow(
      new InvalidArgumentError('pmemPercentage must be an integer 0..100 (0 means 100), got 101'),
    );
  });
});

/** LVM state (the one fullreport of a state read) with two of our VGs and a foreign one that has the most free space. */
function lvmState(lvs: Array<{ name: string; vg: string; size: number; path?: string }> = []) {
  return reply.fullReport(
    fullReport({
      vgs: [
        { name: VG0, size: 3170893824, free: 1992294400, tags: TAG },
        { name: VG1, size: 20 * GiB, free: 10 * GiB, tags: TAG },
        { name: 'system', size: 200 * GiB, free: 100 * GiB },
      ],
      lvs: [...lvs, { name: 'root', vg: 'system', size: 100 * GiB }],
    }),
  );
}

describe('LvmDeviceManager and another driver instance on the node (issue 32)', () => {
  const REFUSED = 'region refused: its PMEM belongs to another PMEM-CSI driver, which this one never touches';
  const HINT =
    "One driver manages a region's PMEM: keep this driver off this node (its node selector), or free the regions " +
    "by deleting the other driver's volumes, namespaces and volume groups there";
  const twoRegions = ndctlRegions([
    {
      dev: 'ndbus0',
      regions: [
        { dev: 'region0', size: 8 * GiB, dimms: ['nmem0'] },
        { dev: 'region1', size: 8 * GiB, dimms: ['nmem1'] },
      ],
    },
  ]);
  const oneRegion = ndctlRegions([{ dev: 'ndbus0', regions: [{ dev: 'region0', size: 8 * GiB }] }]);
  /** region0 as the first driver (pmem-csi.intel.com) left it: its marked namespace in its tagged VG. */
  const firstsNamespace = reply.namespaces(
    ['--region=region0'],
    ndctlNamespaces([
      { dev: 'namespace0.0', size: 8 * GiB - 128 * MiB, name: 'pmem-csi', blockdev: 'pmem0', rawUuid: OWNER_UUID },
    ]),
  );
  const refusals = (lines: LogFields[]) => lines.filter((l) => l['msg'] === REFUSED);
  /** Calls that read: ndctl list, vgs, pvs, lvm fullreport. */
  const reads = (c: { command: string; args: readonly string[] }) =>
    ['vgs', 'pvs'].includes(c.command) || ['list', 'fullreport'].includes(c.args[0] ?? '');
  const changes = (runner: ScriptedRunner) => runner.calls.filter((c) => !reads(c));

  it('refuses a region whose VG another driver tagged: nothing created, changed, listed or counted there; with nothing left, start-up fails naming the owner and the VG', async () => {
    const vg = { name: VG0, size: 8 * GiB - 132 * MiB, free: 7 * GiB, tags: TAG };
    const runner = new ScriptedRunner([
      reply.regions(oneRegion),
      reply.vgs(vgsReport([vg])),
      firstsNamespace,
      { ...reply.fullReport(fullReport({ vgs: [vg], lvs: [{ name: ID, vg: VG0, size: GiB }] })), repeat: true },
    ]);
    const { dm, lines } = setup(runner, 100, true, SECOND);
    await expect(dm.setup()).rejects.toThrow(
      new FailedPreconditionError(
        'no PMEM on this node is left for driver second.pmem-csi.example (owner mark a99c7e08e1): ' +
          `region0 belongs to driver pmem-csi.intel.com (volume group ${VG0}). ${HINT}`,
      ),
    );
    expect(runner.calls).toEqual([calls.regions, calls.vgs, calls.namespaces('--region=region0'), calls.fullReport]);
    expect(refusals(lines)).toEqual([
      expect.objectContaining({
        level: 'warn',
        deviceMode: 'lvm',
        region: 'region0',
        owner: 'driver pmem-csi.intel.com',
        ownerMark: '5c3f485886',
        resources: [`volume group ${VG0}`],
      }),
    ]);
    // The manager keeps its word afterwards too: the other driver's VG is no pool and its LV no volume of this one.
    runner.add({ ...reply.regions(oneRegion), repeat: true });
    expect(await dm.getCapacity()).toEqual({ maxVolumeSize: 0, available: 0, managed: 0, total: 8 * GiB });
    expect(await dm.listDevices()).toEqual([]);
    await expect(dm.getDevice(ID)).rejects.toThrow(new DeviceNotFoundError(`volume ${ID} not found`));
    await dm.deleteDevice(ID, true);
    await expect(dm.createDevice({ volumeId: ID2, size: GiB })).rejects.toThrow(
      new NotEnoughSpaceError(
        `not enough PMEM for volume ${ID2} of ${GiB} bytes: the largest volume this node can create now is 0 bytes`,
      ),
    );
    expect(changes(runner)).toEqual([]);
    expect(refusals(lines)).toHaveLength(1); // warned once, however often it looked
  });

  it('takes a free region (its namespace and VG marked as its own), refuses the other driver’s, and starts', async () => {
    const runner = new ScriptedRunner([
      reply.regions(twoRegions),
      reply.vgs(vgsReport([{ name: VG0, size: 8 * GiB - 132 * MiB, free: 7 * GiB, tags: TAG }])),
      firstsNamespace,
      reply.namespaces(['--region=region1'], ''),
      {
        command: 'ndctl',
        args: [
          'create-namespace',
          '--region=region1',
          '--mode=fsdax',
          `--size=${8 * GiB}`,
          '--name=pmem-csi',
          `--uuid=${SECOND_UUID}`,
          '--map=dev',
        ],
        exact: true,
        stdout: ndctlCreated({ dev: 'namespace1.0', size: 8 * GiB - 128 * MiB, name: 'pmem-csi', blockdev: 'pmem1' }),
      },
      reply.namespaces(
        ['--namespace=namespace1.0'],
        ndctlNamespaces([
          { dev: 'namespace1.0', size: 8 * GiB - 128 * MiB, name: 'pmem-csi', blockdev: 'pmem1', rawUuid: SECOND_UUID },
        ]),
      ),
      reply.pvs(pvsReport([{ name: '/dev/pmem0', vg: VG0 }])),
      { command: 'pvcreate', args: ['-y', '/dev/pmem1'], exact: true },
      { command: 'vgcreate', args: ['--addtag', SECOND_TAG, VG1, '/dev/pmem1'], exact: true },
      reply.fullReport(
        fullReport({
          vgs: [
            { name: VG0, size: 8 * GiB - 132 * MiB, free: 7 * GiB, tags: TAG },
            { name: VG1, size: 8 * GiB - 132 * MiB, free: 8 * GiB - 132 * MiB, tags: SECOND_TAG },
          ],
        }),
      ),
    ]);
    const { dm, lines } = setup(runner, 100, true, SECOND);
    await dm.setup();
    expect(runner.unused()).toEqual([]);
    expect(changes(runner).map((c) => c.args[0] ?? c.command)).toEqual(['create-namespace', '-y', '--addtag']);
    expect(refusals(lines)).toEqual([
      expect.objectContaining({
        region: 'region0',
        owner: 'driver pmem-csi.intel.com',
        resources: [`volume group ${VG0}`],
      }),
    ]);
  });

  it('without a VG tag the marked pmem-csi namespace decides: an untagged VG in a region another driver marked is neither adopted nor used', async () => {
    const untagged = { name: VG0, size: 8 * GiB - 132 * MiB, free: 8 * GiB - 132 * MiB };
    const runner = new ScriptedRunner([
      reply.regions(oneRegion),
      reply.vgs(vgsReport([untagged])),
      firstsNamespace,
      reply.fullReport(fullReport({ vgs: [untagged] })),
    ]);
    const { dm, lines } = setup(runner, 100, true, SECOND);
    await expect(dm.setup()).rejects.toThrow(
      new FailedPreconditionError(
        'no PMEM on this node is left for driver second.pmem-csi.example (owner mark a99c7e08e1): ' +
          `region0 belongs to the driver with owner mark 5c3f485886 (namespace namespace0.0 "pmem-csi"). ${HINT}`,
      ),
    );
    expect(changes(runner)).toEqual([]);
    expect(refusals(lines)).toEqual([
      expect.objectContaining({
        region: 'region0',
        owner: 'the driver with owner mark 5c3f485886',
        ownerMark: '5c3f485886',
        resources: ['namespace namespace0.0 "pmem-csi"'],
      }),
    ]);
  });

  it('never puts a pmem-csi namespace another driver marked into its own VG', async () => {
    const runner = new ScriptedRunner([
      reply.regions(oneRegion),
      reply.vgs(vgsReport([{ name: VG0, size: 4 * GiB, free: 4 * GiB, tags: TAG }])),
      reply.namespaces(
        ['--region=region0'],
        ndctlNamespaces([
          { dev: 'namespace0.0', size: 4 * GiB, name: 'pmem-csi', blockdev: 'pmem0', rawUuid: OWNER_UUID },
          { dev: 'namespace0.1', size: 2 * GiB, name: 'pmem-csi', blockdev: 'pmem0.1', rawUuid: SECOND_UUID },
        ]),
      ),
      reply.pvs(pvsReport([{ name: '/dev/pmem0', vg: VG0 }])),
    ]);
    await setup(runner).dm.setup();
    expect(runner.calls).toEqual([calls.regions, calls.vgs, calls.namespaces('--region=region0'), calls.pvs]);
  });

  it('a VG tagged by two drivers (both adopted it at once) belongs to the first mark: the other lists its volumes there but creates none', async () => {
    const state = () => [
      { ...reply.regions(oneRegion), repeat: true },
      {
        ...reply.fullReport(
          fullReport({
            vgs: [{ name: VG0, size: 8 * GiB, free: 6 * GiB, tags: `${SECOND_TAG},${TAG}` }],
            lvs: [{ name: ID, vg: VG0, size: 2 * GiB }],
          }),
        ),
        repeat: true,
      },
    ];
    // pmem-csi.intel.com (5c3f485886) sorts before second.pmem-csi.example (a99c7e08e1).
    const first = setup(new ScriptedRunner(state()));
    expect(await first.dm.getCapacity()).toMatchObject({ managed: 8 * GiB, maxVolumeSize: 6 * GiB });
    const second = setup(new ScriptedRunner(state()), 100, true, SECOND);
    expect(await second.dm.getCapacity()).toMatchObject({ managed: 0, maxVolumeSize: 0 });
    expect((await second.dm.listDevices()).map((d) => d.volumeId)).toEqual([ID]);
    await expect(second.dm.createDevice({ volumeId: ID2, size: GiB })).rejects.toThrow(NotEnoughSpaceError);
    expect(refusals(second.lines)).toEqual([
      expect.objectContaining({ region: 'region0', owner: 'driver pmem-csi.intel.com', ownerMark: '5c3f485886' }),
    ]);
    expect(refusals(first.lines)).toEqual([]);
  });

  it('a VG another driver tagged after start-up is left out at the next call: new volumes go to its own VG, though the other has more room', async () => {
    const vgs = [
      { name: VG0, size: 20 * GiB, free: 10 * GiB, tags: SECOND_TAG },
      { name: VG1, size: 4 * GiB, free: 2 * GiB, tags: TAG },
    ];
    const theirs = { name: ID2, vg: VG0, size: 10 * GiB };
    const runner = new ScriptedRunner([
      reply.fullReport(fullReport({ vgs, lvs: [theirs] })),
      { command: 'lvcreate', args: ['-Zn', '-y', '-L', `${GiB}b`, '-n', ID, VG1], exact: true },
      { ...reply.fullReport(fullReport({ vgs, lvs: [theirs, { name: ID, vg: VG1, size: GiB }] })), repeat: true },
      { ...calls.zeroHead(`/dev/${VG1}/${ID}`), exact: true },
      reply.regions(twoRegions),
    ]);
    const { dm, lines } = setup(runner);
    expect(await dm.createDevice({ volumeId: ID, size: GiB })).toMatchObject({ path: `/dev/${VG1}/${ID}` });
    expect((await dm.listDevices()).map((d) => d.volumeId)).toEqual([ID]);
    expect(await dm.getCapacity()).toEqual({
      maxVolumeSize: 2 * GiB,
      available: 2 * GiB,
      managed: 4 * GiB,
      total: 16 * GiB,
    });
    expect(refusals(lines)).toEqual([
      expect.objectContaining({
        region: 'region0',
        owner: 'driver second.pmem-csi.example',
        ownerMark: 'a99c7e08e1',
        resources: [`volume group ${VG0}`],
      }),
    ]);
    expect(runner.unused()).toEqual([]);
  });
});

describe('LvmDeviceManager.createDevice', () => {
  it('rounds up to the extent in the emptiest of our VGs, skips zeroing in lvcreate and zeroes 4 KiB itself', async () => {
    const before = lvmState();
    const after = lvmState([{ name: ID, vg: VG1, size: GiB + 4 * MiB }]);
    const runner = new ScriptedRunner([
      before,
      { command: 'lvcreate', args: ['-Zn', '-y', '-L', `${GiB + 4 * MiB}b`, '-n', ID, VG1], exact: true },
      after,
      { ...calls.zeroHead(`/dev/${VG1}/${ID}`), exact: true },
    ]);
    const { dm, lines } = setup(runner);
    const info = await dm.createDevice({ volumeId: ID, size: GiB + 1 });
    expect(info).toEqual({ volumeId: ID, path: `/dev/${VG1}/${ID}`, size: GiB + 4 * MiB, dax: true });
    // Per-volume detail at debug: the CSI layer logs the volume at info (volumes/volumes.ts).
    expect(lines).toEqual([
      expect.objectContaining({ level: 'debug', msg: 'volume created', volumeId: ID, vg: VG1, size: GiB + 4 * MiB }),
    ]);
    expect(runner.calls).toEqual([
      calls.fullReport,
      { command: 'lvcreate', args: ['-Zn', '-y', '-L', '1077936128b', '-n', ID, VG1] },
      calls.fullReport,
      calls.zeroHead(`/dev/${VG1}/${ID}`),
    ]);
  });

  it('between VGs with the same free space takes the first by name (the order vgs listed them in), whatever order fullreport prints', async () => {
    // lvm2 prints fullreport's per-VG objects in an order of its own (seen: not by name).
    const vgs = [
      { name: VG1, size: 4 * GiB, free: 2 * GiB, tags: TAG },
      { name: VG0, size: 4 * GiB, free: 2 * GiB, tags: TAG },
    ];
    const runner = new ScriptedRunner([
      reply.fullReport(fullReport({ vgs })),
      { command: 'lvcreate', args: ['-Zn', '-y', '-L', `${GiB}b`, '-n', ID, VG0], exact: true },
      reply.fullReport(fullReport({ vgs, lvs: [{ name: ID, vg: VG0, size: GiB }] })),
      { ...calls.zeroHead(`/dev/${VG0}/${ID}`), exact: true },
    ]);
    expect(await setup(runner).dm.createDevice({ volumeId: ID, size: GiB })).toMatchObject({
      path: `/dev/${VG0}/${ID}`,
    });
    expect(runner.unused()).toEqual([]);
  });

  it('refuses an existing volume', async () => {
    const s = lvmState([{ name: ID, vg: VG0, size: GiB }]);
    const runner = new ScriptedRunner([s]);
    await expect(setup(runner).dm.createDevice({ volumeId: ID, size: GiB })).rejects.toThrow(
      new DeviceExistsError(`volume ${ID} already exists`),
    );
  });

  it('names the largest size that fits when there is not enough space', async () => {
    const s = lvmState();
    const runner = new ScriptedRunner([s]);
    const err = await setup(runner)
      .dm.createDevice({ volumeId: ID, size: 20 * GiB })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotEnoughSpaceError);
    expect(err).toMatchObject({
      kind: 'ResourceExhausted',
      message: `not enough PMEM for volume ${ID} of 21474836480 bytes: the largest volume this node can create now is 10737418240 bytes`,
    });
  });

  it('removes the LV again when zeroing its start fails', async () => {
    const before = lvmState();
    const after = lvmState([{ name: ID, vg: VG1, size: GiB }]);
    const runner = new ScriptedRunner([
      before,
      { command: 'lvcreate' },
      after,
      { command: 'dd', exitCode: 1, stderr: 'dd: failed to open: No such device or address' },
      { command: 'lvremove', args: ['-fy', `${VG1}/${ID}`], exact: true },
    ]);
    await expect(setup(runner).dm.createDevice({ volumeId: ID, size: GiB })).rejects.toThrow(
      /dd .*: exit code 1: dd: failed to open/,
    );
    expect(runner.unused()).toEqual([]);
  });

  it('rejects a size that is not a positive byte count, and ids LVM cannot name', async () => {
    const { dm } = setup(new ScriptedRunner());
    await expect(dm.createDevice({ volumeId: ID, size: 0 })).rejects.toThrow(
      new InvalidArgumentError('size must be a positive whole number of bytes, got 0'),
    );
    for (const bad of ['-abc', '..', 'a/b', 'x'.repeat(128)]) {
      await expect(dm.createDevice({ volumeId: bad, size: GiB })).rejects.toThrow(
        new InvalidArgumentError(
          `volume id ${JSON.stringify(bad)} is not a valid LVM volume name (letters, digits, "+_.-", not starting with "-", at most 127 characters)`,
        ),
      );
    }
  });
});

describe('LvmDeviceManager.deleteDevice', () => {
  const path = `/dev/${VG0}/${ID}`;

  it('checks the device is unused, erases all of it, then removes the LV', async () => {
    const s = lvmState([{ name: ID, vg: VG0, size: GiB }]);
    const runner = new ScriptedRunner([
      s,
      { ...calls.zeroAll(path, GiB), exact: true },
      { command: 'lvremove', args: ['-fy', `${VG0}/${ID}`], exact: true },
    ]);
    const { dm, devices, lines } = setup(runner);
    await dm.deleteDevice(ID, true);
    expect(devices.checked).toEqual([path]);
    expect(lines).toEqual([
      expect.objectContaining({ level: 'debug', msg: 'volume deleted', volumeId: ID, vg: VG0, erased: true }),
    ]);
    expect(runner.calls).toEqual([
      calls.fullReport,
      calls.zeroAll(path, GiB),
      { command: 'lvremove', args: ['-fy', `${VG0}/${ID}`] },
    ]);
  });

  it('zeroes only the first 4 KiB without erase', async () => {
    const s = lvmState([{ name: ID, vg: VG0, size: GiB }]);
    const runner = new ScriptedRunner([
      s,
      { ...calls.zeroHead(path), exact: true },
      { command: 'lvremove', args: ['-fy', `${VG0}/${ID}`], exact: true },
    ]);
    await setup(runner).dm.deleteDevice(ID, false);
    expect(runner.unused()).toEqual([]);
  });

  it('resolves for an unknown volume after only looking', async () => {
    const s = lvmState();
    const runner = new ScriptedRunner([s]);
    await setup(runner).dm.deleteDevice(ID, true);
    expect(runner.calls).toEqual([calls.fullReport]);
  });

  it('refuses a busy device without touching it', async () => {
    const s = lvmState([{ name: ID, vg: VG0, size: GiB }]);
    const runner = new ScriptedRunner([s]);
    const { dm, devices } = setup(runner);
    devices.busy.add(path);
    await expect(dm.deleteDevice(ID, true)).rejects.toThrow(
      new DeviceInUseError(`device ${path} of volume ${JSON.stringify(ID)} is in use (mounted or open)`),
    );
    expect(runner.calls).toEqual([calls.fullReport]);
  });

  it('accepts an LV that vanished before lvremove (exit 5, not found), but not other failures', async () => {
    const s = lvmState([{ name: ID, vg: VG0, size: GiB }]);
    const gone = new ScriptedRunner([
      s,
      { command: 'dd' },
      { command: 'lvremove', exitCode: 5, stderr: `  Failed to find logical volume "${VG0}/${ID}"\n` },
    ]);
    await setup(gone).dm.deleteDevice(ID, false);

    const busy = new ScriptedRunner([
      s,
      { command: 'dd' },
      { command: 'lvremove', exitCode: 5, stderr: `  Logical volume ${VG0}/${ID} in use.\n` },
    ]);
    await expect(setup(busy).dm.deleteDevice(ID, false)).rejects.toThrow(/exit code 5: Logical volume .* in use\./);
  });
});

describe('LvmDeviceManager queries', () => {
  it('lists only LVs of our VGs that have a device path', async () => {
    const s = lvmState([
      { name: ID, vg: VG0, size: GiB },
      { name: ID2, vg: VG1, size: 4 * MiB },
      { name: 'lvol0_pmspare', vg: VG1, size: 4 * MiB, path: '' },
    ]);
    const { dm } = setup(new ScriptedRunner([{ ...s, repeat: true }]));
    expect(await dm.listDevices()).toEqual([
      { volumeId: ID, path: `/dev/${VG0}/${ID}`, size: GiB, dax: true },
      { volumeId: ID2, path: `/dev/${VG1}/${ID2}`, size: 4 * MiB, dax: true },
    ]);
    expect(await dm.getDevice(ID2)).toEqual({ volumeId: ID2, path: `/dev/${VG1}/${ID2}`, size: 4 * MiB, dax: true });
    await expect(dm.getDevice('root')).rejects.toThrow(new DeviceNotFoundError('volume root not found'));
    expect(await dm.findDevice(ID2)).toEqual({ volumeId: ID2, path: `/dev/${VG1}/${ID2}`, size: 4 * MiB, dax: true });
    await expect(dm.findDevice('root')).resolves.toBeUndefined();
  });

  it('reports capacity from our VGs and all PMEM regions', async () => {
    const s = lvmState();
    const runner = new ScriptedRunner([reply.regions(fixture('ndctl-list-BRDi-two-buses.json')), s]);
    expect(await setup(runner).dm.getCapacity()).toEqual({
      maxVolumeSize: 10 * GiB,
      available: 1992294400 + 10 * GiB,
      managed: 3170893824 + 20 * GiB,
      total: 270582939648 + 135291469824 + 17179869184,
    });
  });

  it('serializes tool calls of concurrent operations', async () => {
    const s = lvmState([{ name: ID, vg: VG0, size: GiB }]);
    const runner = new SlowRunner([reply.regions(''), { ...s, repeat: true }]);
    const { dm } = setup(runner);
    await Promise.all([dm.getCapacity(), dm.listDevices(), dm.getDevice(ID)]);
    expect(runner.calls).toEqual([calls.regions, calls.fullReport, calls.fullReport, calls.fullReport]);
    // One state read is one call now, so the order alone would look the same unserialized: no two overlapped.
    expect(runner.mostAtOnce).toBe(1);
  });
});

/** A ScriptedRunner whose calls take a macrotask, so unserialized callers would overlap (counted). */
class SlowRunner extends ScriptedRunner {
  #running = 0;
  /** The most calls that were running at the same time. */
  mostAtOnce = 0;

  override async run(command: string, args: readonly string[], options?: RunOptions): Promise<RunResult> {
    this.#running += 1;
    this.mostAtOnce = Math.max(this.mostAtOnce, this.#running);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2));
      return await super.run(command, args, options);
    } finally {
      this.#running -= 1;
    }
  }
}

describe('LvmDeviceManager.resizeDevice', () => {
  it('grows to the extent-rounded size', async () => {
    const before = lvmState([{ name: ID, vg: VG0, size: GiB }]);
    const target = 1614807040; // 1.5 GiB + 1 rounded up to 4 MiB
    const after = lvmState([{ name: ID, vg: VG0, size: target }]);
    const runner = new ScriptedRunner([
      before,
      { command: 'lvextend', args: ['-L', `${target}b`, `${VG0}/${ID}`], exact: true },
      after,
    ]);
    expect(await setup(runner).dm.resizeDevice(ID, GiB + GiB / 2 + 1)).toEqual({
      volumeId: ID,
      path: `/dev/${VG0}/${ID}`,
      size: target,
      dax: true,
    });
    expect(runner.unused()).toEqual([]);
  });

  it('keeps a volume that is already big enough', async () => {
    const s = lvmState([{ name: ID, vg: VG0, size: GiB }]);
    const runner = new ScriptedRunner([s]);
    expect((await setup(runner).dm.resizeDevice(ID, 512 * MiB)).size).toBe(GiB);
  });

  it('names the most it can grow to, and reports unknown volumes', async () => {
    const s = lvmState([{ name: ID, vg: VG0, size: GiB }]);
    const { dm } = setup(new ScriptedRunner([{ ...s, repeat: true }]));
    await expect(dm.resizeDevice(ID, 4 * GiB)).rejects.toThrow(
      new NotEnoughSpaceError(
        `not enough PMEM to grow volume ${ID} to 4294967296 bytes: it can grow to at most ${GiB + 1992294400} bytes`,
      ),
    );
    await expect(dm.resizeDevice(ID2, GiB)).rejects.toThrow(new DeviceNotFoundError(`volume ${ID2} not found`));
  });
});

describe('LvmDeviceManager.allocationSize', () => {
  // VG0 has 32 MiB extents, VG1 (the emptiest of ours) 4 MiB; the foreign VG, emptier still, never counts.
  const state = reply.fullReport(
    fullReport({
      vgs: [
        { name: VG0, size: 2 * GiB, free: GiB, extent: 32 * MiB, tags: TAG },
        { name: VG1, size: 20 * GiB, free: 10 * GiB, extent: 4 * MiB, tags: TAG },
        { name: 'system', size: 200 * GiB, free: 100 * GiB, extent: 64 * MiB },
      ],
      lvs: [{ name: ID, vg: VG0, size: 64 * MiB }],
    }),
  );

  it("rounds a create up to the extent of the VG it would choose, a growth to the volume's own; only reads the LVM state, once a call", async () => {
    const runner = new ScriptedRunner([{ ...state, repeat: true }]);
    const { dm } = setup(runner);
    expect(await dm.allocationSize(GiB + 1)).toBe(GiB + 4 * MiB);
    expect(await dm.allocationSize(65 * MiB, { grow: ID })).toBe(96 * MiB);
    expect(await dm.allocationSize(MiB, { grow: ID })).toBe(64 * MiB); // never shrinks
    expect(await dm.allocationSize(64 * MiB, { grow: ID })).toBe(64 * MiB);
    await expect(dm.allocationSize(GiB, { grow: ID2 })).rejects.toThrow(
      new DeviceNotFoundError(`volume ${ID2} not found`),
    );
    expect(runner.calls).toEqual(Array.from({ length: 5 }, () => calls.fullReport));
  });

  it('answers the size itself without a VG of ours (createDevice then names the shortage); refuses bad sizes', async () => {
    const runner = new ScriptedRunner([reply.fullReport(fullReport({ vgs: [] }))]);
    const { dm } = setup(runner);
    expect(await dm.allocationSize(GiB + 1)).toBe(GiB + 1);
    await expect(dm.allocationSize(0)).rejects.toThrow(
      new InvalidArgumentError('size must be a positive whole number of bytes, got 0'),
    );
    expect(runner.unused()).toEqual([]);
  });
});
