import * as grpc from '@grpc/grpc-js';
import { loadRegistry, type RegistryClient, unary } from '@pmem-csi/runtime';
import { ScriptedNode } from '../testing/scripted-node.js';
import {
  call,
  failure,
  nodeState,
  startScriptedNode,
  startTestController,
  waitFor,
  type TestController,
} from '../testing/harness.js';
import { GiB, PermissionDeniedError, type registry } from '@pmem-csi/csi';

type RegisterReq = registry.RegisterControllerRequest;
const nodeOf = (res: { volume: { accessible_topology: Array<{ segments: Record<string, string> }> } | null }) =>
  res.volume?.accessible_topology[0]?.segments['pmem-csi.intel.com/node'];
const capacity = {
  max_volume_size: String(4 * GiB),
  available: String(4 * GiB),
  managed: String(8 * GiB),
  total: String(16 * GiB),
};

function registryClient(tc: TestController): RegistryClient {
  return new (loadRegistry().pmemcsi.registry.v1.Registry)(tc.registryAddress, grpc.credentials.createInsecure());
}

const register = (c: RegistryClient, req: RegisterReq) =>
  unary<RegisterReq, registry.RegisterControllerReply__Output>(c, c.RegisterController, req, { timeoutMs: 5000 });
const renew = (c: RegistryClient, req: registry.RenewControllerRequest) =>
  unary<registry.RenewControllerRequest, registry.RenewControllerReply__Output>(c, c.RenewController, req, {
    timeoutMs: 5000,
  });
const unregister = (c: RegistryClient, req: registry.UnregisterControllerRequest) =>
  unary<registry.UnregisterControllerRequest, registry.UnregisterControllerReply__Output>(
    c,
    c.UnregisterController,
    req,
    { timeoutMs: 5000 },
  );

