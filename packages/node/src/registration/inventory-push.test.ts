// A node driver with two controller replicas behind one name (issue 17): it registers with both,
// its status and metrics say "2 of 2", and a volume created or deleted through the node-controller service
// (by whichever replica leads) reaches BOTH replicas' registries within 2 s as a pushed inventory,
// so a standby that takes over knows where every volume lives.
import { afterEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadCsi, nullLogger, unary } from '@pmem-csi/runtime';
import { mountCapability } from '../testing/test-node.js';
import { FakeDeviceManager, FakeStore } from '../device/fake.js';
import { startNodeDriver, type NodeDriver } from '../node-driver.js';
import { FakeRegistry } from './testing/fake-registry.js';
import { FakeResolver } from './testing/fake-resolver.js';
import { MiB, type registry } from '@pmem-csi/csi';

async function until(what: string, cond: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(5);
  }
}

/** The volume ids of the last inventory a registry got pushed (undefined: none yet). */
function lastPushed(reg: FakeRegistry): string[] | undefined {
  const renewals = reg.callsOf('RenewController') as registry.RenewControllerRequest__Output[];
  const inventory = renewals.filter((r) => r.inventory !== null).at(-1)?.inventory;
  return inventory?.volumes.map((v) => v.volume_id);
}

describe('inventory push to every controller replica', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('a create and a delete reach both replicas within 2 s; the status says registered with 2 of 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pmem-push-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const a = await new FakeRegistry().start(0, { host: '127.0.0.2' });
    const b = await new FakeRegistry().start(a.port, { host: '127.0.0.3' });
    cleanups.push(
      () => a.stop(),
      () => b.stop(),
    );
    for (const r of [a, b]) r.leaseSeconds = 30; // periodic renewals every 10 s: only pushes during the test
    const driver: NodeDriver = await startNodeDriver({
      driverName: 'pmem-csi.intel.com',
      nodeId: 'node-7',
      deviceManager: new FakeDeviceManager({ store: new FakeStore(), totalSize: 1024 * MiB }),
      stateDir: join(dir, 'state'),
      csiEndpoint: `unix://${join(dir, 'csi.sock')}`,
      nodeControllerAddress: '127.0.0.1:0',
      registryAddress: `controller.test:${a.port}`,
      registryResolver: new FakeResolver().set('controller.test', ['127.0.0.2', '127.0.0.3']),
      serverCredentials: grpc.ServerCredentials.createInsecure(),
      channelCredentials: grpc.credentials.createInsecure(),
      log: nullLogger,
      registrarTuning: { backoff: { initialMs: 50, maxMs: 200 }, callTimeoutMs: 2000 },
    });
    cleanups.push(() => driver.stop());
    await driver.registrar?.waitForRegistrations(1, 10_000);
    expect((await driver.status()).registration).toMatchObject({
      registered: true,
      registeredReplicas: 2,
      replicas: 2,
    });
    const scraped = await driver.metrics.metrics();
    expect(scraped).toContain('pmem_csi_node_registry_replicas{node="node-7",state="resolved"} 2');
    expect(scraped).toContain('pmem_csi_node_registry_replicas{node="node-7",state="registered"} 2');
    expect(scraped).toContain('pmem_csi_node_registered{node="node-7"} 1');

    const controller = new (loadCsi().csi.v1.Controller)(
      `127.0.0.1:${driver.nodeControllerPort}`,
      grpc.credentials.createInsecure(),
    );
    cleanups.push(() => Promise.resolve(controller.close()));
    const created = await unary(
      controller,
      controller.CreateVolume,
      { name: 'pvc-1', capacity_range: { required_bytes: String(8 * MiB) }, volume_capabilities: [mountCapability()] },
      { timeoutMs: 5000 },
    );
    const id = created.volume?.volume_id ?? '';
    const afterCreate = Date.now();
    await until(`both replicas to know ${id}`, () => [a, b].every((r) => lastPushed(r)?.includes(id) === true), 2000);
    expect(Date.now() - afterCreate).toBeLessThan(2000);

    await unary(controller, controller.DeleteVolume, { volume_id: id }, { timeoutMs: 5000 });
    const afterDelete = Date.now();
    await until(`both replicas to forget ${id}`, () => [a, b].every((r) => lastPushed(r)?.length === 0), 2000);
    expect(Date.now() - afterDelete).toBeLessThan(2000);
    // Counted by the node once the replies are in (the registries record the calls before they answer).
    await until('the node to count the four pushes', () => (driver.registrar?.status.inventoryPushes ?? 0) >= 4, 2000);
  }, 30_000);
});
