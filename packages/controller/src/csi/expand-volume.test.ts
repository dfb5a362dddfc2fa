// ControllerExpandVolume through the controller's CSI socket over real gRPC to real nodes (the
// node package's node-controller service on fake devices, scripted-node.ts): routing to the owner,
// the sizes and codes of the CSI table, capacity bookkeeping, and a standby replica learning the
// new size from the node's push.
import * as grpc from '@grpc/grpc-js';
import { volumeIdForName } from '@pmem-csi/api';
import { type csi, GiB, MiB } from '@pmem-csi/csi';
import {
  call,
  createRequest,
  failure,
  nodeState,
  startScriptedNode,
  startTestController,
  TestClock,
  waitFor,
  type TestController,
} from '../testing/harness.js';
import { NodeSession, registryClient } from '../testing/node-session.js';
import { ScriptedNode } from '../testing/scripted-node.js';

const KEY = 'pmem-csi.intel.com/node';
const MOUNT: csi.VolumeCapability = { mount: { fs_type: 'ext4' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } };
const BLOCK: csi.VolumeCapability = { block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } };

function expansion(
  volumeId: string,
  required: number,
  extra: Partial<csi.ControllerExpandVolumeRequest> = {},
): csi.ControllerExpandVolumeRequest {
  return {
    volume_id: volumeId,
    capacity_range: { required_bytes: String(required) },
    volume_capability: MOUNT,
    ...extra,
  };
}

const sized = (name: string, bytes: number, node?: string): csi.CreateVolumeRequest =>
  createRequest(name, {
    capacity_range: { required_bytes: String(bytes) },
    ...(node === undefined ? {} : { accessibility_requirements: { requisite: [{ segments: { [KEY]: node } }] } }),
  });

/** The controller's capacity estimate of a node (registry), as its status shows it. */
const estimate = (tc: TestController, nodeId: string): number | undefined =>
  tc.controller.status().nodes.find((n) => n.nodeId === nodeId)?.capacity.available;

