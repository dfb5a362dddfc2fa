import * as grpc from '@grpc/grpc-js';
import { loadRegistry, PermissionDeniedError, unary, type registry, type RegistryClient } from '@pmem-csi/runtime';
import { FakeNode } from './testing/fake-node.js';
import { call, failure, nodeState, startFakeNode, startTestController, waitFor, type TestController } from './testing/harness.js';
import { GiB } from './sizes.js';

type RegisterReq = registry.RegisterControllerRequest;
const capacity = { max_volume_size: String(4 * GiB), available: String(4 * GiB), managed: String(8 * GiB), total: String(16 * GiB) };

function registryClient(tc: TestController): RegistryClient {
  return new (loadRegistry().pmemcsi.registry.v1.Registry)(tc.registryAddress, grpc.credentials.createInsecure());
}

const register = (c: RegistryClient, req: RegisterReq) =>
  unary<RegisterReq, registry.RegisterControllerReply__Output>(c, c.RegisterController, req, { timeoutMs: 5000 });
const renew = (c: RegistryClient, req: registry.RenewControllerRequest) =>
  unary<registry.RenewControllerRequest, registry.RenewControllerReply__Output>(c, c.RenewController, req, { timeoutMs: 5000 });
const unregister = (c: RegistryClient, req: registry.UnregisterControllerRequest) =>
  unary<registry.UnregisterControllerRequest, registry.UnregisterControllerReply__Output>(c, c.UnregisterController, req, { timeoutMs: 5000 });

