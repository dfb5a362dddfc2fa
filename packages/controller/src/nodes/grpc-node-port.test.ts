import * as grpc from '@grpc/grpc-js';
import { volumeIdForName } from '@pmem-csi/api';
import { GrpcNodePort } from './grpc-node-port.js';
import { ScriptedNode } from '../testing/scripted-node.js';
import { GiB } from '@pmem-csi/csi';

// The gRPC adapter's own concerns: connections on demand, idle clients closed, a new endpoint gets a
// new client. What every adapter must do is in ../testing/node-port-contract.ts.
describe('GrpcNodePort', () => {
  let node: ScriptedNode;
  let now = 1_000_000;
  let conns: GrpcNodePort;

  beforeEach(async () => {
    node = await ScriptedNode.create({ nodeId: 'n1', freeBytes: 4 * GiB });
    await node.start();
    conns = new GrpcNodePort({
      credentials: () => grpc.credentials.createInsecure(),
      idleMs: 30_000,
      now: () => now,
    });
  });

  afterEach(async () => {
    conns.closeAll();
    await node.close();
  });

  const create = (name: string) =>
    conns.createVolume('n1', {
      name,
      capacity_range: { required_bytes: String(GiB) },
      volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    });

  it('connects on the first call, not on registration', async () => {
    conns.connect('n1', node.endpoint);
    expect([conns.openClients, conns.endpointOf('n1')]).toEqual([0, node.endpoint]);
    expect(await conns.getCapacity('n1')).toEqual({ available: 4 * GiB, maxVolumeSize: 4 * GiB });
    expect(conns.openClients).toBe(1);
  });

  it('closes a client unused for the idle time and connects again on demand', async () => {
    conns.connect('n1', node.endpoint);
    await conns.getCapacity('n1');
    now += 29_999;
    conns.closeIdle();
    expect(conns.openClients).toBe(1);
    now += 1;
    conns.closeIdle();
    expect(conns.openClients).toBe(0);
    expect(await conns.listVolumes('n1')).toEqual([]);
    expect(conns.openClients).toBe(1);
  });

  it('never closes a client with a call in flight', async () => {
    conns.connect('n1', node.endpoint);
    node.delay('CreateVolume', 300);
    const pending = create('pvc-1');
    now += 60_000;
    conns.closeIdle();
    expect(conns.openClients).toBe(1);
    expect((await pending).volume_id).toBe(volumeIdForName('pvc-1'));
    now += 29_999;
    conns.closeIdle();
    expect(conns.openClients).toBe(1); // idle time counts from the end of the last call
  });

  it('a node that registers with a new endpoint gets a new client', async () => {
    conns.connect('n1', '127.0.0.1:1');
    await expect(conns.getCapacity('n1')).rejects.toThrow(/^node "n1" is not reachable: /);
    expect(conns.openClients).toBe(1);
    conns.connect('n1', node.endpoint);
    expect(conns.openClients).toBe(0);
    expect((await conns.getCapacity('n1')).available).toBe(4 * GiB);
    conns.close('n1');
    expect([conns.openClients, conns.endpointOf('n1')]).toEqual([0, undefined]);
    await expect(conns.getCapacity('n1')).rejects.toThrow('node "n1" is not reachable: no connection to its endpoint');
  });
});