describe('ControllerExpandVolume', () => {
  let tc: TestController;
  let n1: ScriptedNode;
  let n2: ScriptedNode;
  const id = volumeIdForName('pvc-1');

  beforeEach(async () => {
    // No background refresh during a test: the estimates seen are the controller's own bookkeeping.
    tc = await startTestController({ capacityRefreshDelayMs: 600_000 });
    n1 = await startScriptedNode(tc, { nodeId: 'n1', freeBytes: 8 * GiB });
    n2 = await startScriptedNode(tc, { nodeId: 'n2', freeBytes: 2 * GiB });
    await call.create(tc.csi, sized('pvc-1', GiB)); // lands on n1 (largest)
  });

  afterEach(async () => {
    await Promise.all([n1.close(), n2.close()]);
    await tc.stop();
  });

  it('grows the volume on the node that holds it; ListVolumes, ControllerGetVolume and GetCapacity report the new size', async () => {
    expect(estimate(tc, 'n1')).toBe(7 * GiB);
    expect(await call.expand(tc.csi, expansion(id, 3 * GiB))).toEqual({
      capacity_bytes: String(3 * GiB),
      node_expansion_required: true,
    });
    expect([n1.calls.ControllerExpandVolume, n2.calls.ControllerExpandVolume]).toEqual([1, 0]);
    expect(n1.volumes.get(id)).toBe(3 * GiB);
    expect((await call.list(tc.csi)).entries.map((e) => [e.volume?.volume_id, e.volume?.capacity_bytes])).toEqual([
      [id, String(3 * GiB)],
    ]);
    expect((await call.get(tc.csi, id)).volume?.capacity_bytes).toBe(String(3 * GiB));
    // The growth left the owner's estimate at once (no refresh ran: see beforeEach) ...
    expect(estimate(tc, 'n1')).toBe(5 * GiB);
    expect(await call.capacity(tc.csi, { accessible_topology: { segments: { [KEY]: 'n1' } } })).toEqual({
      available_capacity: String(5 * GiB),
      maximum_volume_size: { value: String(5 * GiB) },
      minimum_volume_size: null,
    });
    expect((await call.capacity(tc.csi)).available_capacity).toBe(String(7 * GiB));
    // ... and it is the node's own figure: a renewal reports the same.
    await n1.renew();
    expect(estimate(tc, 'n1')).toBe(5 * GiB);
    expect(n1.calls.GetCapacity).toBe(0);
  });

  it('answers node_expansion_required false for a raw block volume', async () => {
    const raw = await call.create(tc.csi, { ...sized('pvc-raw', GiB), volume_capabilities: [BLOCK] });
    const rawId = raw.volume?.volume_id ?? '';
    expect(await call.expand(tc.csi, expansion(rawId, 2 * GiB, { volume_capability: BLOCK }))).toEqual({
      capacity_bytes: String(2 * GiB),
      node_expansion_required: false,
    });
  });

  it('rounds up to the allocation unit and reports the size the volume got', async () => {
    expect((await call.expand(tc.csi, expansion(id, GiB + 1))).capacity_bytes).toBe(String(GiB + 4 * MiB));
    expect((await call.get(tc.csi, id)).volume?.capacity_bytes).toBe(String(GiB + 4 * MiB));
    expect(estimate(tc, 'n1')).toBe(7 * GiB - 4 * MiB);
  });

  it('is idempotent and never shrinks: the same or a smaller size answers OK with the current size', async () => {
    const grown = await call.expand(tc.csi, expansion(id, 3 * GiB));
    expect(await call.expand(tc.csi, expansion(id, 3 * GiB))).toEqual(grown);
    expect(await call.expand(tc.csi, expansion(id, GiB))).toEqual(grown);
    expect(await call.expand(tc.csi, { volume_id: id, capacity_range: { required_bytes: '1' } })).toEqual({
      capacity_bytes: String(3 * GiB),
      node_expansion_required: true, // no capability given: the filesystem may still need growing
    });
    expect(n1.volumes.get(id)).toBe(3 * GiB);
    expect(estimate(tc, 'n1')).toBe(5 * GiB); // counted once
  });

  it('refuses a limit below the current size with OUT_OF_RANGE naming both sizes, volume and node', async () => {
    expect(
      await failure(
        call.expand(
          tc.csi,
          expansion(id, 1, { capacity_range: { required_bytes: '1', limit_bytes: String(512 * MiB) } }),
        ),
      ),
    ).toEqual({
      code: 'OUT_OF_RANGE',
      details: `volume "${id}" on node "n1" has 1 GiB; capacity_range.limit_bytes 512 MiB is below that and volumes never shrink`,
    });
    expect(n1.calls.ControllerExpandVolume).toBe(0); // answered without the node
    // A limit the volume fits under is fine.
    const limited = expansion(id, 2 * GiB, {
      capacity_range: { required_bytes: String(2 * GiB), limit_bytes: String(2 * GiB) },
    });
    expect((await call.expand(tc.csi, limited)).capacity_bytes).toBe(String(2 * GiB));
  });

  it('refuses a growth the owner has no room for with OUT_OF_RANGE naming the node and the sizes; nothing changes', async () => {
    const made = await call.create(tc.csi, sized('pvc-2', GiB, 'n2'));
    const onN2 = made.volume?.volume_id ?? '';
    await call.create(tc.csi, sized('pvc-3', GiB, 'n2')); // n2 is full now
    expect(await failure(call.expand(tc.csi, expansion(onN2, 2 * GiB)))).toEqual({
      code: 'OUT_OF_RANGE',
      details: `node "n2": volume ${onN2} on node n2 cannot grow by 1073741824 bytes (from 1073741824 to 2147483648 bytes): only 0 bytes are free for it on node n2, so it can grow to at most 1073741824 bytes`,
    });
    expect(n2.volumes.get(onN2)).toBe(GiB);
    expect((await call.get(tc.csi, onN2)).volume?.capacity_bytes).toBe(String(GiB));
    expect(estimate(tc, 'n2')).toBe(0);
  });

  it('turns the RESOURCE_EXHAUSTED of an older node into OUT_OF_RANGE naming growth, free bytes and node', async () => {
    n1.failNext('ControllerExpandVolume', grpc.status.RESOURCE_EXHAUSTED, 'not enough space');
    expect(await failure(call.expand(tc.csi, expansion(id, 3 * GiB)))).toEqual({
      code: 'OUT_OF_RANGE',
      details: `not enough free PMEM on node "n1" to grow volume "${id}" by 2 GiB (from 1 GiB to 3 GiB); the node has 7 GiB free`,
    });
    expect((await call.get(tc.csi, id)).volume?.capacity_bytes).toBe(String(GiB));
  });

  it("passes the node's other answers through with their code: NOT_FOUND when the owner no longer has the volume", async () => {
    await n1.removeVolumes();
    expect(await failure(call.expand(tc.csi, expansion(id, 2 * GiB)))).toEqual({
      code: 'NOT_FOUND',
      details: `node "n1": volume ${id} does not exist on node n1`,
    });
    n1.failNext('ControllerExpandVolume', grpc.status.FAILED_PRECONDITION, 'volume is busy');
    expect(await failure(call.expand(tc.csi, expansion(id, 2 * GiB)))).toEqual({
      code: 'FAILED_PRECONDITION',
      details: 'node "n1": volume is busy',
    });
  });

  it("answers UNAVAILABLE naming node and volume while the owner's lease has expired, and grows it once it is back", async () => {
    const expiry = tc.controller.status().nodes.find((n) => n.nodeId === 'n1')?.leaseExpiresAt;
    tc.clock.advance(30_000);
    expect(await failure(call.expand(tc.csi, expansion(id, 2 * GiB)))).toEqual({
      code: 'UNAVAILABLE',
      details: `node "n1" that holds volume "${id}" is not reachable (the lease expired at ${expiry} without renewal); retry`,
    });
    expect(n1.calls.ControllerExpandVolume).toBe(0);
    await n1.renew(); // refused → registers again
    await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 back');
    expect((await call.expand(tc.csi, expansion(id, 2 * GiB))).capacity_bytes).toBe(String(2 * GiB));
  });

  it('answers UNAVAILABLE naming node and volume when the owner does not answer', async () => {
    await n1.stop();
    const err = await failure(call.expand(tc.csi, expansion(id, 2 * GiB)));
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.details).toMatch(new RegExp(`^node "n1" that holds volume "${id}" is not reachable \\(.+\\); retry$`));
    expect((await call.get(tc.csi, id)).volume?.capacity_bytes).toBe(String(GiB));
  });

  it('answers NOT_FOUND for an unknown volume once every node is available, UNAVAILABLE while one is not', async () => {
    expect(await failure(call.expand(tc.csi, expansion('unknown-volume', GiB)))).toEqual({
      code: 'NOT_FOUND',
      details: 'volume "unknown-volume" does not exist',
    });
    await n2.unregister();
    expect(await failure(call.expand(tc.csi, expansion('unknown-volume', GiB)))).toEqual({
      code: 'UNAVAILABLE',
      details:
        'volume "unknown-volume" is not known (yet): node "n2" (the node unregistered (shut down)) is not available and could hold it; retry',
    });
  });

  it('answers UNAVAILABLE for a volume whose create has an unknown outcome', async () => {
    n1.failNext('CreateVolume', grpc.status.DEADLINE_EXCEEDED, 'took too long');
    await failure(call.create(tc.csi, sized('pvc-2', GiB)));
    expect(await failure(call.expand(tc.csi, expansion(volumeIdForName('pvc-2'), 2 * GiB)))).toEqual({
      code: 'UNAVAILABLE',
      details: `volume "${volumeIdForName('pvc-2')}" is not known: a create of it on node "n1" has an unknown outcome; retry`,
    });
  });

  it('answers ABORTED to a second expansion or a delete of the same volume while one runs', async () => {
    n1.delay('ControllerExpandVolume', 300);
    const outcome = (r: PromiseSettledResult<unknown>): string =>
      r.status === 'fulfilled'
        ? 'ok'
        : `${grpc.status[(r.reason as grpc.ServiceError).code]} ${(r.reason as grpc.ServiceError).details}`;
    const results = await Promise.allSettled([
      call.expand(tc.csi, expansion(id, 2 * GiB)),
      new Promise((r) => setTimeout(r, 50)).then(() => call.expand(tc.csi, expansion(id, 3 * GiB))),
      new Promise((r) => setTimeout(r, 50)).then(() => call.delete(tc.csi, id)),
    ]);
    const busy = `ABORTED an operation on volume "${id}" is already in progress`;
    expect(results.map(outcome)).toEqual(['ok', busy, busy]);
    expect(n1.volumes.get(id)).toBe(2 * GiB);
  });

  it('refuses invalid requests with INVALID_ARGUMENT naming the field, before any node is asked', async () => {
    const cases: Array<[csi.ControllerExpandVolumeRequest, string]> = [
      [expansion('', GiB), 'volume_id is required'],
      [{ volume_id: id }, 'capacity_range is required: required_bytes is the size to grow the volume to'],
      [expansion(id, 0), 'capacity_range.required_bytes is required and must be greater than 0'],
      [
        expansion(id, 0, { capacity_range: { limit_bytes: String(GiB) } }),
        'capacity_range.required_bytes is required and must be greater than 0',
      ],
      [
        expansion(id, 0, { capacity_range: { required_bytes: '-1' } }),
        'capacity_range.required_bytes must not be negative, got -1',
      ],
      [
        expansion(id, 0, { capacity_range: { required_bytes: String(2 * GiB), limit_bytes: String(GiB) } }),
        'capacity_range.limit_bytes (1 GiB) must not be smaller than capacity_range.required_bytes (2 GiB)',
      ],
      [
        expansion(id, 2 * GiB, { volume_capability: { mount: {}, access_mode: { mode: 'MULTI_NODE_MULTI_WRITER' } } }),
        'volume_capability.access_mode MULTI_NODE_MULTI_WRITER is not supported: PMEM volumes are local to one node; allowed: SINGLE_NODE_WRITER, SINGLE_NODE_READER_ONLY, SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER',
      ],
      [
        expansion(id, 2 * GiB, {
          volume_capability: { mount: { fs_type: 'ntfs' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } },
        }),
        'volume_capability.mount.fs_type "ntfs" is not supported; allowed: ext4, xfs (or empty for the default)',
      ],
    ];
    for (const [req, details] of cases)
      expect(await failure(call.expand(tc.csi, req))).toEqual({ code: 'INVALID_ARGUMENT', details });
    expect(n1.calls.ControllerExpandVolume).toBe(0);
  });

  it('advertises EXPAND_VOLUME', async () => {
    const res = await call.capabilities(tc.csi);
    expect(res.capabilities.map((c) => c.rpc?.type)).toContain('EXPAND_VOLUME');
  });
});

