// kataContainers: "true" (issue 26): CreateVolume makes a Kata volume (the layout is built at
// NodeStageVolume: csi-node/kata-emulated.test.ts); ephemeral inline volumes, which the node does
// not build that way yet, answer INVALID_ARGUMENT naming the field, and nothing is created (no
// device, no record, no host tool run).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { volumeIdForName } from '@pmem-csi/api';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import { FakeDeviceManager } from '../device/fake.js';
import {
  call,
  mountCapability,
  startTestNode,
  testClients,
  type TestClients,
  type TestNode,
} from '../testing/test-node.js';
import { ephemeralVolumeId } from './volumes.js';
import { GiB, MiB } from '@pmem-csi/csi';

const REFUSAL =
  'kataContainers: Kata Containers volumes are not supported yet for ephemeral inline volumes (issue 26); use kataContainers: "false", or a persistent volume with kataContainers: "true"';

describe('kataContainers: "true" (issue 26)', () => {
  let dir: string;
  let dm: FakeDeviceManager;
  let runner: ScriptedRunner;
  let node: TestNode;
  let c: TestClients;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-kata-'));
    dm = new FakeDeviceManager({ totalSize: GiB });
    await dm.setup();
    runner = new ScriptedRunner(); // no replies: any host tool call would fail the test's calls check
    node = await startTestNode({ dm, dir, runner });
    c = testClients(node.address);
  });

  afterAll(async () => {
    c.close();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['true', 'True', '1'])(
    'CreateVolume with kataContainers %j creates a Kata volume (its record says so)',
    async (v) => {
      const res = await call(c.controller, c.controller.CreateVolume, {
        name: 'pvc-kata',
        capacity_range: { required_bytes: String(64 * MiB) },
        volume_capabilities: [mountCapability()],
        parameters: { kataContainers: v },
      });
      expect(res.volume?.volume_context).toMatchObject({ kataContainers: 'true' });
      expect(await node.deps.state.get(volumeIdForName('pvc-kata'))).toMatchObject({
        parameters: { kataContainers: 'true' },
      });
      await call(c.controller, c.controller.DeleteVolume, { volume_id: volumeIdForName('pvc-kata') });
      expect(await dm.listDevices()).toEqual([]);
    },
  );

  it('an ephemeral inline volume with kataContainers "true" → INVALID_ARGUMENT before the target is looked at', async () => {
    const handle = 'csi-kata-eph';
    await expect(
      call(c.node, c.node.NodePublishVolume, {
        volume_id: handle,
        target_path: join(dir, 'eph'),
        volume_capability: mountCapability(),
        volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi', kataContainers: 'true' },
      }),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: REFUSAL });
    expect(runner.calls).toEqual([]);
    expect(await dm.listDevices()).toEqual([]);
    expect(await node.deps.state.get(ephemeralVolumeId(handle))).toBeUndefined();
  });
});