describe('registry server', () => {
  let tc: TestController;
  let client: RegistryClient;
  const nodes: ScriptedNode[] = [];

  beforeEach(async () => {
    tc = await startTestController({ nodeListPageSize: 2 });
    client = registryClient(tc);
  });

  afterEach(async () => {
    client.close();
    await Promise.all(nodes.splice(0).map((n) => n.close()));
    await tc.stop();
  });

  async function scriptedNode(nodeId: string, freeGiB = 10): Promise<ScriptedNode> {
    const node = await startScriptedNode(tc, { nodeId, freeBytes: freeGiB * GiB });
    nodes.push(node);
    return node;
  }

  it('registers a node with a lease, lists its volumes, and shows it in the status', async () => {
    const node = await ScriptedNode.create({ nodeId: 'n1', freeBytes: 10 * GiB, deviceMode: 'lvm', version: '1.2.3' });
    nodes.push(node);
    for (const name of ['pvc-a', 'pvc-b', 'pvc-c', 'pvc-d', 'pvc-e']) await node.addVolume(name, GiB);
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
    expect(listed.entries.map((e) => e.volume?.accessible_topology)).toEqual(
      Array(5).fill([{ segments: { 'pmem-csi.intel.com/node': 'n1' } }]),
    );
  });

  it('answers with the lease and renews it, updating the capacity', async () => {
    const node = await ScriptedNode.create({ nodeId: 'n9' });
    nodes.push(node);
    const reply = await register(client, {
      node_id: 'n9',
      endpoint: await node.start(),
      capacity,
      device_mode: 'fake',
      version: 'v',
    });
    expect(reply.lease_seconds).toBe('30');
    await tc.controller.idle();
    const renewed = await renew(client, {
      node_id: 'n9',
      registration_id: reply.registration_id,
      capacity: { ...capacity, max_volume_size: String(GiB) },
    });
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
      [
        { node_id: 'n1', endpoint: 'no-port', capacity },
        'endpoint "no-port" must be host:port with a port from 1 to 65535 (e.g. 10.0.0.5:10001)',
      ],
      [
        { node_id: 'n1', endpoint: 'host:70000', capacity },
        'endpoint "host:70000" must be host:port with a port from 1 to 65535 (e.g. 10.0.0.5:10001)',
      ],
      [{ node_id: 'n1', endpoint: 'host:1' }, 'capacity is required'],
      [
        { node_id: 'n1', endpoint: 'host:1', capacity: { ...capacity, available: '-5' } },
        'capacity.available must not be negative, got -5',
      ],
    ];
    for (const [req, details] of cases) {
      expect(await failure(register(client, req))).toEqual({ code: 'INVALID_ARGUMENT', details });
    }
    expect(await failure(renew(client, { node_id: 'n1', registration_id: '' }))).toEqual({
      code: 'INVALID_ARGUMENT',
      details: 'registration_id is required',
    });
    expect(await failure(unregister(client, { node_id: '', registration_id: 'x' }))).toEqual({
      code: 'INVALID_ARGUMENT',
      details: 'node_id is required',
    });
    expect(tc.controller.status().nodes).toEqual([]);
    // IPv6 and DNS names are fine
    await register(client, { node_id: 'v6', endpoint: '[::1]:10001', capacity });
    await register(client, { node_id: 'dns', endpoint: 'node-1.example.com:10001', capacity });
  });

  it('a node that stops renewing becomes unavailable but keeps its volumes; renewing later re-registers it', async () => {
    const node = await scriptedNode('n1');
    await call.create(tc.csi, {
      name: 'pvc-1',
      volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    });
    const expiry = tc.controller.status().nodes[0]?.leaseExpiresAt;
    tc.clock.advance(30_000);
    expect(tc.controller.status().nodes[0]).toMatchObject({
      state: 'unavailable',
      reason: `the lease expired at ${expiry} without renewal`,
      volumes: 1,
    });
    await node.renew(); // NOT_FOUND → registers again → volumes listed again
    expect(node.registrations).toHaveLength(2);
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available again');
    expect(tc.controller.status().nodes[0]?.volumes).toBe(1);
  });

  it("reconciles on every registration: volumes added or removed behind the controller's back", async () => {
    const node = await scriptedNode('n1');
    await call.create(tc.csi, {
      name: 'pvc-1',
      volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    });
    await node.removeVolumes();
    await node.addVolume('pvc-2', GiB);
    await node.register();
    await tc.controller.idle();
    const listed = await call.list(tc.csi);
    expect(listed.entries.map((e) => e.volume?.volume_context['name'])).toEqual(['pvc-2']);
  });

  it('replaces the connection when a node registers with a new endpoint', async () => {
    const node = await scriptedNode('n1');
    const oldEndpoint = node.endpoint;
    await node.stop();
    await node.start();
    expect(node.endpoint).not.toBe(oldEndpoint);
    await node.register();
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available');
    expect(tc.controller.status().nodes[0]?.endpoint).toBe(node.endpoint);
    await call.create(tc.csi, {
      name: 'pvc-1',
      volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    });
    expect(node.volumes.size).toBe(1);
  });

  it('revokes the registration when listing the volumes fails; the node heals by registering again', async () => {
    const node = await ScriptedNode.create({ nodeId: 'n1' });
    nodes.push(node);
    node.failNext('ListVolumes', grpc.status.INTERNAL, 'disk on fire');
    await node.start();
    node.useRegistry(tc.registryAddress);
    await node.register();
    await tc.controller.idle();
    expect(tc.controller.status().nodes[0]).toMatchObject({
      state: 'unavailable',
      reason: 'listing the node\'s volumes failed: node "n1": disk on fire',
    });
    await node.renew();
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available');
  });

  it('a node whose endpoint cannot be reached is not available and must register again', async () => {
    const reply = await register(client, { node_id: 'n9', endpoint: '127.0.0.1:1', capacity });
    await tc.controller.idle();
    expect(tc.controller.status().nodes[0]?.state).toBe('unavailable');
    expect(tc.controller.status().nodes[0]?.reason).toMatch(
      /^listing the node's volumes failed: node "n9" is not reachable: .+/,
    );
    expect(await failure(renew(client, { node_id: 'n9', registration_id: reply.registration_id }))).toEqual({
      code: 'NOT_FOUND',
      details: 'unknown registration for node "n9"; register again',
    });
  });

  it('unregistering keeps the node and its volumes known', async () => {
    const node = await scriptedNode('n1');
    await call.create(tc.csi, {
      name: 'pvc-1',
      volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    });
    await node.unregister();
    expect(tc.controller.status().nodes[0]).toMatchObject({
      state: 'unregistered',
      reason: 'the node unregistered (shut down)',
      volumes: 1,
    });
    expect(
      await failure(node.renew().then(() => unregister(client, { node_id: 'n1', registration_id: 'gone' }))),
    ).toEqual({
      code: 'NOT_FOUND',
      details: 'unknown registration for node "n1"; register again',
    });
  });
});

