// What a node in direct mode (fixed-size namespaces) offers: no EXPAND_VOLUME anywhere;
// ControllerExpandVolume (which the central controller routes here for every mode) answers a growth
// with OUT_OF_RANGE naming volume, node, both sizes and lvm mode, and a size the volume already has
// with OK; NodeExpandVolume is UNIMPLEMENTED. The fake device manager stands in, reporting mode
// "direct".
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import type { DeviceManager } from '../device/device-manager.js';
import { FakeDeviceManager } from '../device/fake.js';
import {
  call,
  mountCapability,
  startTestNode,
  testClients,
  TEST_NODE,
  type TestClients,
  type TestNode,
} from '../testing/test-node.js';
import { MiB, type csi } from '@pmem-csi/csi';

/** The fake, reporting mode "direct" (methods stay bound to the real object). */
function asDirect(fake: FakeDeviceManager): DeviceManager {
  return new Proxy(fake, {
    get(target, prop) {
      if (prop === 'mode') return 'direct';
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as unknown as DeviceManager;
}

describe('capabilities in direct mode', () => {
  let dir: string;
  let node: TestNode;
  let c: TestClients;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-direct-'));
    const fake = new FakeDeviceManager();
    await fake.setup();
    node = await startTestNode({ dm: asDirect(fake), dir, runner: new ScriptedRunner() });
    c = testClients(node.address);
  });

  afterAll(async () => {
    c.close();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('no EXPAND_VOLUME, no online expansion', async () => {
    expect(
      (await call(c.controller, c.controller.ControllerGetCapabilities, {})).capabilities.map((x) => x.rpc?.type),
    ).not.toContain('EXPAND_VOLUME');
    expect((await call(c.node, c.node.NodeGetCapabilities, {})).capabilities.map((x) => x.rpc?.type)).not.toContain(
      'EXPAND_VOLUME',
    );
    expect((await call(c.identity, c.identity.GetPluginCapabilities, {})).capabilities).toEqual([
      { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' }, type: 'service' },
    ]);
  });

  it('ControllerExpandVolume: growth → OUT_OF_RANGE, the volume untouched; a size it has → OK without node expansion', async () => {
    const created = await call(c.controller, c.controller.CreateVolume, {
      name: 'fixed',
      capacity_range: { required_bytes: String(64 * MiB) },
      volume_capabilities: [mountCapability()],
    });
    const id = created.volume!.volume_id;
    const expand = (required: number): Promise<csi.ControllerExpandVolumeResponse__Output> =>
      call(c.controller, c.controller.ControllerExpandVolume, {
        volume_id: id,
        capacity_range: { required_bytes: String(required) },
        volume_capability: mountCapability(),
      });
    await expect(expand(128 * MiB)).rejects.toMatchObject({
      code: grpc.status.OUT_OF_RANGE,
      details: `volume ${id} on node ${TEST_NODE} is a direct-mode namespace of ${64 * MiB} bytes and cannot grow (requested ${128 * MiB} bytes); use lvm mode for volumes that grow`,
    });
    expect((await node.deps.dm.getDevice(id)).size).toBe(64 * MiB);
    expect((await node.deps.state.get(id))?.size).toBe(64 * MiB);
    expect(await expand(64 * MiB)).toEqual({ capacity_bytes: String(64 * MiB), node_expansion_required: false });
    expect(await expand(MiB)).toEqual({ capacity_bytes: String(64 * MiB), node_expansion_required: false });
    await expect(
      call(c.controller, c.controller.ControllerExpandVolume, {
        volume_id: 'nope-1',
        capacity_range: { required_bytes: String(MiB) },
      }),
    ).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: `volume nope-1 does not exist on node ${TEST_NODE}`,
    });
  });

  it('NodeExpandVolume → UNIMPLEMENTED (no EXPAND_VOLUME node capability)', async () => {
    await expect(
      call(c.node, c.node.NodeExpandVolume, {
        volume_id: 'v',
        volume_path: dir,
        capacity_range: { required_bytes: '1' },
      }),
    ).rejects.toMatchObject({
      code: grpc.status.UNIMPLEMENTED,
      details: 'volumes cannot be expanded in device mode direct',
    });
  });
});