describe('registry server', () => {
  let tc: TestController;
  let client: RegistryClient;
  const nodes: FakeNode[] = [];

  beforeEach(async () => {
    tc = await startTestController({ nodeListPageSize: 2 });
    client = registryClient(tc);
  });

  afterEach(async () => {
    client.close();
    await Promise.all(nodes.splice(0).map((n) => n.close()));
    await tc.stop();
  });

  async function fakeNode(nodeId: string, freeGiB = 10): Promise<FakeNode> {
    const node = await startFakeNode(tc, { nodeId, freeBytes: freeGiB * GiB });
    nodes.push(node);
    return node;
  }

  it('registers a node with a lease, lists its volumes, and shows it in the status', async () => {
    const node = new FakeNode({ nodeId: 'n1', freeBytes: 10 * GiB, deviceMode: 'lvm', version: '1.2.3' });
    nodes.push(node);
    for (const name of ['pvc-a', 'pvc-b', 'pvc-c', 'pvc-d', 'pvc-e']) node.addVolume(name, GiB);
    await node.start();
    node.useRegistry(tc.registryAddress);
    const id = await node.register();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available');
    expect(node.calls.ListVolumes).toBe(3); // 5 volumes, pages of 2
    const status = tc.controller.status();
    expect(status.nodes).toEqual([
      expect.objectContaining({
        nodeId: 'n1',
        endpoint: node.endpoint,
        state: 'available',
        deviceMode: 'lvm',
        version: '1.2.3',
        volumes: 5,
        capacity: { maxVolumeSize: 5 * GiB, available: 5 * GiB, managed: 10 * GiB, total: 10 * GiB },
      }),
    ]);
    expect(status.volumes).toBe(5);
    const listed = await call.list(tc.csi);
    expect(listed.entries.map((e) => e.volume?.accessible_topology)).toEqual(Array(5).fill([{ segments: { 'pmem-csi.intel.com/node': 'n1' } }]));
  });

  it('answers with the lease and renews it, updating the capacity', async () => {
    const node = new FakeNode({ nodeId: 'n9' });
    nodes.push(node);
    const reply = await register(client, { node_id: 'n9', endpoint: await node.start(), capacity, device_mode: 'fake', version: 'v' });
    expect(reply.lease_seconds).toBe('30');
    await tc.controller.idle();
    const renewed = await renew(client, { node_id: 'n9', registration_id: reply.registration_id, capacity: { ...capacity, max_volume_size: String(GiB) } });
    expect(renewed).toEqual({ lease_seconds: '30' });
    expect(tc.controller.status().nodes[0]?.capacity.maxVolumeSize).toBe(GiB);
  });

  it('refuses renewals of unknown registrations with NOT_FOUND so that the node registers again', async () => {
    const reply = await register(client, { node_id: 'n9', endpoint: '127.0.0.1:1', capacity });
    expect(await failure(renew(client, { node_id: 'n9', registration_id: 'stale', capacity }))).toEqual({
      code: 'NOT_FOUND',
      details: 'unknown registration for node "n9"; register again',
    });
    expect(await failure(renew(client, { node_id: 'other', registration_id: reply.registration_id }))).toEqual({
      code: 'NOT_FOUND',
      details: 'unknown registration for node "other"; register again',
    });
  });

  it('validates the requests, naming the field', async () => {
    const cases: Array<[RegisterReq, string]> = [
      [{ node_id: '', endpoint: '127.0.0.1:1', capacity }, 'node_id is required'],
      [{ node_id: 'n1', endpoint: '', capacity }, 'endpoint is required'],
      [{ node_id: 'n1', endpoint: 'no-port', capacity }, 'endpoint "no-port" must be host:port with a port from 1 to 65535 (e.g. 10.0.0.5:10001)'],
      [{ node_id: 'n1', endpoint: 'host:70000', capacity }, 'endpoint "host:70000" must be host:port with a port from 1 to 65535 (e.g. 10.0.0.5:10001)'],
      [{ node_id: 'n1', endpoint: 'host:1' }, 'capacity is required'],
      [{ node_id: 'n1', endpoint: 'host:1', capacity: { ...capacity, available: '-5' } }, 'capacity.available must not be negative, got -5'],
    ];
    for (const [req, details] of cases) {
      expect(await failure(register(client, req))).toEqual({ code: 'INVALID_ARGUMENT', details });
    }
    expect(await failure(renew(client, { node_id: 'n1', registration_id: '' }))).toEqual({ code: 'INVALID_ARGUMENT', details: 'registration_id is required' });
    expect(await failure(unregister(client, { node_id: '', registration_id: 'x' }))).toEqual({ code: 'INVALID_ARGUMENT', details: 'node_id is required' });
    expect(tc.controller.status().nodes).toEqual([]);
    // IPv6 and DNS names are fine
    await register(client, { node_id: 'v6', endpoint: '[::1]:10001', capacity });
    await register(client, { node_id: 'dns', endpoint: 'node-1.example.com:10001', capacity });
  });

  it('a node that stops renewing becomes unavailable but keeps its volumes; renewing later re-registers it', async () => {
    const node = await fakeNode('n1');
    await call.create(tc.csi, { name: 'pvc-1', volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }] });
    const expiry = tc.controller.status().nodes[0]?.leaseExpiresAt;
    tc.clock.advance(30_000);
    expect(tc.controller.status().nodes[0]).toMatchObject({ state: 'unavailable', reason: `the lease expired at ${expiry} without renewal`, volumes: 1 });
    await node.renew(); // NOT_FOUND → registers again → volumes listed again
    expect(node.registrations).toHaveLength(2);
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available again');
    expect(tc.controller.status().nodes[0]?.volumes).toBe(1);
  });

  it('reconciles on every registration: volumes added or removed behind the controller\'s back', async () => {
    const node = await fakeNode('n1');
    await call.create(tc.csi, { name: 'pvc-1', volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }] });
    node.volumes.clear();
    node.addVolume('pvc-2', GiB);
    await node.register();
    await tc.controller.idle();
    const listed = await call.list(tc.csi);
    expect(listed.entries.map((e) => e.volume?.volume_context['name'])).toEqual(['pvc-2']);
  });

  it('replaces the connection when a node registers with a new endpoint', async () => {
    const node = await fakeNode('n1');
    const oldEndpoint = node.endpoint;
    await node.stop();
    await node.start();
    expect(node.endpoint).not.toBe(oldEndpoint);
    await node.register();
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available');
    expect(tc.controller.status().nodes[0]?.endpoint).toBe(node.endpoint);
    await call.create(tc.csi, { name: 'pvc-1', volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }] });
    expect(node.volumes.size).toBe(1);
  });

  it('revokes the registration when listing the volumes fails; the node heals by registering again', async () => {
    const node = new FakeNode({ nodeId: 'n1' });
    nodes.push(node);
    node.failNext('ListVolumes', grpc.status.INTERNAL, 'disk on fire');
    await node.start();
    node.useRegistry(tc.registryAddress);
    await node.register();
    await tc.controller.idle();
    expect(tc.controller.status().nodes[0]).toMatchObject({ state: 'unavailable', reason: 'listing the node\'s volumes failed: node "n1": disk on fire' });
    await node.renew();
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available');
  });

  it('a node whose endpoint cannot be reached is not available and must register again', async () => {
    const reply = await register(client, { node_id: 'n9', endpoint: '127.0.0.1:1', capacity });
    await tc.controller.idle();
    expect(tc.controller.status().nodes[0]?.state).toBe('unavailable');
    expect(tc.controller.status().nodes[0]?.reason).toMatch(/^listing the node's volumes failed: node "n9" is not reachable: .+/);
    expect(await failure(renew(client, { node_id: 'n9', registration_id: reply.registration_id }))).toEqual({
      code: 'NOT_FOUND',
      details: 'unknown registration for node "n9"; register again',
    });
  });

  it('unregistering keeps the node and its volumes known', async () => {
    const node = await fakeNode('n1');
    await call.create(tc.csi, { name: 'pvc-1', volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }] });
    await node.unregister();
    expect(tc.controller.status().nodes[0]).toMatchObject({ state: 'unregistered', reason: 'the node unregistered (shut down)', volumes: 1 });
    expect(await failure(node.renew().then(() => unregister(client, { node_id: 'n1', registration_id: 'gone' })))).toEqual({
      code: 'NOT_FOUND',
      details: 'unknown registration for node "n1"; register again',
    });
  });
});

