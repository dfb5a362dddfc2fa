// The registrar set against in-process fake registries on loopback addresses (127.0.0.2, .3, ...
// stand for the controller pods behind one headless Service name) and a fake resolver: one
// registration per resolved address, the configured name kept as the TLS target name and
// :authority, vanished addresses unregistered and new ones registered, a failed resolution keeping
// what it had, a failing replica triggering a resolution before the interval, the inventory pushed
// to every replica within 2 s (coalesced, in order), and real mutual TLS refusing a wrong SAN on a
// dialled address.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { NODE_CONTROLLER_SAN, REGISTRY_SAN } from '@pmem-csi/api';
import {
  channelCredentials,
  createCa,
  createLeaf,
  createLogger,
  serverCredentials,
  type CertificateAndKey,
  type TlsFiles,
} from '@pmem-csi/runtime';
import type { Capacity, registry } from '@pmem-csi/csi';
import { RegistrarSet, type RegistrarSetOptions } from './registrar-set.js';
import { FakeRegistry } from './testing/fake-registry.js';
import { FakeResolver } from './testing/fake-resolver.js';

const NAME = 'registry.test';

async function until(what: string, cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await sleep(10);
  }
}

const capacity = (): Promise<Capacity> =>
  Promise.resolve({ maxVolumeSize: 100, available: 100, managed: 1000, total: 2000 });

const volume = (i: number): registry.InventoryVolume => ({
  volume_id: `vol-${i}`,
  capacity_bytes: String(1024 * i),
  volume_context: { name: `pvc-${i}` },
});

type Renewal = registry.RenewControllerRequest__Output;
const pushes = (reg: FakeRegistry): Renewal[] =>
  (reg.callsOf('RenewController') as Renewal[]).filter((r) => r.inventory !== null);

