import * as grpc from '@grpc/grpc-js';
import { volumeIdForName } from '@pmem-csi/api';
import { ScriptedNode } from '../testing/scripted-node.js';
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
import { type csi, GiB, MiB } from '@pmem-csi/csi';

const KEY = 'pmem-csi.intel.com/node';
const topo = (...ids: string[]): csi.Topology[] => ids.map((id) => ({ segments: { [KEY]: id } }));
const range = (requiredGiB: number, limitGiB = 0) => ({
  required_bytes: String(requiredGiB * GiB),
  limit_bytes: String(limitGiB * GiB),
});
const nodeOf = (res: csi.CreateVolumeResponse__Output) => res.volume?.accessible_topology[0]?.segments[KEY];

describe('CreateVolume', () => {
  let tc: TestController;
  let nodes: ScriptedNode[];
  const byId = (id: string) => nodes.find((n) => n.nodeId === id) as ScriptedNode;
  const volumesOnNodes = () => nodes.reduce((sum, n) => sum + n.volumes.size, 0);

  beforeEach(async () => {
    tc = await startTestController();
    nodes = [
      await startScriptedNode(tc, { nodeId: 'n1', freeBytes: 2 * GiB }),
      await startScriptedNode(tc, { nodeId: 'n2', freeBytes: 6 * GiB }),
      await startScriptedNode(tc, { nodeId: 'n3', freeBytes: 4 * GiB }),
    ];
  });

  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.close()));
    await tc.stop();
  });

  describe('placement', () => {
    it('without topology picks the node with the largest maximum volume size and returns its topology', async () => {
      const res = await call.create(
        tc.csi,
        createRequest('pvc-1', { capacity_range: range(1), parameters: { eraseafter: 'false' } }),
      );
      expect(res.volume).toEqual({
        volume_id: volumeIdForName('pvc-1'),
        capacity_bytes: String(GiB),
        volume_context: {
          eraseafter: 'false',
          kataContainers: 'false',
          usage: 'AppDirect',
          name: 'pvc-1',
          deviceMode: 'fake',
        },
        accessible_topology: [{ segments: { [KEY]: 'n2' } }],
        content_source: null,
      });
      expect(byId('n2').volumes.has(volumeIdForName('pvc-1'))).toBe(true);
    });

    it("adjusts the node's capacity right after a create and a delete (no wait for its renewal)", async () => {
      const res = await call.create(tc.csi, createRequest('pvc-1', { capacity_range: range(1) }));
      const n2 = () => tc.controller.status().nodes.find((n) => n.nodeId === 'n2');
      expect(n2()?.capacity).toMatchObject({ available: 5 * GiB, maxVolumeSize: 5 * GiB });
      await call.delete(tc.csi, res.volume?.volume_id ?? '');
      expect(n2()?.capacity).toMatchObject({ available: 6 * GiB, maxVolumeSize: 6 * GiB });
    });

    it('asks a node that refused (stale capacity) for its capacity in the background', async () => {
      byId('n1').reportCapacity({ maxVolumeSize: 50 * GiB });
      await byId('n1').renew();
      expect(nodeOf(await call.create(tc.csi, createRequest('pvc-1', { capacity_range: range(5) })))).toBe('n2');
      byId('n1').reportCapacity(undefined);
      await tc.controller.idle();
      expect(byId('n1').calls.GetCapacity).toBe(1);
      expect(tc.controller.status().nodes.find((n) => n.nodeId === 'n1')?.capacity.maxVolumeSize).toBe(2 * GiB);
    });

    it('takes preferred nodes in the given order', async () => {
      const req = { requisite: topo('n1', 'n2', 'n3'), preferred: topo('n3', 'n1') };
      expect(
        nodeOf(
          await call.create(
            tc.csi,
            createRequest('pvc-1', { capacity_range: range(1), accessibility_requirements: req }),
          ),
        ),
      ).toBe('n3');
    });

    it('keeps to the requisite nodes', async () => {
      const req = { requisite: topo('n1'), preferred: [] };
      expect(
        nodeOf(
          await call.create(
            tc.csi,
            createRequest('pvc-1', { capacity_range: range(1), accessibility_requirements: req }),
          ),
        ),
      ).toBe('n1');
    });

    it('skips a preferred node that is too small', async () => {
      const req = { requisite: topo('n1', 'n3'), preferred: topo('n1', 'n3') };
      expect(
        nodeOf(
          await call.create(
            tc.csi,
            createRequest('pvc-1', { capacity_range: range(3), accessibility_requirements: req }),
          ),
        ),
      ).toBe('n3');
    });

    it('answers RESOURCE_EXHAUSTED with the largest possible volume when nothing fits', async () => {
      expect(await failure(call.create(tc.csi, createRequest('pvc-1', { capacity_range: range(10) })))).toEqual({
        code: 'RESOURCE_EXHAUSTED',
        details: 'no node can hold 10 GiB; the largest volume available is 6 GiB (node "n2")',
      });
      const req = { requisite: [{ segments: { 'topology.kubernetes.io/zone': 'a' } }], preferred: [] };
      expect(await failure(call.create(tc.csi, createRequest('pvc-1', { accessibility_requirements: req })))).toEqual({
        code: 'RESOURCE_EXHAUSTED',
        details:
          'no node can hold 1 GiB: no registered node matches the requisite topology (segments must be {"pmem-csi.intel.com/node": <node>})',
      });
      expect(volumesOnNodes()).toBe(0);
    });

    it('tries the next candidate when a node refuses with RESOURCE_EXHAUSTED (stale capacity)', async () => {
      byId('n1').reportCapacity({ maxVolumeSize: 50 * GiB });
      await byId('n1').renew();
      const res = await call.create(tc.csi, createRequest('pvc-1', { capacity_range: range(5) }));
      expect(nodeOf(res)).toBe('n2');
      expect(byId('n1').calls.CreateVolume).toBe(1);
    });

    it('reports every refusal when all candidates refuse', async () => {
      byId('n1').reportCapacity({ maxVolumeSize: 50 * GiB });
      await byId('n1').renew();
      expect(await failure(call.create(tc.csi, createRequest('pvc-1', { capacity_range: range(8) })))).toEqual({
        code: 'RESOURCE_EXHAUSTED',
        details: `no node can hold 8 GiB: node "n1": not enough space for volume "${volumeIdForName('pvc-1')}": requested ${8 * GiB} bytes, 8 GiB when rounded up to a multiple of 4 MiB; the largest size available is ${2 * GiB} bytes (2 GiB)`,
      });
    });

    it('returns other node errors with their code, and retries on the same node after an unknown outcome', async () => {
      byId('n2').failNext('CreateVolume', grpc.status.INTERNAL, 'disk on fire');
      expect(await failure(call.create(tc.csi, createRequest('pvc-1')))).toEqual({
        code: 'INTERNAL',
        details: 'node "n2": disk on fire',
      });
      // Make another node the better choice: the retry must still go to n2, which may hold the volume.
      byId('n3').reportCapacity({ maxVolumeSize: 40 * GiB });
      await byId('n3').renew();
      expect(nodeOf(await call.create(tc.csi, createRequest('pvc-1')))).toBe('n2');
      expect(byId('n3').calls.CreateVolume).toBe(0);
    });

    it('answers UNAVAILABLE when the chosen node cannot be reached', async () => {
      await byId('n2').stop();
      const err = await failure(call.create(tc.csi, createRequest('pvc-1')));
      expect(err.code).toBe('UNAVAILABLE');
      expect(err.details).toMatch(/^node "n2" is not reachable: .+/);
      // the outcome is unknown: no other node is tried while n2 cannot answer
      tc.clock.advance(30_000);
      expect(await failure(call.create(tc.csi, createRequest('pvc-1')))).toEqual({
        code: 'UNAVAILABLE',
        details: expect.stringMatching(
          /^an earlier attempt to create volume "pvc-1" on node "n2" has an unknown outcome and that node is not available \(the lease expired at .+ without renewal\); retry$/,
        ),
      });
      expect(volumesOnNodes()).toBe(0);
    });

    it('picks the default size when the request gives none, and caps it at a lone limit', async () => {
      expect((await call.create(tc.csi, createRequest('pvc-1'))).volume?.capacity_bytes).toBe(String(GiB));
      const capped = await call.create(
        tc.csi,
        createRequest('pvc-2', { capacity_range: { limit_bytes: String(512 * MiB) } }),
      );
      expect(capped.volume?.capacity_bytes).toBe(String(512 * MiB));
    });
  });

  describe('idempotency', () => {
    it('returns the same volume for the same name without asking a node again', async () => {
      const first = await call.create(tc.csi, createRequest('pvc-1', { capacity_range: range(1) }));
      const second = await call.create(tc.csi, createRequest('pvc-1', { capacity_range: range(1, 2) }));
      expect(second).toEqual(first);
      expect(nodes.map((n) => n.calls.CreateVolume)).toEqual([0, 1, 0]);
    });

    it('answers ALREADY_EXISTS for an incompatible size, parameters or topology', async () => {
      await call.create(tc.csi, createRequest('pvc-1', { capacity_range: range(1) }));
      expect(await failure(call.create(tc.csi, createRequest('pvc-1', { capacity_range: range(2) })))).toEqual({
        code: 'ALREADY_EXISTS',
        details: 'volume "pvc-1" already exists on node "n2" with 1 GiB; the request asks for at least 2 GiB',
      });
      expect(
        await failure(
          call.create(tc.csi, createRequest('pvc-1', { capacity_range: range(1), parameters: { usage: 'FileIO' } })),
        ),
      ).toEqual({
        code: 'ALREADY_EXISTS',
        details: 'volume "pvc-1" already exists on node "n2" with usage "AppDirect", not "FileIO"',
      });
      expect(
        await failure(
          call.create(
            tc.csi,
            createRequest('pvc-1', { accessibility_requirements: { requisite: topo('n1', 'n3'), preferred: [] } }),
          ),
        ),
      ).toEqual({
        code: 'ALREADY_EXISTS',
        details: 'volume "pvc-1" already exists on node "n2", which is not in the requisite topology',
      });
      const inTopology = await call.create(
        tc.csi,
        createRequest('pvc-1', { accessibility_requirements: { requisite: topo('n1', 'n2'), preferred: topo('n1') } }),
      );
      expect(nodeOf(inTopology)).toBe('n2');
    });

    it('20 concurrent creates of one name make exactly one volume; losers get ABORTED and a retry returns it', async () => {
      byId('n2').delay('CreateVolume', 200);
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => call.create(tc.csi, createRequest('pvc-c'))),
      );
      const ok = results.filter(
        (r): r is PromiseFulfilledResult<csi.CreateVolumeResponse__Output> => r.status === 'fulfilled',
      );
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(ok.length).toBeGreaterThanOrEqual(1);
      for (const r of ok) expect(r.value.volume?.volume_id).toBe(volumeIdForName('pvc-c'));
      for (const r of rejected) {
        expect({
          code: (r.reason as grpc.ServiceError).code,
          details: (r.reason as grpc.ServiceError).details,
        }).toEqual({
          code: grpc.status.ABORTED,
          details: 'an operation on volume name "pvc-c" is already in progress',
        });
      }
      const retry = await call.create(tc.csi, createRequest('pvc-c'));
      expect(retry.volume?.volume_id).toBe(volumeIdForName('pvc-c'));
      expect(volumesOnNodes()).toBe(1);
      expect(nodes.reduce((sum, n) => sum + n.calls.CreateVolume, 0)).toBe(1);
    });
  });

  describe('validation', () => {
    const cases: Array<[string, csi.CreateVolumeRequest, string, string?]> = [
      ['no name', createRequest(''), 'name is required'],
      [
        'negative size',
        createRequest('v', { capacity_range: { required_bytes: '-1' } }),
        'capacity_range.required_bytes must not be negative, got -1',
      ],
      [
        'limit below required',
        createRequest('v', { capacity_range: range(2, 1) }),
        'capacity_range.limit_bytes (1 GiB) must not be smaller than capacity_range.required_bytes (2 GiB)',
      ],
      [
        'huge size',
        createRequest('v', { capacity_range: { required_bytes: '9223372036854775807' } }),
        'capacity_range.required_bytes 9223372036854775807 is too large; the maximum supported is 9007199254740991 bytes',
        'OUT_OF_RANGE',
      ],
      [
        'no capabilities',
        createRequest('v', { volume_capabilities: [] }),
        'volume_capabilities is required: give at least one capability',
      ],
      [
        'multi-node mode',
        createRequest('v', { volume_capabilities: [{ block: {}, access_mode: { mode: 'MULTI_NODE_MULTI_WRITER' } }] }),
        'volume_capabilities[0].access_mode MULTI_NODE_MULTI_WRITER is not supported: PMEM volumes are local to one node; allowed: SINGLE_NODE_WRITER, SINGLE_NODE_READER_ONLY, SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER',
      ],
      [
        'no access mode',
        createRequest('v', { volume_capabilities: [{ block: {} }] }),
        'volume_capabilities[0].access_mode is required; allowed: SINGLE_NODE_WRITER, SINGLE_NODE_READER_ONLY, SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER',
      ],
      [
        'no access type',
        createRequest('v', { volume_capabilities: [{ access_mode: { mode: 'SINGLE_NODE_WRITER' } }] }),
        'volume_capabilities[0] needs an access_type: mount or block',
      ],
      [
        'unknown parameter',
        createRequest('v', { parameters: { foo: 'bar' } }),
        'invalid StorageClass parameters: parameter "foo" is not allowed in StorageClass parameters; allowed keys: eraseafter, kataContainers, usage, persistencyModel, csi.storage.k8s.io/*',
      ],
      [
        'snapshot source',
        createRequest('v', { volume_content_source: { snapshot: { snapshot_id: 's1' } } }),
        'volume_content_source (snapshot) is not supported: this driver cannot create volumes from snapshots or clone volumes; omit volume_content_source',
      ],
      [
        'mutable parameters',
        createRequest('v', { mutable_parameters: { a: 'b' } }),
        'mutable_parameters are not supported by this driver (no MODIFY_VOLUME capability); omit them',
      ],
    ];
    it.each(cases)('%s', async (_what, req, details, code = 'INVALID_ARGUMENT') => {
      expect(await failure(call.create(tc.csi, req))).toEqual({ code, details });
      expect(volumesOnNodes()).toBe(0);
    });
  });
});

