// The whole controller on the in-process adapter: nodes register with the registry as usual, but
// under in-process endpoints, and every forwarded call runs the node's own functions in this
// process (no node-controller server). The same CSI answers as over gRPC.
import * as grpc from '@grpc/grpc-js';
import { volumeIdForName } from '@pmem-csi/api';
import { GiB } from '@pmem-csi/csi';
import { startController } from '../controller.js';
import {
  call,
  createRequest,
  failure,
  nodeState,
  startTestController,
  waitFor,
  type TestController,
} from '../testing/harness.js';
import { ScriptedNode } from '../testing/scripted-node.js';
import { InProcessNodePort, type InProcessNodeCalls } from './in-process-node-port.js';

describe('controller on in-process nodes', () => {
  const served = new Map<string, InProcessNodeCalls>();
  let tc: TestController;
  let nodes: ScriptedNode[];

  beforeEach(async () => {
    tc = await startTestController({ nodePort: new InProcessNodePort(served, { listPageSize: 2 }) });
    nodes = [];
    for (const [nodeId, free] of [
      ['n1', 2 * GiB],
      ['n2', 6 * GiB],
    ] as const) {
      const node = await ScriptedNode.create({ nodeId, freeBytes: free });
      nodes.push(node);
      served.set(`${nodeId}.in-process:10001`, node.inProcessCalls);
      node.useRegistry(tc.registryAddress);
      await node.register(`${nodeId}.in-process:10001`);
      await waitFor(() => nodeState(tc, nodeId) === 'available', `${nodeId} available`);
    }
  });

  afterEach(async () => {
    served.clear();
    await Promise.all(nodes.map((n) => n.close()));
    await tc.stop();
  });

  it('creates on the roomiest node, lists, grows, deletes — on the nodes themselves', async () => {
    const res = await call.create(tc.csi, createRequest('pvc-1', { capacity_range: { required_bytes: String(GiB) } }));
    expect(res.volume?.accessible_topology[0]?.segments['pmem-csi.intel.com/node']).toBe('n2');
    const [n1, n2] = nodes as [ScriptedNode, ScriptedNode];
    expect([[...n1.volumes.keys()], [...n2.volumes.keys()]]).toEqual([[], [volumeIdForName('pvc-1')]]);
    expect(n2.calls.CreateVolume).toBe(1);
    expect((await call.list(tc.csi)).entries.map((e) => e.volume?.volume_id)).toEqual([volumeIdForName('pvc-1')]);
    const grow = { volume_id: volumeIdForName('pvc-1'), capacity_range: { required_bytes: String(2 * GiB) } };
    expect(await call.expand(tc.csi, grow)).toEqual({
      capacity_bytes: String(2 * GiB),
      node_expansion_required: true,
    });
    expect([n2.calls.ControllerExpandVolume, n2.volumes.get(volumeIdForName('pvc-1'))]).toEqual([1, 2 * GiB]);
    await call.delete(tc.csi, volumeIdForName('pvc-1'));
    expect(n2.volumes.size).toBe(0);
  });

  it("takes the node's own refusal (stale capacity) and places on the next node; an unreachable node is UNAVAILABLE", async () => {
    const [n1, n2] = nodes as [ScriptedNode, ScriptedNode];
    n1.reportCapacity({ maxVolumeSize: 50 * GiB });
    await n1.renew();
    const res = await call.create(
      tc.csi,
      createRequest('pvc-1', { capacity_range: { required_bytes: String(5 * GiB) } }),
    );
    expect(res.volume?.accessible_topology[0]?.segments['pmem-csi.intel.com/node']).toBe('n2');
    expect([n1.calls.CreateVolume, n1.volumes.size, n2.volumes.size]).toEqual([1, 0, 1]);
    served.delete('n2.in-process:10001');
    expect(await failure(call.delete(tc.csi, volumeIdForName('pvc-1')))).toEqual({
      code: 'UNAVAILABLE',
      details: `node "n2" that holds volume "${volumeIdForName('pvc-1')}" is not reachable (no node serves "n2.in-process:10001" in this process); retry`,
    });
  });

  it('a controller without nodeCredentials and without a nodePort does not start, naming the option', async () => {
    await expect(
      startController({
        csiEndpoint: '127.0.0.1:0',
        registryAddress: '127.0.0.1:0',
        registryCredentials: grpc.ServerCredentials.createInsecure(),
      }),
    ).rejects.toThrow('nodeCredentials is required: give the node-controller credentials, or a nodePort');
  });
});
