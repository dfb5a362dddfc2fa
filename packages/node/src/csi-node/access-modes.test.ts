// Access modes in NodePublishVolume, over real gRPC with the fake device manager and scripted mount
// tools (the mount table is scripted, so every case shows exactly which mounts the node saw):
// SINGLE_NODE_SINGLE_WRITER at a second target → FAILED_PRECONDITION naming the first, the same
// target again → OK; SINGLE_NODE_MULTI_WRITER and SINGLE_NODE_WRITER at several targets → OK
// without reading the mount table; SINGLE_NODE_READER_ONLY → mounted read-only even when `readonly`
// is false. Ephemeral inline volumes follow the same rules. Raw block volumes (whose publications
// are binds of a device node, which a fake device lacks) are covered for real in
// access-modes-emulated.test.ts.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import { FakeDeviceManager } from '../device/fake.js';
import { mountedAt, mountTable, notMounted, SwitchableRunner } from '../testing/scripted-mounts.js';
import {
  call,
  mountCapability,
  startTestNode,
  testClients,
  type TestClients,
  type TestNode,
} from '../testing/test-node.js';
import { ephemeralVolumeId } from '../volumes/volumes.js';
import { GiB, MiB, type csi } from '@pmem-csi/csi';

describe('NodePublishVolume access modes (fake devices, scripted mounts, real gRPC)', () => {
  let dir: string;
  let runner: SwitchableRunner;
  let node: TestNode;
  let c: TestClients;
  let vol: string;
  let dev: string;
  let staging: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-am-'));
    const dm = new FakeDeviceManager({ totalSize: GiB });
    await dm.setup();
    runner = new SwitchableRunner();
    node = await startTestNode({ dm, dir, runner });
    c = testClients(node.address);
    const created = await call(c.controller, c.controller.CreateVolume, {
      name: 'modes',
      capacity_range: { required_bytes: String(64 * MiB) },
      volume_capabilities: [mountCapability()],
    });
    vol = created.volume!.volume_id;
    dev = `/dev/fake/${vol}`;
    staging = join(dir, 'staging');
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

  const publish = (
    target: string,
    mode: Parameters<typeof mountCapability>[2],
    readonly = false,
  ): Promise<csi.NodePublishVolumeResponse__Output> =>
    call(c.node, c.node.NodePublishVolume, {
      volume_id: vol,
      staging_target_path: staging,
      target_path: target,
      volume_capability: mountCapability('', [], mode),
      readonly,
    });
  const bind = (target: string): ReturnType<typeof notMounted> => ({
    command: 'mount',
    args: ['--bind', staging, target],
    exact: true,
  });

  it('SINGLE_NODE_SINGLE_WRITER published elsewhere → FAILED_PRECONDITION naming the first target, nothing mounted', async () => {
    const first = join(dir, 'pods', 'a');
    const second = join(dir, 'pods', 'b');
    runner.inner.add(
      mountedAt(staging, dev),
      notMounted(second),
      // In mount order: the staging mount, an unrelated mount, the first publication, a second one.
      mountTable([
        { target: staging, source: dev },
        { target: '/srv', source: '/dev/sdz' },
        { target: first, source: dev },
        { target: join(dir, 'pods', 'c'), source: dev },
      ]),
    );
    await expect(publish(second, 'SINGLE_NODE_SINGLE_WRITER')).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      details: `volume ${vol} is already published at ${first}; its access mode SINGLE_NODE_SINGLE_WRITER allows one target_path per node, so it cannot also be published at ${second} (unpublish it there first)`,
    });
  });

  it('SINGLE_NODE_SINGLE_WRITER: the first target is mounted; the same target again → OK (idempotent)', async () => {
    const target = join(dir, 'pods', 'only');
    runner.inner.add(
      mountedAt(staging, dev),
      notMounted(target),
      // A subdirectory bind of the volume (not its root) and another device's mount are no publications.
      mountTable([
        { target: staging, source: dev },
        { target: '/mnt/sub', source: `${dev}[/sub]` },
        { target: '/srv', source: '/dev/sdz' },
      ]),
      bind(target),
    );
    await publish(target, 'SINGLE_NODE_SINGLE_WRITER');
    runner.inner.add(mountedAt(staging, dev), mountedAt(target, dev));
    await publish(target, 'SINGLE_NODE_SINGLE_WRITER');
  });

  it.each(['SINGLE_NODE_MULTI_WRITER', 'SINGLE_NODE_WRITER'] as const)(
    '%s at a second target → OK (the mount table is not read)',
    async (mode) => {
      const target = join(dir, 'pods', `multi-${mode}`);
      runner.inner.add(mountedAt(staging, dev), notMounted(target), bind(target));
      await publish(target, mode);
      expect(runner.inner.calls.filter((x) => x.args.includes('--list'))).toEqual([]);
    },
  );

  it('SINGLE_NODE_READER_ONLY with readonly=false → mounted read-only; a read-write mount there → ALREADY_EXISTS', async () => {
    const target = join(dir, 'pods', 'reader');
    runner.inner.add(mountedAt(staging, dev), notMounted(target), bind(target), {
      command: 'mount',
      args: ['-o', 'remount,bind,ro', target],
      exact: true,
    });
    await publish(target, 'SINGLE_NODE_READER_ONLY', false);
    runner.inner.add(mountedAt(staging, dev), mountedAt(target, dev, { 'vfs-options': 'ro,relatime' }));
    await publish(target, 'SINGLE_NODE_READER_ONLY', false);
    const rw = join(dir, 'pods', 'writer');
    runner.inner.add(mountedAt(staging, dev), mountedAt(rw, dev));
    await expect(publish(rw, 'SINGLE_NODE_READER_ONLY')).rejects.toMatchObject({
      code: grpc.status.ALREADY_EXISTS,
      details: `volume ${vol} is already published at ${rw} read-write; the request asks for read-only`,
    });
  });

  describe('ephemeral inline volumes', () => {
    const handle = 'csi-am-eph';
    const local = ephemeralVolumeId(handle);
    const context = { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' };
    const publishEphemeral = (
      target: string,
      mode: Parameters<typeof mountCapability>[2],
    ): Promise<csi.NodePublishVolumeResponse__Output> =>
      call(c.node, c.node.NodePublishVolume, {
        volume_id: handle,
        target_path: target,
        volume_capability: mountCapability('', [], mode),
        volume_context: context,
      });

    it('SINGLE_NODE_SINGLE_WRITER: a second target of the existing volume → FAILED_PRECONDITION; READER_ONLY mounts ro', async () => {
      const first = join(dir, 'eph', 'a');
      runner.inner.add(
        notMounted(first),
        { command: 'blkid', exitCode: 2 },
        { command: 'mkfs.ext4' },
        { command: 'mount', args: ['-t', 'ext4', '-o', 'ro', `/dev/fake/${local}`, first], exact: true },
      );
      await publishEphemeral(first, 'SINGLE_NODE_READER_ONLY');
      const second = join(dir, 'eph', 'b');
      runner.inner.add(notMounted(second), mountTable([{ target: first, source: `/dev/fake/${local}` }]));
      await expect(publishEphemeral(second, 'SINGLE_NODE_SINGLE_WRITER')).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `volume ${local} is already published at ${first}; its access mode SINGLE_NODE_SINGLE_WRITER allows one target_path per node, so it cannot also be published at ${second} (unpublish it there first)`,
      });
      runner.inner.add(
        mountedAt(first, `/dev/fake/${local}`),
        { command: 'umount', args: [first], exact: true },
        notMounted(first),
      );
      await call(c.node, c.node.NodeUnpublishVolume, { volume_id: handle, target_path: first });
      expect(await node.deps.state.get(local)).toBeUndefined();
    });
  });
});
