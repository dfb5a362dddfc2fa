import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { volumeIdForName } from '@pmem-csi/api';
import { GiB, MiB, type csi } from '@pmem-csi/csi';
import { loadCsi, nullLogger, unary, type CallContext } from '@pmem-csi/runtime';
import * as grpc from '@grpc/grpc-js';
import { createFakeDeviceNode, type FakeDeviceNode } from './fake-device-node.js';

const ctx = (method: string): CallContext => ({
  signal: AbortSignal.timeout(10_000),
  deadline: undefined,
  log: nullLogger,
  method,
  peer: 'in-process',
});

// Requests as the node receives them from the wire (every field present, defaults filled in).
const service = () => loadCsi().csi.v1.Controller.service;
const request = (name: string, bytes: number): csi.CreateVolumeRequest__Output =>
  service().CreateVolume.requestDeserialize(
    service().CreateVolume.requestSerialize({
      name,
      capacity_range: { required_bytes: String(bytes) },
      volume_capabilities: [{ block: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    }),
  );
const noCapacityFilter = (): csi.GetCapacityRequest__Output =>
  service().GetCapacity.requestDeserialize(service().GetCapacity.requestSerialize({}));

describe('createFakeDeviceNode', () => {
  let node: FakeDeviceNode;

  beforeEach(async () => {
    node = await createFakeDeviceNode({ nodeId: 'n1', totalSize: GiB, granularity: 4 * MiB });
  });

  afterEach(async () => {
    await node.close();
  });

  it('runs the node-controller service in process: rounding, accounting, inventory', async () => {
    const res = await node.calls.CreateVolume(request('pvc-1', MiB + 1), ctx('CreateVolume'));
    expect(res.volume).toMatchObject({ volume_id: volumeIdForName('pvc-1'), capacity_bytes: String(4 * MiB) });
    expect(await node.calls.GetCapacity(noCapacityFilter(), ctx('GetCapacity'))).toEqual({
      available_capacity: String(GiB - 4 * MiB),
      maximum_volume_size: { value: String(GiB - 4 * MiB) },
    });
    expect((await node.inventory()).map((v) => [v.volume_id, v.capacity_bytes])).toEqual([
      [volumeIdForName('pvc-1'), String(4 * MiB)],
    ]);
    expect([...node.dm.store.volumes.keys()]).toEqual([volumeIdForName('pvc-1')]);
  });

  it('serves the same service over gRPC, where the node answers with its codes', async () => {
    await node.calls.CreateVolume(request('pvc-1', GiB / 2), ctx('CreateVolume'));
    const served = await node.serve();
    const client = new (loadCsi().csi.v1.Controller)(served.endpoint, grpc.credentials.createInsecure());
    try {
      const listed = await unary<csi.ListVolumesRequest, csi.ListVolumesResponse__Output>(
        client,
        client.ListVolumes,
        {},
        { timeoutMs: 10_000 },
      );
      expect(listed.entries.map((e) => e.volume?.volume_id)).toEqual([volumeIdForName('pvc-1')]);
      await expect(
        unary(client, client.CreateVolume, { ...request('pvc-2', GiB) }, { timeoutMs: 10_000 }),
      ).rejects.toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    } finally {
      client.close();
      await served.stop();
    }
  });

  it('removes the state directory it made', async () => {
    const other = await createFakeDeviceNode();
    const dir = dirname(other.deps.state.dir);
    expect(existsSync(dir)).toBe(true);
    await other.close();
    expect(existsSync(dir)).toBe(false);
  });
});