describe('registry with a real 1 s lease', () => {
  it('a renewing node stays available; after it stops renewing it becomes unavailable, not forgotten', async () => {
    const tc = await startTestController({ leaseSeconds: 1 });
    const node = new FakeNode({ nodeId: 'n1' });
    try {
      await node.start();
      node.useRegistry(tc.registryAddress);
      await node.register();
      node.startRenewing(); // every 333 ms
      await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available');
      await call.create(tc.csi, { name: 'pvc-1', volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }] });
      await new Promise((r) => setTimeout(r, 1500));
      expect(nodeState(tc, 'n1')).toBe('available');
      node.stopRenewing();
      await waitFor(() => nodeState(tc, 'n1') === 'unavailable', 'n1 unavailable', 3000);
      expect(tc.controller.status().nodes[0]).toMatchObject({ nodeId: 'n1', volumes: 1 });
      expect(node.registrations).toHaveLength(1);
    } finally {
      await node.close();
      await tc.stop();
    }
  });
});

describe('registry authorization hook', () => {
  it('refuses peers that the hook rejects', async () => {
    const tc = await startTestController({
      registryAuthorize: () => {
        throw new PermissionDeniedError('client certificate is not for pmem-node-controller');
      },
    });
    const client = registryClient(tc);
    try {
      expect(await failure(register(client, { node_id: 'n1', endpoint: 'h:1', capacity }))).toEqual({
        code: 'PERMISSION_DENIED',
        details: 'client certificate is not for pmem-node-controller',
      });
    } finally {
      client.close();
      await tc.stop();
    }
  });
});
