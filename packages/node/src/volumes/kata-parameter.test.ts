// kataContainers: "true" (issue 26): CreateVolume makes a Kata volume, its record says so (the
// layout is built at NodeStageVolume, and for ephemeral inline volumes at NodePublishVolume:
// csi-node/kata-emulated.test.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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
import { GiB, MiB } from '@pmem-csi/csi';

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
});
