// What a CreateVolume/DeleteVolume pair costs the node besides its work (issue 28, the per-call
// path): the absence every create checks for first makes no error object (an Error captures a
// stack trace), and at log level info the pair writes the two lines an operator needs, "volume
// created" and "volume deleted"; the per-call lines are debug.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { volumeIdForName } from '@pmem-csi/api';
import { createLogger } from '@pmem-csi/runtime';
import { DeviceNotFoundError, type DeviceCallOptions, type PmemDeviceInfo } from '../device/device-manager.js';
import { FakeDeviceManager } from '../device/fake.js';
import {
  call,
  mountCapability,
  startTestNode,
  testClients,
  type TestClients,
  type TestNode,
} from '../testing/test-node.js';
import { MiB, type csi } from '@pmem-csi/csi';

/** The fake, counting the DeviceNotFoundErrors its lookups throw. */
class CountingFake extends FakeDeviceManager {
  notFoundThrown = 0;

  override async getDevice(volumeId: string, options?: DeviceCallOptions): Promise<PmemDeviceInfo> {
    try {
      return await super.getDevice(volumeId, options);
    } catch (e) {
      if (e instanceof DeviceNotFoundError) this.notFoundThrown++;
      throw e;
    }
  }
}

type Line = Record<string, unknown>;

describe('the per-call path of the node-controller service (fake devices, real gRPC)', () => {
  let dir: string;
  let dm: CountingFake;
  let node: TestNode;
  let c: TestClients;
  const lines: Line[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-per-call-'));
    dm = new CountingFake({ totalSize: 256 * MiB, granularity: 4 * MiB });
    await dm.setup();
    const log = createLogger({ format: 'json', level: 'debug', sink: (l) => lines.push(JSON.parse(l) as Line) });
    node = await startTestNode({ dm, dir, log });
    c = testClients(node.address);
  });

  afterAll(async () => {
    c.close();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    lines.length = 0;
    dm.notFoundThrown = 0;
  });

  const request = (name: string): csi.CreateVolumeRequest => ({
    name,
    capacity_range: { required_bytes: String(8 * MiB) },
    volume_capabilities: [mountCapability()],
    parameters: {},
  });
  const create = (name: string): Promise<csi.CreateVolumeResponse__Output> =>
    call(c.controller, c.controller.CreateVolume, request(name));
  const del = (id: string): Promise<csi.DeleteVolumeResponse__Output> =>
    call(c.controller, c.controller.DeleteVolume, { volume_id: id });

  it('a create of a new volume, its retry and its delete throw no DeviceNotFoundError', async () => {
    const id = volumeIdForName('pvc-new');
    expect((await create('pvc-new')).volume?.volume_id).toBe(id);
    expect((await create('pvc-new')).volume?.volume_id).toBe(id);
    await del(id);
    await expect(
      call(c.controller, c.controller.ValidateVolumeCapabilities, {
        volume_id: id,
        volume_capabilities: [mountCapability()],
      }),
    ).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: `volume ${id} does not exist on node node-1`,
    });
    expect(dm.notFoundThrown).toBe(0);
  });

  it('at info, a pair writes "volume created" and "volume deleted"; the per-call lines are debug', async () => {
    const id = volumeIdForName('pvc-logged');
    await create('pvc-logged');
    await del(id);
    const atInfo = lines.filter((l) => l['level'] !== 'debug');
    expect(atInfo).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'volume created',
        volumeId: id,
        name: 'pvc-logged',
        device: `/dev/fake/${id}`,
        size: 8 * MiB,
        ephemeral: false,
      }),
      expect.objectContaining({ level: 'info', msg: 'volume deleted', volumeId: id, erased: 'all', hadRecord: true }),
    ]);
    expect(lines.filter((l) => l['level'] === 'debug').map((l) => [l['msg'], l['rpc']])).toEqual([
      ['call ok', 'NodeController/CreateVolume'],
      ['call ok', 'NodeController/DeleteVolume'],
    ]);
  });
});