describe('RegistrarSet', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** Registries on 127.0.0.2, .3, ... sharing one port (like pods behind a headless Service). */
  async function replicas(count: number, leaseSeconds = 1): Promise<FakeRegistry[]> {
    const first = await new FakeRegistry().start(0, { host: '127.0.0.2' });
    const all = [first];
    for (let i = 1; i < count; i++) all.push(await new FakeRegistry().start(first.port, { host: `127.0.0.${2 + i}` }));
    for (const r of all) {
      r.leaseSeconds = leaseSeconds;
      cleanups.push(() => r.stop());
    }
    return all;
  }

  function registrarSet(resolver: FakeResolver, endpoints: string[], extra: Partial<RegistrarSetOptions> = {}) {
    const set = new RegistrarSet({
      registryEndpoints: endpoints,
      resolver,
      credentials: grpc.credentials.createInsecure(),
      nodeId: 'node-1',
      endpoint: '10.0.0.5:10001',
      deviceMode: 'fake',
      version: '1.2.3',
      capacity,
      log: createLogger({ level: 'error' }),
      callTimeoutMs: 2000,
      backoff: { initialMs: 50, maxMs: 400 },
      resolveIntervalMs: 60_000,
      minResolveIntervalMs: 50,
      ...extra,
    });
    cleanups.push(() => set.stop());
    return set;
  }

  it('registers with every address the name resolves to; the name stays the TLS target name and :authority', async () => {
    const [a, b] = (await replicas(2)) as [FakeRegistry, FakeRegistry];
    const resolver = new FakeResolver().set(NAME, ['127.0.0.3', '127.0.0.2', '127.0.0.2']);
    const set = registrarSet(resolver, [`${NAME}:${a.port}`]);
    set.start();
    await set.waitForRegistrations(1, 10_000);
    expect(set.addresses).toEqual([a.address, b.address]);
    for (const r of [a, b]) expect(r.registrations.get('node-1')?.request.endpoint).toBe('10.0.0.5:10001');
    expect(a.authorities[0]).toBe(`${NAME}:${a.port}`);
    expect(b.authorities[0]).toBe(`${NAME}:${a.port}`);
    expect(set.status).toMatchObject({ registered: true, registeredReplicas: 2, replicas: 2, registrations: 2 });
    expect(set.status.replicaStatus.map((r) => [r.endpoint, r.address, r.registered])).toEqual([
      [`${NAME}:${a.port}`, a.address, true],
      [`${NAME}:${a.port}`, b.address, true],
    ]);
  });

  it('combines several endpoints; an IP literal is dialled as it is, without a lookup', async () => {
    const [a] = (await replicas(1)) as [FakeRegistry];
    const other = await new FakeRegistry().start(0, { host: '127.0.0.3' });
    cleanups.push(() => other.stop());
    const resolver = new FakeResolver().set(NAME, ['127.0.0.3']);
    const set = registrarSet(resolver, [a.address, `${NAME}:${other.port}`]);
    set.start();
    await set.waitForRegistrations(1, 10_000);
    expect(set.addresses).toEqual([a.address, other.address]);
    expect(resolver.lookups).toEqual([NAME]);
    expect(a.authorities[0]).toBe(a.address);
    expect(other.authorities[0]).toBe(`${NAME}:${other.port}`);
  });

  it('unregisters from addresses that vanish, registers with new ones, and keeps them all when the name fails to resolve', async () => {
    const [a, b, c] = (await replicas(3)) as [FakeRegistry, FakeRegistry, FakeRegistry];
    const resolver = new FakeResolver().set(NAME, ['127.0.0.2', '127.0.0.3']);
    const set = registrarSet(resolver, [`${NAME}:${a.port}`]);
    set.start();
    await set.waitForRegistrations(1, 10_000);

    resolver.set(NAME, ['127.0.0.3', '127.0.0.4']);
    await set.refresh();
    await set.waitForRegistrations(1, 10_000);
    expect(set.addresses).toEqual([b.address, c.address]);
    await until('the vanished replica to be unregistered', () => a.callsOf('UnregisterController').length === 1);
    expect(a.registrations.size).toBe(0);
    expect(c.registrations.has('node-1')).toBe(true);
    expect(set.status).toMatchObject({ replicas: 2, registeredReplicas: 2 });
    expect(set.status.registrations).toBeGreaterThanOrEqual(3); // the retired replica's registration still counts

    resolver.set(NAME, new Error('getaddrinfo EAI_AGAIN registry.test'));
    await set.refresh();
    expect(set.addresses).toEqual([b.address, c.address]);
    expect(set.status.resolveErrors).toEqual({ [`${NAME}:${a.port}`]: 'getaddrinfo EAI_AGAIN registry.test' });
    expect(b.callsOf('UnregisterController')).toEqual([]);
    expect(c.callsOf('UnregisterController')).toEqual([]);

    resolver.set(NAME, ['127.0.0.3', '127.0.0.4']);
    await set.refresh();
    expect(set.status.resolveErrors).toBeUndefined();
  });

  it('a replica that stops answering makes the set resolve again at once, not after the interval', async () => {
    const [a, b] = (await replicas(2)) as [FakeRegistry, FakeRegistry];
    const resolver = new FakeResolver().set(NAME, ['127.0.0.2', '127.0.0.3']);
    const set = registrarSet(resolver, [`${NAME}:${a.port}`], { resolveIntervalMs: 60_000 });
    set.start();
    await set.waitForRegistrations(1, 10_000);
    const lookups = resolver.lookups.length;
    resolver.set(NAME, ['127.0.0.2']); // the pod went away, and with it its DNS record
    await b.stop();
    await until('the set to drop the gone replica', () => set.addresses.length === 1, 5000);
    expect(set.addresses).toEqual([a.address]);
    expect(resolver.lookups.length).toBeGreaterThan(lookups);
    expect(set.status).toMatchObject({ registered: true, registeredReplicas: 1, replicas: 1 });
  });

  it('pushes the inventory to every replica within 2 s of a change; pushes are coalesced and arrive in order', async () => {
    const all = await replicas(2, 30); // renewals every 10 s: only pushes renew during the test
    const resolver = new FakeResolver().set(NAME, ['127.0.0.2', '127.0.0.3']);
    let volumes: registry.InventoryVolume[] = [];
    const set = registrarSet(resolver, [`${NAME}:${all[0]!.port}`], { volumes: () => Promise.resolve(volumes) });
    set.start();
    await set.waitForRegistrations(1, 10_000);
    for (const r of all) expect(r.registrations.get('node-1')?.request.inventory).toEqual({ count: '0', volumes: [] });

    volumes = [volume(1)];
    const started = Date.now();
    set.pushInventory();
    await until('both replicas to get the new volume', () => all.every((r) => pushes(r).length === 1), 2000);
    expect(Date.now() - started).toBeLessThan(2000);
    for (const r of all) {
      const [push] = pushes(r);
      expect(push?.registration_id).toBe(r.registrations.get('node-1')?.registrationId);
      expect(push?.inventory).toEqual({ count: '1', volumes: [volume(1)] });
    }

    for (let i = 2; i <= 6; i++) {
      volumes = Array.from({ length: i }, (_, j) => volume(j + 1));
      set.pushInventory();
    }
    await until(
      'both replicas to get all six volumes',
      () => all.every((r) => pushes(r).at(-1)?.inventory?.count === '6'),
      2000,
    );
    for (const r of all) {
      const counts = pushes(r).map((p) => Number(p.inventory?.count));
      expect(counts.length).toBeLessThanOrEqual(3); // five pushes, at most two renewals after the first
      expect(counts).toEqual([...counts].sort((x, y) => x - y)); // never an older inventory after a newer one
    }
    // The registries record a push before its reply reaches the node.
    const sent = pushes(all[0]!).length + pushes(all[1]!).length;
    await until('the node to count every accepted push', () => set.status.inventoryPushes === sent, 2000);
  });

  it('refuses an empty endpoint list', () => {
    expect(() => registrarSet(new FakeResolver(), [])).toThrow(
      new TypeError('RegistrarSet: registryEndpoints must name at least one host:port'),
    );
  });
});

