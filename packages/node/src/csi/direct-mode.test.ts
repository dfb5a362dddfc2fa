// What a node in direct mode (fixed-size namespaces) offers: no EXPAND_VOLUME anywhere, and both
// expand RPCs answer UNIMPLEMENTED naming the mode. The fake device manager stands in, reporting
// mode "direct".
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import type { DeviceManager } from '../device/device-manager.js';
import { FakeDeviceManager } from '../device/fake.js';
import { call, startTestNode, testClients, type TestClients, type TestNode } from './testing/test-node.js';

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

  it('ControllerExpandVolume and NodeExpandVolume → UNIMPLEMENTED', async () => {
    const details = 'volumes cannot be expanded in device mode direct';
    await expect(
      call(c.controller, c.controller.ControllerExpandVolume, {
        volume_id: 'v',
        capacity_range: { required_bytes: '1' },
      }),
    ).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED, details });
    await expect(
      call(c.node, c.node.NodeExpandVolume, {
        volume_id: 'v',
        volume_path: dir,
        capacity_range: { required_bytes: '1' },
      }),
    ).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED, details });
  });
});
