// capacity_range.limit_bytes is a maximum (CSI): CreateVolume and ControllerExpandVolume refuse a
// size that the device's allocation unit would push above it with OUT_OF_RANGE BEFORE anything
// exists or grows — no device, no record, no tool call that changes one, the capacity as it was —
// in fake mode, emulated mode (scripted losetup) and lvm mode (LVM simulated behind the command
// runner: a volume group with 4 MiB extents). Before, a growth was made first and refused after,
// leaving the volume bigger than the caller allowed. Also: when a device manager's prediction is
// wrong after all (direct mode's lower bound), create removes the device again, and expand answers
// INTERNAL rather than OK with a capacity above the limit.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { volumeIdForName } from '@pmem-csi/api';
import { nullLogger, type CommandRunner, type RunOptions, type RunResult } from '@pmem-csi/runtime';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import type { AllocationOptions, DeviceManager } from '../device/device-manager.js';
import { EmulatedDeviceManager } from '../device/emulated.js';
import { losetupTable } from '../device/emulated-losetup.js';
import { FakeDeviceManager } from '../device/fake.js';
import { LvmDeviceManager } from '../device/lvm.js';
import { fullReport } from '../device/__fixtures__/tool-output.js';
import { call, mountCapability, startTestNode, testClients, TEST_NODE } from '../testing/test-node.js';
import { GiB, MiB, type csi } from '@pmem-csi/csi';

/** LVM in memory: one VG of ours (tagged) with 4 MiB extents; lvm fullreport reports it, lvcreate and lvextend change it. */
class SimLvm implements CommandRunner {
  readonly vg = 'ndbus0region0fsdax';
  readonly lvs = new Map<string, number>();
  readonly calls: string[] = [];

  which(tool: string): string | undefined {
    return `/usr/sbin/${tool}`;
  }

  async run(command: string, args: readonly string[], _options?: RunOptions): Promise<RunResult> {
    this.calls.push(command);
    const bytes = (arg: string | undefined): number => Number((arg ?? '').replace(/b$/, ''));
    let stdout = '';
    switch (command) {
      case 'lvm': {
        if (args[0] !== 'fullreport') throw new Error(`SimLvm: unexpected call: lvm ${args.join(' ')}`);
        const used = [...this.lvs.values()].reduce((a, b) => a + b, 0);
        // Tagged as the default driver's, as its setup() tags a VG it makes or adopts (device/ownership.ts).
        stdout = fullReport({
          vgs: [
            {
              name: this.vg,
              size: GiB,
              free: GiB - used,
              extent: 4 * MiB,
              tags: 'pmem-csi.intel.com/owner=pmem-csi.intel.com',
            },
          ],
          lvs: [...this.lvs].map(([name, size]) => ({ name, vg: this.vg, size })),
        });
        break;
      }
      case 'lvcreate': // -Zn -y -L <size>b -n <name> <vg>
        this.lvs.set(args[5] ?? '', bytes(args[3]));
        break;
      case 'lvextend': // -L <size>b <vg>/<name>
        this.lvs.set((args[2] ?? '').split('/')[1] ?? '', bytes(args[1]));
        break;
      case 'ndctl': // getCapacity lists the regions: none here
      case 'dd':
        break;
      default:
        throw new Error(`SimLvm: unexpected call: ${command} ${args.join(' ')}`);
    }
    return { command, args, exitCode: 0, stdout, stderr: '', durationMs: 0 };
  }

  /** The calls that change LVs or their data so far. */
  changes(): string[] {
    return this.calls.filter((c) => !['lvm', 'ndctl'].includes(c)); // lvm: only fullreport gets here
  }
}

interface Kit {
  readonly dm: DeviceManager;
  /** What changed devices so far, as the mode's tools saw it (tool calls, backing file sizes). */
  changes(): Promise<unknown>;
}

