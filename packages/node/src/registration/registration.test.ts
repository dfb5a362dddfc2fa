// The registrar against an in-process fake registry: registration with all fields, renewal at a
// third of the lease with fresh capacity, re-registration after NOT_FOUND and after a controller
// restart on the same port, backoff while the controller is down, failure classification in the
// logs (connection refused, TLS, timeout), and unregistration on stop.
import { afterEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '@pmem-csi/runtime';
import type { Capacity } from '@pmem-csi/csi';
import { backoffDelay } from './backoff.js';
import { classifyRegistryError } from './classify.js';
import { MAX_INVENTORY_VOLUMES, Registrar, type RegistrarOptions } from './registrar.js';
import { FakeRegistry } from './testing/fake-registry.js';

function serviceError(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
}

async function until(what: string, cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await sleep(20);
  }
}

describe('backoff', () => {
  it('doubles from 1 s up to 30 s, with the upper half random', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 10].map((a) => backoffDelay(a, undefined, () => 1))).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000,
    ]);
    expect([0, 1, 5].map((a) => backoffDelay(a, undefined, () => 0))).toEqual([500, 1000, 15000]);
  });
});

describe('classifyRegistryError', () => {
  it.each([
    [
      'connection refused',
      serviceError(grpc.status.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1.'),
      'connection-refused',
      'UNAVAILABLE',
    ],
    [
      'TLS handshake',
      serviceError(
        grpc.status.UNAVAILABLE,
        'No connection established. Last error: Error: ...:SSL routines:ssl3_get_record:wrong version number',
      ),
      'tls',
      'UNAVAILABLE',
    ],
    [
      'name resolution',
      serviceError(grpc.status.UNAVAILABLE, 'Name resolution failed for target dns:nowhere:1'),
      'unreachable',
      'UNAVAILABLE',
    ],
    ['deadline', serviceError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'), 'timeout', 'DEADLINE_EXCEEDED'],
    ['NOT_FOUND', serviceError(grpc.status.NOT_FOUND, 'no registration'), 'not-found', 'NOT_FOUND'],
    [
      'PERMISSION_DENIED',
      serviceError(grpc.status.PERMISSION_DENIED, 'client certificate DNS SAN must include pmem-node-controller'),
      'rejected',
      'PERMISSION_DENIED',
    ],
    ['INTERNAL', serviceError(grpc.status.INTERNAL, 'boom'), 'other', 'INTERNAL'],
    ['non-gRPC error', new Error('capacity failed'), 'other', 'NONE'],
  ])('%s', (_label, err, reason, code) => {
    expect(classifyRegistryError(err)).toMatchObject({ reason, code });
  });
});

describe('Registrar', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  let available = 100;
  function capacity(): Promise<Capacity> {
    available += 1;
    return Promise.resolve({ maxVolumeSize: available, available, managed: 1000, total: 2000 });
  }

  function registrar(address: string, lines: string[], extra: Partial<RegistrarOptions> = {}): Registrar {
    const r = new Registrar({
      registryAddress: address,
      credentials: grpc.credentials.createInsecure(),
      nodeId: 'node-1',
      endpoint: '10.0.0.5:10001',
      deviceMode: 'fake',
      version: '1.2.3',
      capacity,
      log: createLogger({ sink: (l) => lines.push(l), level: 'debug' }),
      callTimeoutMs: 2000,
      backoff: { initialMs: 50, maxMs: 400 },
      ...extra,
    });
    cleanups.push(() => r.stop());
    return r;
  }

  async function registry(port = 0): Promise<FakeRegistry> {
    const reg = await new FakeRegistry().start(port);
    cleanups.push(() => reg.stop());
    return reg;
  }

  it('registers with node id, endpoint, capacity, mode and version; renews at lease/3 with fresh capacity; unregisters on stop', async () => {
    const reg = await registry();
    const r = registrar(reg.address, []);
    r.start();
    await r.waitForRegistrations(1);
    const first = reg.registrations.get('node-1');
    expect(first?.request).toMatchObject({
      node_id: 'node-1',
      endpoint: '10.0.0.5:10001',
      device_mode: 'fake',
      version: '1.2.3',
      capacity: { managed: '1000', total: '2000' },
    });
    expect(first?.request.inventory).toBeNull(); // no volumes callback: the controller lists them
    const started = Date.now();
    await until('two renewals', () => reg.callsOf('RenewController').length >= 2);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThan(500); // 2 × 333 ms, minus the head start of the first
    expect(elapsed).toBeLessThan(3000);
    const renewals = reg.callsOf('RenewController') as Array<{
      capacity: { available: string };
      registration_id: string;
    }>;
    expect(renewals[0]!.registration_id).toBe(first!.registrationId);
    expect(Number(renewals[1]!.capacity.available)).toBeGreaterThan(Number(first!.request.capacity!.available));
    await r.stop();
    expect(reg.callsOf('UnregisterController')).toEqual([
      { node_id: 'node-1', registration_id: first!.registrationId },
    ]);
    expect(reg.registrations.size).toBe(0);
    expect(r.status.registered).toBe(false);
  });

  it('sends the volume inventory with every registration: all volumes, only their number above the limit, none when it cannot be read', async () => {
    const reg = await registry();
    const volume = (i: number) => ({
      volume_id: `vol-${i}`,
      capacity_bytes: String(1024 * i),
      volume_context: { name: `pvc-${i}` },
    });
    let volumes: Array<ReturnType<typeof volume>> | Error = [volume(1), volume(2)];
    const lines: string[] = [];
    const r = registrar(reg.address, lines, {
      volumes: () => (volumes instanceof Error ? Promise.reject(volumes) : Promise.resolve(volumes)),
    });
    r.start();
    await r.waitForRegistrations(1);
    expect(reg.registrations.get('node-1')?.request.inventory).toEqual({
      count: '2',
      volumes: [
        { volume_id: 'vol-1', capacity_bytes: '1024', volume_context: { name: 'pvc-1' } },
        { volume_id: 'vol-2', capacity_bytes: '2048', volume_context: { name: 'pvc-2' } },
      ],
    });
    volumes = Array.from({ length: MAX_INVENTORY_VOLUMES + 1 }, (_, i) => volume(i));
    reg.registrations.clear();
    await r.waitForRegistrations(2, 5000);
    expect(reg.registrations.get('node-1')?.request.inventory).toEqual({
      count: String(MAX_INVENTORY_VOLUMES + 1),
      volumes: [],
    });
    volumes = new Error('state directory unreadable');
    reg.registrations.clear();
    await r.waitForRegistrations(3, 5000);
    expect(reg.registrations.get('node-1')?.request.inventory).toBeNull();
    expect(lines.find((l) => l.includes('could not read the volumes for the registration'))).toContain(
      'state directory unreadable',
    );
  });

  it('pushInventory renews at once with the inventory; a push the renewal could not deliver goes with the next registration', async () => {
    const reg = await registry();
    reg.leaseSeconds = 30; // periodic renewals every 10 s: none during the test
    let volumes = [{ volume_id: 'vol-1', capacity_bytes: '1024', volume_context: { name: 'pvc-1' } }];
    const r = registrar(reg.address, [], { volumes: () => Promise.resolve(volumes) });
    r.pushInventory(); // before the first registration: nothing extra, the registration carries the volumes
    r.start();
    await r.waitForRegistrations(1);
    expect(reg.registrations.get('node-1')?.request.inventory?.count).toBe('1');
    await sleep(200);
    expect(reg.callsOf('RenewController')).toEqual([]);

    volumes = [...volumes, { volume_id: 'vol-2', capacity_bytes: '2048', volume_context: { name: 'pvc-2' } }];
    r.pushInventory();
    await until('a renewal with two volumes', () => reg.callsOf('RenewController').length === 1, 2000);
    expect(reg.callsOf('RenewController')[0]).toMatchObject({
      registration_id: r.status.registrationId,
      inventory: { count: '2' },
    });
    await until('the push to be counted', () => r.status.inventoryPushes === 1, 2000);

    reg.registrations.clear(); // the controller restarted: the push renewal gets NOT_FOUND
    volumes = volumes.slice(1);
    r.pushInventory();
    await r.waitForRegistrations(2, 5000);
    expect(reg.registrations.get('node-1')?.request.inventory).toMatchObject({
      count: '1',
      volumes: [{ volume_id: 'vol-2' }],
    });
    expect(r.status.inventoryPushes).toBe(1);
  });

  it('pushInventory without a volumes callback sends nothing', async () => {
    const reg = await registry();
    reg.leaseSeconds = 30;
    const r = registrar(reg.address, []);
    r.start();
    await r.waitForRegistrations(1);
    r.pushInventory();
    await sleep(300);
    expect(reg.callsOf('RenewController')).toEqual([]);
  });

  it('renewal NOT_FOUND (the controller forgot us) → registers again at once', async () => {
    const reg = await registry();
    const lines: string[] = [];
    const r = registrar(reg.address, lines);
    r.start();
    await r.waitForRegistrations(1);
    reg.registrations.clear();
    await r.waitForRegistrations(2, 5000);
    expect(lines.some((l) => l.includes('the controller no longer knows this node'))).toBe(true);
    expect(reg.registrations.get('node-1')?.registrationId).toBe(r.status.registrationId);
  });

  it('a controller restart on the same port → the node registers with the new one', async () => {
    const first = await new FakeRegistry().start();
    const port = first.port;
    const lines: string[] = [];
    const r = registrar(first.address, lines);
    r.start();
    await r.waitForRegistrations(1);
    await first.stop();
    await sleep(500); // a renewal or two fail while nobody listens
    const second = await registry(port);
    await r.waitForRegistrations(2, 15_000);
    expect(second.registrations.get('node-1')?.request.endpoint).toBe('10.0.0.5:10001');
    expect(lines.some((l) => l.includes('registered with the controller'))).toBe(true);
  });

  it('a long lease (held by the connection) does not delay noticing a controller restart: the lost connection makes it renew at once', async () => {
    const first = await new FakeRegistry().start();
    first.leaseSeconds = 600; // the next renewal would be 200 s away
    const port = first.port;
    const r = registrar(first.address, []);
    r.start();
    await r.waitForRegistrations(1);
    const renewals = first.callsOf('RenewController').length;
    await first.stop();
    const second = await registry(port);
    const started = Date.now();
    await r.waitForRegistrations(2, 15_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(second.registrations.has('node-1')).toBe(true);
    expect(r.status.connectionLosses).toBeGreaterThanOrEqual(1);
    expect(first.callsOf('RenewController')).toHaveLength(renewals); // no renewal reached the old one
  });

  it('controller down at start: logs connection refused with the gRPC code, backs off, registers once it is up', async () => {
    const probe = await new FakeRegistry().start();
    const port = probe.port;
    await probe.stop();
    const lines: string[] = [];
    const r = registrar(`127.0.0.1:${port}`, lines);
    r.start();
    await until('a logged failure', () => lines.some((l) => l.includes('registration with the controller failed')));
    const failure = lines.find((l) => l.includes('registration with the controller failed'))!;
    expect(failure).toContain('reason=connection-refused');
    expect(failure).toContain('code=UNAVAILABLE');
    expect(failure).toMatch(/retryInMs=\d+/);
    expect(r.status.lastFailure?.reason).toBe('connection-refused');
    const reg = await registry(port);
    await r.waitForRegistrations(1, 10_000);
    expect(reg.registrations.has('node-1')).toBe(true);
  });

  it('TLS problems and timeouts are named in the log', async () => {
    const reg = await registry();
    const tlsLines: string[] = [];
    const tls = registrar(reg.address, tlsLines, { credentials: grpc.credentials.createSsl() });
    tls.start();
    await until('a TLS failure', () => tls.status.lastFailure !== undefined);
    expect(tls.status.lastFailure).toMatchObject({ reason: 'tls', code: 'UNAVAILABLE' });
    expect(tlsLines.find((l) => l.includes('reason=tls'))).toContain('TLS handshake failed');
    await tls.stop();

    reg.hang = true;
    const slowLines: string[] = [];
    const slow = registrar(reg.address, slowLines, { callTimeoutMs: 200 });
    slow.start();
    await until('a timeout', () => slow.status.lastFailure !== undefined);
    expect(slow.status.lastFailure).toMatchObject({ reason: 'timeout', code: 'DEADLINE_EXCEEDED' });
    expect(slowLines.find((l) => l.includes('reason=timeout'))).toContain('no answer before the deadline');
  });
});
