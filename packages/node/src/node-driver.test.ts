// startNodeDriver end to end with the fake device manager and insecure credentials: start-up
// reconcile (dropped records, orphans kept), both servers (unix socket and TCP), registration with
// the advertised endpoint, unregistration and shutdown on stop; and the fail-fast checks (missing
// tools, read-only /sys in direct mode, every PMEM region another driver instance's).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeTools, MiB } from '@pmem-csi/csi';
import { loadCsi, nullLogger, unary } from '@pmem-csi/runtime';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import { checkSysWritable } from './device/direct.js';
import { FakeDeviceManager, FakeStore } from './device/fake.js';
import { fullReport, ndctlRegions, reply, vgsReport } from './device/__fixtures__/tool-output.js';
import { mountCapability } from './testing/test-node.js';
import { startNodeDriver, type NodeDriverOptions } from './node-driver.js';
import { FakeRegistry } from './registration/testing/fake-registry.js';
import { VolumeStateStore } from './state/volume-store.js';

describe('startNodeDriver', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-driver-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function options(extra: Partial<NodeDriverOptions>): NodeDriverOptions {
    return {
      driverName: 'pmem-csi.intel.com',
      nodeId: 'node-7',
      runner: new ScriptedRunner(),
      stateDir: join(dir, 'state'),
      csiEndpoint: `unix://${join(dir, 'plugin', 'csi.sock')}`,
      nodeControllerAddress: '127.0.0.1:0',
      serverCredentials: grpc.ServerCredentials.createInsecure(),
      channelCredentials: grpc.credentials.createInsecure(),
      log: nullLogger,
      registrarTuning: { backoff: { initialMs: 50, maxMs: 200 }, callTimeoutMs: 2000 },
      ...extra,
    };
  }

  it('reconciles, serves both services, registers, and unregisters on stop', async () => {
    const store = new FakeStore();
    store.volumes.set('orphan-1', 8 * MiB);
    const records = new VolumeStateStore({ dir: join(dir, 'state', 'volumes') });
    await records.init();
    await records.put({
      volumeId: 'lost-1',
      name: 'lost',
      size: 8 * MiB,
      deviceMode: 'fake',
      parameters: {},
      createdAt: new Date().toISOString(),
    });
    store.volumes.set('kept-1', 16 * MiB);
    await records.put({
      volumeId: 'kept-1',
      name: 'kept',
      size: 16 * MiB,
      deviceMode: 'fake',
      parameters: {},
      createdAt: new Date().toISOString(),
    });
    await records.close(); // one store per directory: the driver opens its own
    const registry = await new FakeRegistry().start();
    const driver = await startNodeDriver(
      options({
        deviceManager: new FakeDeviceManager({ store, totalSize: 1024 * MiB }),
        registryAddress: registry.address,
        advertisedEndpoint: '10.1.2.3:10001',
        version: '9.9.9',
      }),
    );
    try {
      expect(driver.reconciled.droppedRecords.map((r) => r.volumeId)).toEqual(['lost-1']);
      expect(driver.reconciled.orphans.map((d) => d.volumeId)).toEqual(['orphan-1']);
      expect(store.volumes.has('orphan-1')).toBe(true);

      const csi = loadCsi().csi.v1;
      const identity = new csi.Identity(`unix://${join(dir, 'plugin', 'csi.sock')}`, grpc.credentials.createInsecure());
      expect(await unary(identity, identity.Probe, {}, { timeoutMs: 5000 })).toEqual({ ready: { value: true } });
      expect(await unary(identity, identity.GetPluginInfo, {}, { timeoutMs: 5000 })).toMatchObject({
        name: 'pmem-csi.intel.com',
        vendor_version: '9.9.9',
      });
      identity.close();

      const controller = new csi.Controller(
        `127.0.0.1:${driver.nodeControllerPort}`,
        grpc.credentials.createInsecure(),
      );
      const res = await unary(
        controller,
        controller.CreateVolume,
        {
          name: 'pvc-x',
          capacity_range: { required_bytes: String(8 * MiB) },
          volume_capabilities: [mountCapability()],
        },
        { timeoutMs: 5000 },
      );
      expect(res.volume?.accessible_topology).toEqual([{ segments: { 'pmem-csi.intel.com/node': 'node-7' } }]);
      controller.close();

      await driver.registrar!.waitForRegistrations(1, 10_000);
      expect(registry.registrations.get('node-7')?.request).toMatchObject({
        endpoint: '10.1.2.3:10001',
        device_mode: 'fake',
        version: '9.9.9',
      });
      // The registration carries what ListVolumes reports (the kept volume, not the dropped record
      // nor the orphan), so the controller need not dial back to list the node's volumes.
      const inventory = registry.registrations.get('node-7')?.request.inventory;
      expect(inventory?.count).toBe('1');
      expect(inventory?.volumes).toEqual([
        {
          volume_id: 'kept-1',
          capacity_bytes: String(16 * MiB),
          volume_context: expect.objectContaining({ name: 'kept', deviceMode: 'fake' }),
        },
      ]);
    } finally {
      await driver.stop();
      await registry.stop();
    }
    expect(registry.registrations.size).toBe(0);
    const after = new (loadCsi().csi.v1.Controller)(
      `127.0.0.1:${driver.nodeControllerPort}`,
      grpc.credentials.createInsecure(),
    );
    await expect(unary(after, after.ListVolumes, {}, { timeoutMs: 2000 })).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
    after.close();
  });

  it('an unbindable node-controller address fails the start, naming it, and takes the CSI socket down', async () => {
    // Probe answers ready as soon as the CSI socket serves the Node service (CSI spec), before the
    // node-controller server binds; its bind failing must still end the start loudly and leave
    // no socket that a CO could find ready.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const socket = join(dir, 'plugin-unbindable', 'csi.sock');
    try {
      const err = await startNodeDriver(
        options({
          deviceManager: new FakeDeviceManager({ store: new FakeStore(), totalSize: 64 * MiB }),
          stateDir: join(dir, 'state-unbindable'),
          csiEndpoint: `unix://${socket}`,
          nodeControllerAddress: `127.0.0.1:${port}`,
        }),
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain(`127.0.0.1:${port}`);
      const identity = new (loadCsi().csi.v1.Identity)(`unix://${socket}`, grpc.credentials.createInsecure());
      await expect(unary(identity, identity.Probe, {}, { timeoutMs: 1000 })).rejects.toMatchObject({
        code: grpc.status.UNAVAILABLE,
      });
      identity.close();
    } finally {
      taken.close();
    }
  });

  it('fails fast naming every missing tool and its package', async () => {
    // Every tool of the mode but the two of xfsprogs that matter here (the list itself: @pmem-csi/csi).
    const missing = ['mkfs.xfs', 'xfs_growfs'];
    const installed = nodeTools('emulated').filter((t) => !missing.includes(t));
    await expect(
      startNodeDriver(options({ deviceMode: 'emulated', runner: new ScriptedRunner([], installed) })),
    ).rejects.toMatchObject({
      kind: 'FailedPrecondition',
      message:
        'the node driver in emulated device mode needs mkfs.xfs, xfs_growfs, not found on this machine (Debian packages: xfsprogs)',
    });
  });

  it('does not start when another driver instance owns every PMEM region: its driver name reaches the device manager', async () => {
    // lvm mode; both regions' VGs carry the owner tag of pmem-csi.intel.com, and this driver is another one.
    const regions = ndctlRegions([
      {
        dev: 'ndbus0',
        regions: [
          { dev: 'region0', size: 4 * 1024 * MiB, dimms: ['nmem0'] },
          { dev: 'region1', size: 4 * 1024 * MiB, dimms: ['nmem1'] },
        ],
      },
    ]);
    const tag = 'pmem-csi.intel.com/owner=pmem-csi.intel.com';
    const vgs = [
      { name: 'ndbus0region0fsdax', size: 4000 * MiB, free: 4000 * MiB, tags: tag },
      { name: 'ndbus0region1fsdax', size: 4000 * MiB, free: 4000 * MiB, tags: tag },
    ];
    const runner = new ScriptedRunner([
      reply.regions(regions),
      reply.vgs(vgsReport(vgs)),
      reply.namespaces(['--region=region0'], ''),
      reply.namespaces(['--region=region1'], ''),
      reply.fullReport(fullReport({ vgs })),
      // --cxl-regions=manual (the default): the start lists CXL devices (none here) and assembles nothing.
      { command: 'cxl', args: ['list', '-vvv'], exact: true, stdout: '[]' },
    ]);
    await expect(
      startNodeDriver(options({ driverName: 'second.pmem-csi.example', deviceMode: 'lvm', runner })),
    ).rejects.toMatchObject({
      kind: 'FailedPrecondition',
      message:
        'no PMEM on this node is left for driver second.pmem-csi.example (owner mark a99c7e08e1): ' +
        'region0 belongs to driver pmem-csi.intel.com (volume group ndbus0region0fsdax); ' +
        'region1 belongs to driver pmem-csi.intel.com (volume group ndbus0region1fsdax). ' +
        "One driver manages a region's PMEM: keep this driver off this node (its node selector), or free the regions " +
        "by deleting the other driver's volumes, namespaces and volume groups there",
    });
    expect(runner.unused()).toEqual([]);
    expect(
      runner.calls.every(
        (c) =>
          ['ndctl', 'vgs', 'lvm', 'cxl'].includes(c.command) &&
          !['create-namespace', 'create-region'].includes(c.args[0] ?? '') &&
          (c.command !== 'lvm' || c.args[0] === 'fullreport'),
      ),
    ).toBe(true);
  });

  it('direct mode with a read-only /sys fails fast with the reason', async () => {
    const mountinfo = join(dir, 'mountinfo');
    await writeFile(mountinfo, '22 1 0:21 / /sys ro,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs ro\n');
    const err = await startNodeDriver(
      options({ deviceMode: 'direct', checkSys: () => checkSysWritable({ mountinfo }) }),
    ).catch((e: Error) => e);
    expect(err).toMatchObject({ kind: 'FailedPrecondition' });
    expect((err as Error).message).toContain('/sys is mounted read-only (ro,nosuid,nodev,noexec,relatime)');
  });
});