const kits: Array<[string, (dir: string) => Promise<Kit>]> = [
  [
    'fake',
    async () => {
      const dm = new FakeDeviceManager({ totalSize: GiB, granularity: 4 * MiB });
      await dm.setup();
      return { dm, changes: async () => [...dm.store.volumes] };
    },
  ],
  [
    'emulated',
    async (dir) => {
      const loopControl = join(dir, 'loop-control');
      await writeFile(loopControl, '');
      const runner = new ScriptedRunner(
        [
          { command: 'losetup', args: ['--json', '--list'], stdout: '{"loopdevices":[]}', repeat: true },
          { command: 'losetup', args: ['--find'], stdout: '/dev/loop9\n', repeat: true },
          { command: 'losetup', args: ['--set-capacity'], repeat: true },
        ],
        ['losetup', 'dd'],
      );
      // Its loop devices are what the scripted losetup lists, not the host's sysfs.
      Object.assign(runner, { loopTable: losetupTable(runner) });
      const backing = join(await realpath(dir), 'emulated');
      const dm = new EmulatedDeviceManager({
        runner,
        log: nullLogger,
        dir: backing,
        totalSize: GiB,
        uid: 0,
        loopControl,
      });
      await dm.setup();
      const files = async (): Promise<Array<[string, number]>> => {
        const devices = await dm.listDevices();
        return Promise.all(
          devices.map(async (d): Promise<[string, number]> => [
            d.volumeId,
            (await stat(join(backing, `${d.volumeId}.img`))).size,
          ]),
        );
      };
      return {
        dm,
        changes: async () => ({
          losetup: runner.calls.filter((c) => !c.args.includes('--list')).length,
          files: await files(),
        }),
      };
    },
  ],
  [
    'lvm',
    async () => {
      const runner = new SimLvm();
      return {
        dm: new LvmDeviceManager({ runner, log: nullLogger, pmemPercentage: 100 }),
        changes: async () => runner.changes(),
      };
    },
  ],
];

describe.each(kits)('capacity_range.limit_bytes is a maximum (%s mode)', (mode, make) => {
  let dir: string;
  let kit: Kit;
  let stop: () => Promise<void>;
  let controller: grpc.Client & ReturnType<typeof testClients>['controller'];
  let records: () => Promise<Array<[string, number]>>;
  let closeClients: () => void;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-limit-'));
    kit = await make(dir);
    const node = await startTestNode({ dm: kit.dm, dir, runner: new ScriptedRunner() });
    const clients = testClients(node.address);
    controller = clients.controller;
    closeClients = () => clients.close();
    stop = () => node.stop();
    records = async () => (await node.deps.state.list()).map((r) => [r.volumeId, r.size]);
  });

  afterAll(async () => {
    closeClients();
    await stop();
    await rm(dir, { recursive: true, force: true });
  });

  const create = (name: string, required: number, limit: number): Promise<csi.CreateVolumeResponse__Output> =>
    call(controller, controller.CreateVolume, {
      name,
      capacity_range: { required_bytes: String(required), limit_bytes: String(limit) },
      volume_capabilities: [mountCapability()],
    });
  const expand = (id: string, required: number, limit: number): Promise<csi.ControllerExpandVolumeResponse__Output> =>
    call(controller, controller.ControllerExpandVolume, {
      volume_id: id,
      capacity_range: { required_bytes: String(required), limit_bytes: String(limit) },
      volume_capability: mountCapability(),
    });
  /** Everything a refusal must leave as it was. */
  const snapshot = async (): Promise<unknown> => ({
    devices: await kit.dm.listDevices(),
    records: await records(),
    capacity: await kit.dm.getCapacity(),
    changes: await kit.changes(),
  });

  it('CreateVolume: 5 MiB required, 6 MiB limit, 4 MiB units → OUT_OF_RANGE naming all three sizes; no device, no record', async () => {
    const before = await snapshot();
    await expect(create('lim-c', 5 * MiB, 6 * MiB)).rejects.toMatchObject({
      code: grpc.status.OUT_OF_RANGE,
      details: `volume "lim-c" cannot be created for capacity_range.required_bytes ${5 * MiB}: its device would have ${8 * MiB} bytes (rounded up to the allocation unit of ${mode} mode), above capacity_range.limit_bytes ${6 * MiB}`,
    });
    expect(await snapshot()).toEqual(before);
    // The limit the rounded size fits under is fine.
    expect((await create('lim-c', 5 * MiB, 8 * MiB)).volume?.capacity_bytes).toBe(String(8 * MiB));
  });

  it('ControllerExpandVolume: 9 MiB required, 10 MiB limit → OUT_OF_RANGE before the device grows; device, record and capacity unchanged', async () => {
    const id = volumeIdForName('lim-c');
    const before = await snapshot();
    // The record keeps the size asked for at create; an expansion writes the device's.
    expect(before).toMatchObject({ devices: [{ volumeId: id, size: 8 * MiB }], records: [[id, 5 * MiB]] });
    await expect(expand(id, 9 * MiB, 10 * MiB)).rejects.toMatchObject({
      code: grpc.status.OUT_OF_RANGE,
      details: `volume ${id} on node ${TEST_NODE} cannot grow to capacity_range.required_bytes ${9 * MiB}: its device would have ${12 * MiB} bytes (rounded up to the allocation unit of ${mode} mode), above capacity_range.limit_bytes ${10 * MiB}; it keeps its ${8 * MiB} bytes`,
    });
    expect(await snapshot()).toEqual(before);
    // A retry within the limit grows it, and a size it has stays OK under that limit.
    expect(await expand(id, 9 * MiB, 12 * MiB)).toEqual({
      capacity_bytes: String(12 * MiB),
      node_expansion_required: true,
    });
    expect(await expand(id, 12 * MiB, 12 * MiB)).toEqual({
      capacity_bytes: String(12 * MiB),
      node_expansion_required: true,
    });
    expect(await records()).toEqual([[id, 12 * MiB]]);
  });
});

