// Two controller replicas over gRPC (issue 17): the nodes register with both, one replica (the
// leader) creates a volume, and the node's pushed inventory (a renewal carrying it, registry.proto
// RenewControllerRequest.inventory) makes the other one know it — so when the standby takes over
// and external-provisioner retries the same name, it answers with the existing volume instead of
// placing a second copy on the node with more room. A pushed inventory that contradicts what the
// leader made itself makes it list the node, and never drop its volume.
import * as grpc from '@grpc/grpc-js';
import { GiB } from '@pmem-csi/csi';
import { unary } from '@pmem-csi/runtime';
import { NodeSession, registryClient } from '../testing/node-session.js';
import { ScriptedNode } from '../testing/scripted-node.js';
import { call, createRequest, nodeState, startTestController, waitFor } from '../testing/harness.js';

const nodeOf = (res: { volume: { accessible_topology: Array<{ segments: Record<string, string> }> } | null }) =>
  res.volume?.accessible_topology[0]?.segments['pmem-csi.intel.com/node'];

describe('two controller replicas', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setUp() {
    const [leader, standby] = [await startTestController(), await startTestController()];
    cleanups.push(
      () => leader.stop(),
      () => standby.stop(),
    );
    const small = await ScriptedNode.create({ nodeId: 'n-small', freeBytes: 4 * GiB });
    const big = await ScriptedNode.create({ nodeId: 'n-big', freeBytes: 16 * GiB });
    for (const n of [small, big]) {
      await n.start();
      cleanups.push(() => n.close());
    }
    const sessions = new Map<string, NodeSession>();
    for (const tc of [leader, standby]) {
      const client = registryClient(tc);
      cleanups.push(() => client.close());
      for (const n of [small, big]) {
        const s = new NodeSession(client, n);
        await s.register();
        sessions.set(`${tc === leader ? 'leader' : 'standby'}/${n.nodeId}`, s);
      }
      for (const n of [small, big])
        await waitFor(() => nodeState(tc, n.nodeId) === 'available', `${n.nodeId} available`);
    }
    return { leader, standby, small, big, session: (key: string) => sessions.get(key) as NodeSession };
  }

  it('a volume made through the leader is known to the standby after the push: the retry there finds it, no second copy', async () => {
    const { leader, standby, small, big, session } = await setUp();
    // The leader places on the small node (the test steers it there with a requisite topology).
    const requisite = { requisite: [{ segments: { 'pmem-csi.intel.com/node': 'n-small' } }] };
    const req = createRequest('pvc-1', { capacity_range: { required_bytes: String(GiB) } });
    const made = await call.create(leader.csi, { ...req, accessibility_requirements: requisite });
    expect(nodeOf(made)).toBe('n-small');
    // The leader dies before external-provisioner got the answer; the standby leads and gets the retry
    // (without topology: placement alone would pick the big node).
    await session('standby/n-small').push();
    expect(standby.controller.status().volumes).toBe(1);
    const retried = await call.create(standby.csi, req);
    expect(nodeOf(retried)).toBe('n-small');
    expect(retried.volume?.volume_id).toBe(made.volume?.volume_id);
    expect([small.calls.CreateVolume, big.calls.CreateVolume]).toEqual([1, 0]);
    expect([small.volumes.size, big.volumes.size]).toEqual([1, 0]);

    // Deleted through the standby (now leader): the old leader, back as a standby, learns it from the push.
    await call.delete(standby.csi, made.volume?.volume_id ?? '');
    await session('leader/n-small').push();
    await leader.controller.idle();
    expect(leader.controller.status().volumes).toBe(0);
  });

  it('a push that contradicts what the leader made itself makes it list the node, which stays available', async () => {
    const { leader, small, session } = await setUp();
    const requisite = { requisite: [{ segments: { 'pmem-csi.intel.com/node': 'n-small' } }] };
    const made = await call.create(leader.csi, {
      ...createRequest('pvc-1', { capacity_range: { required_bytes: String(GiB) } }),
      accessibility_requirements: requisite,
    });
    const listings = small.calls.ListVolumes;
    await session('leader/n-small').push(true); // taken before the create landed
    expect(nodeState(leader, 'n-small')).toBe('available');
    await leader.controller.idle();
    expect(small.calls.ListVolumes).toBe(listings + 1);
    expect(leader.controller.status().volumes).toBe(1); // the listing shows the volume; it was never dropped
    expect(nodeState(leader, 'n-small')).toBe('available');
    await session('leader/n-small').push(); // the current inventory: nothing to do
    await leader.controller.idle();
    expect(small.calls.ListVolumes).toBe(listings + 1);
    expect(made.volume?.volume_id).toBeTruthy();
  });

  it('refuses a malformed pushed inventory with INVALID_ARGUMENT naming the field', async () => {
    const { leader, small, session } = await setUp();
    const s = session('leader/n-small');
    const c = await small.capacity();
    const err = await unary(
      s.client,
      s.client.RenewController,
      {
        node_id: 'n-small',
        registration_id: s.registrationId,
        capacity: {
          max_volume_size: String(c.maxVolumeSize),
          available: String(c.available),
          managed: String(c.managed),
          total: String(c.total),
        },
        inventory: { count: '1', volumes: [{ volume_id: '', capacity_bytes: '1' }] },
      },
      { timeoutMs: 5000 },
    ).catch((e: unknown) => e as grpc.ServiceError);
    expect(err).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'inventory.volumes[0].volume_id is required',
    });
    expect(nodeState(leader, 'n-small')).toBe('available');
  });
});