describe('CreateVolume across controller restarts and the settle period', () => {
  const dirs: TestController[] = [];
  const nodes: ScriptedNode[] = [];
  afterEach(async () => {
    await Promise.all(nodes.splice(0).map((n) => n.close()));
    await Promise.all(dirs.splice(0).map((tc) => tc.stop()));
  });

  it('after a restart the same name gives the same volume and no second one; unknown names wait for the settle period', async () => {
    const first = await startTestController({ leaseSeconds: 30 });
    const n1 = await startScriptedNode(first, { nodeId: 'n1', freeBytes: 4 * GiB });
    const n2 = await startScriptedNode(first, { nodeId: 'n2', freeBytes: 8 * GiB });
    nodes.push(n1, n2);
    const created = await call.create(first.csi, createRequest('pvc-1', { capacity_range: range(1) }));
    expect(nodeOf(created)).toBe('n2');
    const port = first.controller.registryPort;
    await first.stop();

    const clock = new TestClock();
    const second = await startTestController({
      leaseSeconds: 30,
      settleMs: 45_000,
      clock,
      registryAddress: `127.0.0.1:${port}`,
    });
    dirs.push(second);
    clock.advance(3000);
    expect(await failure(call.create(second.csi, createRequest('pvc-1', { capacity_range: range(1) })))).toEqual({
      code: 'UNAVAILABLE',
      details: 'controller started 3s ago and is still collecting volumes from nodes; retry',
    });
    // The nodes' next renewal is refused (unknown registration), so they register again.
    await n1.renew();
    await n2.renew();
    await waitFor(
      () => nodeState(second, 'n1') === 'available' && nodeState(second, 'n2') === 'available',
      'nodes re-registered',
    );
    expect(n1.registrations).toHaveLength(2);

    // Make n1 the better choice: a duplicate would land there.
    n1.reportCapacity({ maxVolumeSize: 100 * GiB });
    await n1.renew();
    const again = await call.create(second.csi, createRequest('pvc-1', { capacity_range: range(1) }));
    expect(again.volume).toEqual(created.volume);
    expect(n1.volumes.size + n2.volumes.size).toBe(1);
    expect(n1.calls.CreateVolume + n2.calls.CreateVolume).toBe(1);

    expect(await failure(call.create(second.csi, createRequest('pvc-2')))).toEqual({
      code: 'UNAVAILABLE',
      details: 'controller started 3s ago and is still collecting volumes from nodes; retry',
    });
    for (const step of [20_000, 22_000]) {
      clock.advance(step); // leases are 30 s: keep them renewed while time passes
      await n1.renew();
      await n2.renew();
    }
    expect(n1.registrations).toHaveLength(2);
    expect(nodeOf(await call.create(second.csi, createRequest('pvc-2')))).toBe('n1');
  });

  it("refuses unknown names while a registered node's volumes are still being listed", async () => {
    const tc = await startTestController();
    dirs.push(tc);
    const slow = await ScriptedNode.create({ nodeId: 'slow' });
    nodes.push(slow);
    slow.delay('ListVolumes', 300);
    await slow.start();
    slow.useRegistry(tc.registryAddress);
    await slow.register();
    expect(await failure(call.create(tc.csi, createRequest('pvc-1')))).toEqual({
      code: 'UNAVAILABLE',
      details: 'the volumes of node "slow" (listing the node\'s volumes) are not known yet; retry',
    });
    await tc.controller.idle();
    expect(nodeOf(await call.create(tc.csi, createRequest('pvc-1')))).toBe('slow');
  });
});