describe('RegistrarSet over mutual TLS', () => {
  let dir: string;
  let files: { registry: TlsFiles; nodeController: TlsFiles };
  const cleanups: Array<() => Promise<void>> = [];

  async function writeSet(name: string, caPem: string, leaf: CertificateAndKey): Promise<TlsFiles> {
    const set = {
      caFile: join(dir, `${name}-ca.crt`),
      certFile: join(dir, `${name}.crt`),
      keyFile: join(dir, `${name}.key`),
    };
    await writeFile(set.caFile, caPem);
    await writeFile(set.certFile, leaf.certPem);
    await writeFile(set.keyFile, leaf.keyPem, { mode: 0o600 });
    return set;
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-registrar-set-'));
    const ca = await createCa({ commonName: 'registrar-set test CA', validityDays: 1, keyBits: 2048 });
    const [reg, node] = await Promise.all([
      createLeaf({ ca, dnsName: REGISTRY_SAN, validityDays: 1, keyBits: 2048 }),
      createLeaf({ ca, dnsName: NODE_CONTROLLER_SAN, validityDays: 1, keyBits: 2048 }),
    ]);
    files = {
      registry: await writeSet('registry', ca.certPem, reg),
      nodeController: await writeSet('node', ca.certPem, node),
    };
  }, 60_000);

  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    await rm(dir, { recursive: true, force: true });
  });

  it('dials each address, and a replica whose certificate lacks the registry SAN is still refused', async () => {
    const allowed = { allowedClientSan: NODE_CONTROLLER_SAN };
    const good = await new FakeRegistry().start(0, {
      host: '127.0.0.2',
      credentials: await serverCredentials(files.registry, allowed),
    });
    // An impostor behind the same name: a valid certificate of the same CA, but not the registry's.
    const impostor = await new FakeRegistry().start(good.port, {
      host: '127.0.0.3',
      credentials: await serverCredentials(files.nodeController, allowed),
    });
    cleanups.push(
      () => good.stop(),
      () => impostor.stop(),
    );
    const set = new RegistrarSet({
      registryEndpoints: [`${NAME}:${good.port}`],
      resolver: new FakeResolver().set(NAME, ['127.0.0.2', '127.0.0.3']),
      credentials: await channelCredentials(files.nodeController, { expectedServerName: REGISTRY_SAN }),
      nodeId: 'node-1',
      endpoint: '10.0.0.5:10001',
      deviceMode: 'fake',
      version: '1.2.3',
      capacity,
      log: createLogger({ level: 'error' }),
      callTimeoutMs: 2000,
      backoff: { initialMs: 50, maxMs: 400 },
    });
    cleanups.push(() => set.stop());
    set.start();
    await until(
      'one registration and one TLS refusal',
      () => set.status.registeredReplicas === 1 && set.status.lastFailure !== undefined,
      20_000,
    );
    const [ok, refused] = set.status.replicaStatus;
    expect(ok).toMatchObject({ address: good.address, registered: true });
    expect(refused).toMatchObject({ address: impostor.address, registered: false, lastFailure: { reason: 'tls' } });
    expect(refused?.lastFailure?.detail).toContain(
      'server certificate DNS SAN must include pmem-registry (has: pmem-node-controller)',
    );
    expect(impostor.calls).toEqual([]);
    expect(set.status).toMatchObject({ registered: true, registeredReplicas: 1, replicas: 2 });
  }, 30_000);
});