describe('ControllerExpandVolume during the settle period', () => {
  it('refuses to call an unknown volume absent before the nodes had time to register', async () => {
    const clock = new TestClock();
    const tc = await startTestController({ settleMs: 45_000, clock });
    try {
      clock.advance(7_000);
      expect(await failure(call.expand(tc.csi, expansion('vol-x', GiB)))).toEqual({
        code: 'UNAVAILABLE',
        details:
          'volume "vol-x" is not known (yet): controller started 7s ago and is still collecting volumes from nodes; retry',
      });
      clock.advance(38_000);
      expect(await failure(call.expand(tc.csi, expansion('vol-x', GiB)))).toEqual({
        code: 'NOT_FOUND',
        details: 'volume "vol-x" does not exist',
      });
    } finally {
      await tc.stop();
    }
  });
});

describe('ControllerExpandVolume with two controller replicas', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("the standby learns the new size and the free space from the node's push; the leader keeps its own", async () => {
    const [leader, standby] = [await startTestController(), await startTestController()];
    cleanups.push(
      () => leader.stop(),
      () => standby.stop(),
    );
    const node = await ScriptedNode.create({ nodeId: 'n1', freeBytes: 8 * GiB });
    await node.start();
    cleanups.push(() => node.close());
    const sessions: NodeSession[] = [];
    for (const tc of [leader, standby]) {
      const client = registryClient(tc);
      cleanups.push(() => client.close());
      const s = new NodeSession(client, node);
      await s.register();
      sessions.push(s);
      await waitFor(() => nodeState(tc, 'n1') === 'available', 'n1 available');
    }
    const [toLeader, toStandby] = sessions as [NodeSession, NodeSession];
    const made = await call.create(leader.csi, sized('pvc-1', GiB));
    const volumeId = made.volume?.volume_id ?? '';
    await toStandby.push(); // what the node does after the create
    await toLeader.push();
    expect((await call.get(standby.csi, volumeId)).volume?.capacity_bytes).toBe(String(GiB));

    expect((await call.expand(leader.csi, expansion(volumeId, 4 * GiB))).capacity_bytes).toBe(String(4 * GiB));
    expect((await call.get(standby.csi, volumeId)).volume?.capacity_bytes).toBe(String(GiB)); // not pushed yet
    const listings = node.calls.ListVolumes;
    await toStandby.push(); // after the expansion
    await standby.controller.idle();
    expect((await call.get(standby.csi, volumeId)).volume?.capacity_bytes).toBe(String(4 * GiB));
    expect(estimate(standby, 'n1')).toBe(4 * GiB);
    // The leader made the change itself: the same inventory changes nothing there, and a stale one
    // (taken before the growth landed) makes it list the node instead of putting the old size back.
    await toLeader.push();
    await toLeader.push(true);
    await leader.controller.idle();
    expect(node.calls.ListVolumes).toBe(listings + 1);
    expect((await call.get(leader.csi, volumeId)).volume?.capacity_bytes).toBe(String(4 * GiB));
    expect(estimate(leader, 'n1')).toBe(4 * GiB);
    // The standby, now leading, answers a retry of the same expansion without growing it again.
    expect(await call.expand(standby.csi, expansion(volumeId, 4 * GiB))).toEqual({
      capacity_bytes: String(4 * GiB),
      node_expansion_required: true,
    });
    expect(node.volumes.get(volumeId)).toBe(4 * GiB);
    expect(estimate(standby, 'n1')).toBe(4 * GiB);
  });
});