describe('capacity after creates and deletes', () => {
  it('no call but the forwarded one under the locks: one background GetCapacity for a burst on one node', async () => {
    const tc = await startTestController({ capacityRefreshDelayMs: 4000 });
    const nodes = [
      await startScriptedNode(tc, { nodeId: 'n1', freeBytes: 2 * GiB }),
      await startScriptedNode(tc, { nodeId: 'n2', freeBytes: 8 * GiB }),
    ];
    const [n1, n2] = nodes as [ScriptedNode, ScriptedNode];
    try {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(
          (await call.create(tc.csi, createRequest(`pvc-${i}`, { capacity_range: range(1) }))).volume?.volume_id ?? '',
        );
      await call.delete(tc.csi, ids[0] ?? '');
      expect([n2.calls.CreateVolume, n2.calls.DeleteVolume, n2.calls.GetCapacity]).toEqual([5, 1, 0]);
      expect(tc.controller.status().nodes.find((n) => n.nodeId === 'n2')?.capacity).toMatchObject({
        available: 4 * GiB,
        maxVolumeSize: 4 * GiB,
      });
      n2.reportCapacity({ maxVolumeSize: 3 * GiB, available: 3 * GiB }); // the node knows better (e.g. alignment)
      await tc.controller.idle();
      expect([n1.calls.GetCapacity, n2.calls.GetCapacity]).toEqual([0, 1]);
      expect(tc.controller.status().nodes.find((n) => n.nodeId === 'n2')?.capacity).toMatchObject({
        available: 3 * GiB,
        maxVolumeSize: 3 * GiB,
      });
    } finally {
      await Promise.all(nodes.map((n) => n.close()));
      await tc.stop();
    }
  });
});