/** A fake whose allocationSize ignores the rounding (as direct mode's lower bound can be short of the kernel's size). */
class ShortSighted extends FakeDeviceManager {
  override async allocationSize(size: number, options?: AllocationOptions): Promise<number> {
    await super.allocationSize(size, options);
    return size;
  }
}

describe('when the device manager could not tell the size beforehand', () => {
  let dir: string;
  let dm: ShortSighted;
  let node: Awaited<ReturnType<typeof startTestNode>>;
  let c: ReturnType<typeof testClients>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-limit-short-'));
    dm = new ShortSighted({ totalSize: GiB, granularity: 4 * MiB });
    await dm.setup();
    node = await startTestNode({ dm, dir, runner: new ScriptedRunner() });
    c = testClients(node.address);
  });

  afterAll(async () => {
    c.close();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('CreateVolume removes the device again and answers OUT_OF_RANGE with the size it got', async () => {
    const capacity = await dm.getCapacity();
    await expect(
      call(c.controller, c.controller.CreateVolume, {
        name: 'short',
        capacity_range: { required_bytes: String(5 * MiB), limit_bytes: String(6 * MiB) },
        volume_capabilities: [mountCapability()],
      }),
    ).rejects.toMatchObject({
      code: grpc.status.OUT_OF_RANGE,
      details: `volume "short" cannot be created for capacity_range.required_bytes ${5 * MiB}: its device got ${8 * MiB} bytes (more than the fake device manager could tell beforehand), above capacity_range.limit_bytes ${6 * MiB}; the device was removed again`,
    });
    expect(await dm.listDevices()).toEqual([]);
    expect(await node.deps.state.list()).toEqual([]);
    expect(await dm.getCapacity()).toEqual(capacity);
  });

  it('ControllerExpandVolume answers INTERNAL, not OK with a capacity above the limit; the record holds the size the device has', async () => {
    const made = await call(c.controller, c.controller.CreateVolume, {
      name: 'short-grow',
      capacity_range: { required_bytes: String(8 * MiB) },
      volume_capabilities: [mountCapability()],
    });
    const id = made.volume?.volume_id ?? '';
    await expect(
      call(c.controller, c.controller.ControllerExpandVolume, {
        volume_id: id,
        capacity_range: { required_bytes: String(9 * MiB), limit_bytes: String(10 * MiB) },
      }),
    ).rejects.toMatchObject({
      code: grpc.status.INTERNAL,
      details: `volume ${id} on node ${TEST_NODE} grew to ${12 * MiB} bytes, above capacity_range.limit_bytes ${10 * MiB}, although its fake device manager said it would stay within`,
    });
    expect((await dm.getDevice(id)).size).toBe(12 * MiB);
    expect((await node.deps.state.get(id))?.size).toBe(12 * MiB);
  });
});