describe('registration with a volume inventory', () => {
  let tc: TestController;
  let client: RegistryClient;
  const nodes: ScriptedNode[] = [];
  const block = [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' as const } }];

  beforeEach(async () => {
    tc = await startTestController();
    client = registryClient(tc);
  });

  afterEach(async () => {
    client.close();
    await Promise.all(nodes.splice(0).map((n) => n.close()));
    await tc.stop();
  });

  async function node(
    nodeId: string,
    inventory: 'none' | 'full' | 'count',
    volumes: string[] = [],
  ): Promise<ScriptedNode> {
    const n = await ScriptedNode.create({ nodeId, inventory });
    nodes.push(n);
    for (const name of volumes) await n.addVolume(name, GiB);
    await n.start();
    n.useRegistry(tc.registryAddress);
    return n;
  }

  it('a complete inventory makes the node available at once, without dialling it', async () => {
    const n1 = await node('n1', 'full', ['pvc-a', 'pvc-b']);
    const n2 = await node('n2', 'count');
    await n1.register();
    await n2.register();
    expect(tc.controller.status().nodes.map((n) => [n.nodeId, n.state, n.volumes])).toEqual([
      ['n1', 'available', 2],
      ['n2', 'available', 0],
    ]);
    await tc.controller.idle();
    expect([n1.calls.ListVolumes, n2.calls.ListVolumes]).toEqual([0, 0]);
    const listed = await call.list(tc.csi);
    expect(listed.entries.map((e) => [e.volume?.volume_context['name'], e.volume?.capacity_bytes])).toEqual([
      ['pvc-a', String(GiB)],
      ['pvc-b', String(GiB)],
    ]);
    expect(nodeOf(await call.create(tc.csi, { name: 'pvc-c', volume_capabilities: block }))).toBe('n2');
    // an existing volume from the inventory is found by name (idempotent CreateVolume)
    expect(
      (
        await call.create(tc.csi, {
          name: 'pvc-a',
          capacity_range: { required_bytes: String(GiB) },
          volume_capabilities: block,
        })
      ).volume?.volume_id,
    ).toBe(listed.entries[0]?.volume?.volume_id);
    expect(n1.calls.CreateVolume).toBe(0);
  });

  it('lists the volumes of a node that sends no inventory, or only a count above zero', async () => {
    const old = await node('old', 'none', ['pvc-a']);
    const counted = await node('counted', 'count', ['pvc-b', 'pvc-c']);
    await old.register();
    await counted.register();
    await waitFor(
      () => nodeState(tc, 'old') === 'available' && nodeState(tc, 'counted') === 'available',
      'both available',
    );
    expect([old.calls.ListVolumes, counted.calls.ListVolumes]).toEqual([1, 1]);
    expect(tc.controller.status().volumes).toBe(3);
  });

  it("after this controller changed a node's volumes, a re-registration with volumes is listed again", async () => {
    const n1 = await node('n1', 'full');
    await n1.register();
    const created = await call.create(tc.csi, { name: 'pvc-1', volume_capabilities: block });
    await n1.register(); // the inventory could predate a create or delete in flight
    expect(nodeState(tc, 'n1')).toBe('syncing');
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available');
    expect(n1.calls.ListVolumes).toBe(1);
    await call.delete(tc.csi, created.volume?.volume_id ?? '');
    await n1.register(); // no volumes on either side, no uncertain create: nothing to get wrong
    expect(nodeState(tc, 'n1')).toBe('available');
    expect(n1.calls.ListVolumes).toBe(1);
  });

  it('a create in flight on the node makes its re-registration list again', async () => {
    const n1 = await node('n1', 'count');
    await n1.register();
    n1.delay('CreateVolume', 400);
    const pending = call.create(tc.csi, { name: 'pvc-1', volume_capabilities: block });
    await waitFor(() => n1.calls.CreateVolume === 1, 'the create to reach the node');
    await n1.register();
    expect(nodeState(tc, 'n1')).toBe('syncing');
    await pending;
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available');
    expect([n1.calls.ListVolumes, tc.controller.status().volumes]).toEqual([1, 1]);
  });

  it('validates the inventory, naming the field', async () => {
    const v = (volume_id: string, capacity_bytes = String(GiB)) => ({
      volume_id,
      capacity_bytes,
      volume_context: { name: volume_id },
    });
    const cases: Array<[registry.VolumeInventory, string]> = [
      [{ count: '-1' }, 'inventory.count must be a non-negative integer below 10^15, got "-1"'],
      [
        { count: '1', volumes: [v('a'), v('b')] },
        'inventory.count (1) must not be smaller than the number of inventory.volumes (2)',
      ],
      [{ count: '2', volumes: [v('a'), v('')] }, 'inventory.volumes[1].volume_id is required'],
      [{ count: '2', volumes: [v('a'), v('a')] }, 'inventory.volumes[1].volume_id "a" appears more than once'],
      [{ count: '1', volumes: [v('a', '-5')] }, 'inventory.volumes[0].capacity_bytes must not be negative, got -5'],
    ];
    for (const [inventory, details] of cases) {
      expect(await failure(register(client, { node_id: 'n1', endpoint: '127.0.0.1:1', capacity, inventory }))).toEqual({
        code: 'INVALID_ARGUMENT',
        details,
      });
    }
    expect(tc.controller.status().nodes).toEqual([]);
  });
});

describe('lease scaling', () => {
  it('grants longer leases as the cluster grows, in every reply', async () => {
    const tc = await startTestController({ leaseSeconds: 30, maxLeaseSeconds: 90, renewalsPerSecond: 0.1 });
    const client = registryClient(tc);
    try {
      const leases: string[] = [];
      const ids: string[] = [];
      for (const nodeId of ['n1', 'n2', 'n3', 'n4']) {
        const reply = await register(client, {
          node_id: nodeId,
          endpoint: '127.0.0.1:1',
          capacity,
          inventory: { count: '0' },
        });
        leases.push(reply.lease_seconds);
        ids.push(reply.registration_id);
      }
      expect(leases).toEqual(['30', '60', '90', '90']);
      expect(await renew(client, { node_id: 'n1', registration_id: ids[0] ?? '', capacity })).toEqual({
        lease_seconds: '90',
      });
      tc.clock.advance(89_000); // the test clock also moves with real time
      expect(nodeState(tc, 'n1')).toBe('available');
      expect(nodeState(tc, 'n2')).toBe('unavailable'); // granted 60 s, never renewed
    } finally {
      client.close();
      await tc.stop();
    }
  });

  it('the default settle period covers the renewal interval of the longest lease (4 × the base lease by default)', async () => {
    const defaults = await startTestController({ leaseSeconds: 3, settleMs: undefined });
    try {
      defaults.clock.advance(7000); // 1.5 × 3 s + (12 s − 3 s) / 3 = 7.5 s
      expect(defaults.controller.status().settled).toBe(false);
      defaults.clock.advance(1000);
      expect(defaults.controller.status().settled).toBe(true);
    } finally {
      await defaults.stop();
    }
    const tc = await startTestController({ leaseSeconds: 1, maxLeaseSeconds: 10, settleMs: undefined });
    try {
      tc.clock.advance(4000); // settle = 1.5 × 1 s + (10 s − 1 s) / 3 = 4.5 s (it was 1.5 × the lease)
      expect(tc.controller.status().settled).toBe(false);
      tc.clock.advance(1000);
      expect(tc.controller.status().settled).toBe(true);
    } finally {
      await tc.stop();
    }
  });
});

describe('leases held by the connection', () => {
  it("a node's connection holds its lease: a long lease while it is open, the base lease once it closes", async () => {
    // 3 × 1 node / 0.01 per second = a held lease of 300 s (at most 600 s by default)
    const tc = await startTestController({ leaseSeconds: 30, heldRenewalsPerSecond: 0.01 });
    // own subchannel pools: two connections (grpc-js would share one between clients of one target)
    const own = { 'grpc.use_local_subchannel_pool': 1 };
    const Registry = loadRegistry().pmemcsi.registry.v1.Registry;
    const client = new Registry(tc.registryAddress, grpc.credentials.createInsecure(), own);
    const other = new Registry(tc.registryAddress, grpc.credentials.createInsecure(), own);
    try {
      const reply = await register(client, {
        node_id: 'n1',
        endpoint: '127.0.0.1:1',
        capacity,
        inventory: { count: '0' },
      });
      expect(reply.lease_seconds).toBe('300');
      tc.clock.advance(200_000); // far beyond the base lease
      expect(nodeState(tc, 'n1')).toBe('available');
      // renewed over another connection: the lease is held by that one now
      expect(await renew(other, { node_id: 'n1', registration_id: reply.registration_id, capacity })).toEqual({
        lease_seconds: '300',
      });
      client.close();
      await new Promise((r) => setTimeout(r, 200)); // the first connection's close is not this lease's end
      tc.clock.advance(200_000);
      expect(nodeState(tc, 'n1')).toBe('available');
      other.close();
      await waitFor(
        () =>
          (tc.controller.status().nodes[0]?.leaseExpiresAt ?? '') <= new Date(tc.clock.now() + 30_000).toISOString(),
        'the lease cut to 30 s after the holding connection closed',
      );
      tc.clock.advance(30_000);
      expect(nodeState(tc, 'n1')).toBe('unavailable');
    } finally {
      client.close();
      other.close();
      await tc.stop();
    }
  });
});

describe('registry with a real 1 s lease', () => {
  it('a renewing node stays available; after it stops renewing it becomes unavailable, not forgotten', async () => {
    const tc = await startTestController({ leaseSeconds: 1 });
    const node = await ScriptedNode.create({ nodeId: 'n1' });
    try {
      await node.start();
      node.useRegistry(tc.registryAddress);
      await node.register();
      node.startRenewing(); // every 333 ms
      await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available');
      await call.create(tc.csi, {
        name: 'pvc-1',
        volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
      });
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
