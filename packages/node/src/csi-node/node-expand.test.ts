// NodeExpandVolume's volume_path over real gRPC with the fake device manager and scripted mount
// tools: a publish target and the staging path (the kubelet's call after NodeStageVolume of a volume
// expanded offline) both grow the filesystem; a path that is neither is NOT_FOUND naming what is
// there, before anything grows; a read-only publish target is grown through the writable staging
// mount; no room for the growth is OUT_OF_RANGE here too, and so is a growth above limit_bytes,
// refused before anything grows. (Sizes, required fields and the CAP_SYS_RESOURCE answer:
// node-server.test.ts; for real: node-expand-emulated.test.ts.)
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import { FakeDeviceManager } from '../device/fake.js';
import { mountedAt, notMounted, SwitchableRunner } from '../testing/scripted-mounts.js';
import {
  blockCapability,
  call,
  mountCapability,
  startTestNode,
  testClients,
  TEST_NODE,
  type TestClients,
  type TestNode,
} from '../testing/test-node.js';
import { GiB, MiB, type csi } from '@pmem-csi/csi';

describe('NodeExpandVolume on publish targets and staging paths (fake devices, scripted mounts)', () => {
  let dir: string;
  let dm: FakeDeviceManager;
  let runner: SwitchableRunner;
  let node: TestNode;
  let c: TestClients;
  let vol: string;
  let dev: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-nx-'));
    dm = new FakeDeviceManager({ totalSize: GiB });
    await dm.setup();
    runner = new SwitchableRunner();
    node = await startTestNode({ dm, dir, runner, hasCapability: async () => true });
    c = testClients(node.address);
    const created = await call(c.controller, c.controller.CreateVolume, {
      name: 'grow',
      capacity_range: { required_bytes: String(320 * MiB) },
      volume_capabilities: [mountCapability()],
    });
    vol = created.volume!.volume_id;
    dev = `/dev/fake/${vol}`;
    await mkdir(join(dir, 'empty'));
  });

  afterAll(async () => {
    c.close();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    runner.inner = new ScriptedRunner();
  });

  afterEach(() => {
    expect(runner.inner.unused()).toEqual([]);
  });

  const expand = (req: Partial<csi.NodeExpandVolumeRequest>): Promise<csi.NodeExpandVolumeResponse__Output> =>
    call(c.node, c.node.NodeExpandVolume, { volume_id: vol, ...req });
  const size = async (): Promise<number> => (await dm.getDevice(vol)).size;

  it('a path that is neither the staging path nor a publish target → NOT_FOUND naming what is there; nothing grows', async () => {
    const before = await size();
    const empty = join(dir, 'empty');
    const neither = `volume_path ${empty} is neither the staging path nor a publish target of volume ${vol}`;
    runner.inner.add(notMounted(empty));
    await expect(
      expand({ volume_path: empty, capacity_range: { required_bytes: String(400 * MiB) } }),
    ).rejects.toMatchObject({ code: grpc.status.NOT_FOUND, details: `${neither}: nothing is mounted there` });
    runner.inner.add(mountedAt(empty, '/dev/sdz', { fstype: 'xfs' }));
    await expect(
      expand({ volume_path: empty, capacity_range: { required_bytes: String(400 * MiB) } }),
    ).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: `${neither}: it has /dev/sdz (xfs) mounted, which is not this volume`,
    });
    await expect(
      expand({
        volume_path: empty,
        capacity_range: { required_bytes: String(400 * MiB) },
        volume_capability: blockCapability(),
      }),
    ).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: `${neither}: a raw block volume is expanded at its publish target, the device file`,
    });
    expect(await size()).toBe(before);
  });

  it('the staging path (after NodeStageVolume of a volume expanded offline) grows the filesystem', async () => {
    const staging = join(dir, 'empty');
    runner.inner.add(mountedAt(staging, dev), { command: 'resize2fs', args: [dev], exact: true });
    expect(
      await expand({
        volume_path: staging,
        staging_target_path: staging,
        capacity_range: { required_bytes: String(336 * MiB) },
        volume_capability: mountCapability(),
      }),
    ).toEqual({ capacity_bytes: String(336 * MiB) });
    expect(await size()).toBe(336 * MiB);
  });

  it('a read-only publish target of xfs is grown through the writable staging mount', async () => {
    const target = join(dir, 'empty');
    const staging = join(dir, 'staging');
    runner.inner.add(
      mountedAt(target, dev, { fstype: 'xfs', 'vfs-options': 'ro,relatime' }),
      mountedAt(staging, dev, { fstype: 'xfs' }),
      { command: 'xfs_growfs', args: ['-d', staging], exact: true },
    );
    expect(await expand({ volume_path: target, staging_target_path: staging })).toEqual({
      capacity_bytes: String(await size()),
    });
  });

  it('bad fields: an unsupported capability, a relative staging_target_path → INVALID_ARGUMENT', async () => {
    await expect(
      expand({ volume_path: dir, volume_capability: mountCapability('', [], 'MULTI_NODE_MULTI_WRITER') }),
    ).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details:
        'volume_capability.access_mode MULTI_NODE_MULTI_WRITER is not supported: PMEM volumes are local to one node; allowed: SINGLE_NODE_WRITER, SINGLE_NODE_READER_ONLY, SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER',
    });
    await expect(expand({ volume_path: dir, staging_target_path: 'rel/staging' })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details:
        'staging_target_path "rel/staging" is not allowed: CSI requires an absolute path without "." or ".." components, e.g. /var/lib/kubelet/pods/<pod uid>/volumes/... (a relative path would be resolved against the driver\'s working directory)',
    });
  });

  it('no room for the growth → OUT_OF_RANGE naming the growth, the free bytes and the node', async () => {
    const current = await size();
    runner.inner.add(mountedAt(dir, dev));
    await expect(
      expand({ volume_path: dir, capacity_range: { required_bytes: String(2 * GiB) } }),
    ).rejects.toMatchObject({
      code: grpc.status.OUT_OF_RANGE,
      details: `volume ${vol} on node ${TEST_NODE} cannot grow by ${2 * GiB - current} bytes (from ${current} to ${2 * GiB} bytes): only ${GiB - current} bytes are free for it on node ${TEST_NODE}, so it can grow to at most ${GiB} bytes`,
    });
    expect(await size()).toBe(current);
  });

  it('a growth the allocation unit would push above limit_bytes → OUT_OF_RANGE before device or filesystem grows', async () => {
    const current = await size();
    const record = await node.deps.state.get(vol);
    runner.inner.add(mountedAt(dir, dev)); // and no resize2fs: an unscripted call would fail the RPC otherwise
    await expect(
      expand({
        volume_path: dir,
        capacity_range: { required_bytes: String(current + MiB), limit_bytes: String(current + 2 * MiB) },
      }),
    ).rejects.toMatchObject({
      code: grpc.status.OUT_OF_RANGE,
      details: `volume ${vol} on node ${TEST_NODE} cannot grow to capacity_range.required_bytes ${current + MiB}: its device would have ${current + 4 * MiB} bytes (rounded up to the allocation unit of fake mode), above capacity_range.limit_bytes ${current + 2 * MiB}; it keeps its ${current} bytes`,
    });
    expect(await size()).toBe(current);
    expect(await node.deps.state.get(vol)).toEqual(record);
  });
});
