// Every volume id the central controller can make is one this node accepts (issue 14, R5): the
// controller and the node refuse names by the same rule (@pmem-csi/api volumeNameProblem), and here
// every name that rule accepts yields an id that each device mode's naming check and the volume
// records accept, and that the node-controller service really creates. Before, the name `..` gave
// the id "..-<hash>", which the controller forwarded and the node refused as unsafe.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { volumeIdForName, volumeNameProblem } from '@pmem-csi/api';
import { isServiceError } from '@pmem-csi/runtime';
import { isVolumeIdName } from '../device/direct-layout.js';
import { FakeDeviceManager } from '../device/fake.js';
import { LV_NAME } from '../device/lvm-layout.js';
import { SAFE_VOLUME_ID } from '../state/volume-record.js';
import {
  call,
  mountCapability,
  startTestNode,
  testClients,
  type TestClients,
  type TestNode,
} from '../testing/test-node.js';
import { GiB, MiB } from '@pmem-csi/csi';

const names = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 140 }),
  fc.string({
    unit: fc.constantFrom('.', '-', '_', 'p', 'v', 'm', 'o', 'e', 'l', 'g', 't', 'a', 'd', '😀', 'ä', ' ', '/'),
    maxLength: 10,
  }),
  fc.uuid().map((u) => `pvc-${u}`),
);

describe('volume names the controller accepts yield ids this node accepts', () => {
  it('property: lvm, direct (ndctl) and the volume records accept the id of every accepted name (20,000 names)', () => {
    let accepted = 0;
    fc.assert(
      fc.property(names, (name) => {
        if (volumeNameProblem(name) !== undefined) return true;
        accepted++;
        const id = volumeIdForName(name);
        return LV_NAME.test(id) && isVolumeIdName(id) && SAFE_VOLUME_ID.test(id);
      }),
      { numRuns: 20_000 },
    );
    expect(accepted).toBeGreaterThan(5_000); // the generator reaches accepted names, not only refused ones
  });

  describe('through the node-controller service (fake devices, real volume records)', () => {
    let dir: string;
    let node: TestNode;
    let c: TestClients;

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'pmem-names-'));
      const dm = new FakeDeviceManager({ totalSize: 1024 * GiB });
      await dm.setup();
      node = await startTestNode({ dm, dir });
      c = testClients(node.address);
    });

    afterAll(async () => {
      c.close();
      await node.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('property: CreateVolume succeeds for every accepted name, with its id; refused names get INVALID_ARGUMENT by the shared rule (300 names)', async () => {
      const counts = { created: 0, refused: 0 };
      await fc.assert(
        fc.asyncProperty(names, async (name) => {
          const problem = volumeNameProblem(name);
          try {
            const res = await call(c.controller, c.controller.CreateVolume, {
              name,
              capacity_range: { required_bytes: String(MiB) },
              volume_capabilities: [mountCapability()],
            });
            counts.created++;
            const id = res.volume?.volume_id ?? '';
            await call(c.controller, c.controller.DeleteVolume, { volume_id: id });
            return problem === undefined && id === volumeIdForName(name);
          } catch (e) {
            counts.refused++;
            return isServiceError(e) && e.code === grpc.status.INVALID_ARGUMENT && e.details === problem;
          }
        }),
        { numRuns: 300 },
      );
      expect(counts.created).toBeGreaterThan(50);
      expect(counts.refused).toBeGreaterThan(20);
    }, 120_000); // 300 creates and deletes with real records: seconds alone, much longer beside a parallel test run
  });
});
