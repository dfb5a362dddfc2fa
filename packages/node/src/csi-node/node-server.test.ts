// The CSI Node and Identity services over real gRPC on a unix socket, with the fake device manager
// and a scripted command runner: required fields, NOT_FOUND/FAILED_PRECONDITION/ALREADY_EXISTS/
// OUT_OF_RANGE paths by exact code and message, and the exact tool calls of staging.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
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
  TEST_DRIVER,
  TEST_NODE,
  type TestClients,
  type TestNode,
} from '../testing/test-node.js';
import { ephemeralVolumeId } from '../volumes/volumes.js';
import { GiB, MiB, type csi } from '@pmem-csi/csi';

describe('node service (fake devices, scripted tools, real gRPC)', () => {
  let dir: string;
  let dm: FakeDeviceManager;
  let runner: SwitchableRunner;
  let node: TestNode;
  let c: TestClients;
  let vol: string;
  let big: string;
  let capable = true;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-ns-'));
    dm = new FakeDeviceManager({ totalSize: 4 * GiB });
    await dm.setup();
    runner = new SwitchableRunner();
    node = await startTestNode({ dm, dir, runner, hasCapability: async () => capable });
    c = testClients(node.address);
    const create = (name: string, size: number): Promise<csi.CreateVolumeResponse__Output> =>
      call(c.controller, c.controller.CreateVolume, {
        name,
        capacity_range: { required_bytes: String(size) },
        volume_capabilities: [mountCapability()],
      });
    vol = (await create('small', 64 * MiB)).volume!.volume_id;
    big = (await create('big', 320 * MiB)).volume!.volume_id;
  });

  afterAll(async () => {
    c.close();
    await node.stop();
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    runner.inner = new ScriptedRunner();
    runner.gate = undefined;
  });

  afterEach(() => {
    expect(runner.inner.unused()).toEqual([]);
  });

  const stage = (req: Partial<csi.NodeStageVolumeRequest>): Promise<csi.NodeStageVolumeResponse__Output> =>
    call(c.node, c.node.NodeStageVolume, {
      volume_id: vol,
      staging_target_path: join(dir, 'stage'),
      volume_capability: mountCapability(),
      ...req,
    });
  const publish = (req: Partial<csi.NodePublishVolumeRequest>): Promise<csi.NodePublishVolumeResponse__Output> =>
    call(c.node, c.node.NodePublishVolume, {
      volume_id: vol,
      staging_target_path: join(dir, 'stage'),
      target_path: join(dir, 'target'),
      volume_capability: mountCapability(),
      ...req,
    });

  describe('Identity and node info', () => {
    it('GetPluginInfo, GetPluginCapabilities, Probe', async () => {
      expect(await call(c.identity, c.identity.GetPluginInfo, {})).toEqual({
        name: TEST_DRIVER,
        vendor_version: 'test',
        manifest: {},
      });
      const caps = await call(c.identity, c.identity.GetPluginCapabilities, {});
      expect(caps.capabilities).toEqual([
        { service: { type: 'VOLUME_ACCESSIBILITY_CONSTRAINTS' }, type: 'service' },
        { volume_expansion: { type: 'ONLINE' }, type: 'volume_expansion' },
      ]);
      expect(await call(c.identity, c.identity.Probe, {})).toEqual({ ready: { value: true } });
    });

    it('NodeGetInfo: node id, topology, no volume limit', async () => {
      expect(await call(c.node, c.node.NodeGetInfo, {})).toEqual({
        node_id: TEST_NODE,
        max_volumes_per_node: '0',
        accessible_topology: { segments: { [`${TEST_DRIVER}/node`]: TEST_NODE } },
      });
    });

    it('NodeGetCapabilities', async () => {
      const res = await call(c.node, c.node.NodeGetCapabilities, {});
      expect(res.capabilities.map((x) => x.rpc?.type)).toEqual([
        'STAGE_UNSTAGE_VOLUME',
        'GET_VOLUME_STATS',
        'VOLUME_CONDITION',
        'SINGLE_NODE_MULTI_WRITER',
        'EXPAND_VOLUME',
      ]);
    });
  });

  describe('NodeStageVolume', () => {
    it.each([
      [{ volume_id: '' }, 'volume_id is required'],
      [{ staging_target_path: '' }, 'staging_target_path is required'],
      [{ volume_capability: null }, 'volume_capability is required'],
      [
        { volume_capability: mountCapability('btrfs') },
        'volume_capability.mount.fs_type "btrfs" is not supported; allowed: ext4, xfs (or empty for the default)',
      ],
      [
        { volume_capability: mountCapability('', [], 'MULTI_NODE_MULTI_WRITER') },
        'volume_capability.access_mode MULTI_NODE_MULTI_WRITER is not supported: PMEM volumes are local to one node; allowed: SINGLE_NODE_WRITER, SINGLE_NODE_READER_ONLY, SINGLE_NODE_SINGLE_WRITER, SINGLE_NODE_MULTI_WRITER',
      ],
      [
        { volume_capability: mountCapability('', ['noatime,remount']) },
        'volume_capability.mount.mount_flags[0] "noatime,remount" is not a single mount option: one option per entry (no commas, spaces or quotes, not starting with "-"), e.g. "noatime"',
      ],
      [
        { volume_capability: mountCapability('', ['dax', 'dax=always']) },
        'volume_capability.mount.mount_flags sets dax more than once (dax, dax=always); give at most one dax option (the driver adds "dax" itself when the device supports it)',
      ],
      [
        {
          volume_capability: {
            access_type: 'mount',
            mount: { volume_mount_group: '1000' },
            access_mode: { mode: 'SINGLE_NODE_WRITER' },
          },
        },
        'volume_capability.mount.volume_mount_group is not supported by this driver (no VOLUME_MOUNT_GROUP capability)',
      ],
    ] as Array<[Partial<csi.NodeStageVolumeRequest>, string]>)('%j → INVALID_ARGUMENT', async (req, details) => {
      await expect(stage(req)).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details });
    });

    it('unknown volume → NOT_FOUND', async () => {
      await expect(stage({ volume_id: 'nope-1' })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume nope-1 does not exist on node ${TEST_NODE}`,
      });
    });

    it('block volumes need no staging (no tool runs)', async () => {
      await expect(stage({ volume_capability: blockCapability() })).resolves.toEqual({});
      expect(runner.inner.calls).toEqual([]);
    });

    it('blank device, ext4: blkid, mkfs.ext4 with the DAX geometry, mount (no dax on a fake device)', async () => {
      const staging = join(dir, 'stage-ext4');
      runner.inner.add(
        notMounted(staging),
        { command: 'blkid', args: ['-p', '-o', 'export', `/dev/fake/${vol}`], exact: true, exitCode: 2 },
        {
          command: 'mkfs.ext4',
          args: ['-b', '4096', '-E', 'stride=512,stripe_width=512', '-F', `/dev/fake/${vol}`],
          exact: true,
        },
        { command: 'mount', args: ['-t', 'ext4', '-o', 'noatime', `/dev/fake/${vol}`, staging], exact: true },
      );
      await stage({ staging_target_path: staging, volume_capability: mountCapability('', ['noatime']) });
      expect((await stat(staging)).isDirectory()).toBe(true);
    });

    it('blank device, xfs ≥ 300 MiB: mkfs.xfs, mount, extent size hint', async () => {
      const staging = join(dir, 'stage-xfs');
      runner.inner.add(
        notMounted(staging),
        { command: 'blkid', exitCode: 2 },
        {
          command: 'mkfs.xfs',
          args: ['-b', 'size=4096', '-m', 'reflink=0', '-d', 'su=2m,sw=1,agcount=4', '-f', `/dev/fake/${big}`],
          exact: true,
        },
        { command: 'mount', args: ['-t', 'xfs', `/dev/fake/${big}`, staging], exact: true },
        { command: 'xfs_io', args: ['-c', 'extsize 2m', staging], exact: true },
      );
      await stage({ volume_id: big, staging_target_path: staging, volume_capability: mountCapability('xfs') });
    });

    it('xfs on a 64 MiB volume → OUT_OF_RANGE before any tool runs', async () => {
      const staging = join(dir, 'stage-small-xfs');
      runner.inner.add(notMounted(staging));
      await expect(
        stage({ staging_target_path: staging, volume_capability: mountCapability('xfs') }),
      ).rejects.toMatchObject({
        code: grpc.status.OUT_OF_RANGE,
        details: `volume "${vol}" has ${64 * MiB} bytes, but xfs needs at least ${300 * MiB} bytes (300 MiB); use ext4 or a larger volume`,
      });
    });

    it('an existing filesystem of another type → ALREADY_EXISTS, nothing formatted', async () => {
      const staging = join(dir, 'stage-other');
      runner.inner.add(notMounted(staging), { command: 'blkid', stdout: `DEVNAME=/dev/fake/${big}\nTYPE=xfs\n` });
      await expect(stage({ volume_id: big, staging_target_path: staging })).rejects.toMatchObject({
        code: grpc.status.ALREADY_EXISTS,
        details: `volume ${big}: device /dev/fake/${big} already holds a xfs filesystem; the request asks for ext4 (volume_capability.mount.fs_type)`,
      });
    });

    /** dumpe2fs -h of an ext4 with `blocks` 4 KiB blocks. */
    const superblock = (blocks: number): { command: string; args: string[]; exact: true; stdout: string } => ({
      command: 'dumpe2fs',
      args: ['-h', `/dev/fake/${vol}`],
      exact: true,
      stdout: `Filesystem volume name:   <none>\nBlock count:              ${blocks}\nBlock size:               4096\n`,
    });

    it('an existing filesystem of the same type is reused (no mkfs); an ext4 that fills its device is not touched', async () => {
      const staging = join(dir, 'stage-reuse');
      const size = (await dm.getDevice(vol)).size;
      runner.inner.add(notMounted(staging), { command: 'blkid', stdout: 'TYPE=ext4\n' }, superblock(size / 4096), {
        command: 'mount',
        args: ['-t', 'ext4', `/dev/fake/${vol}`, staging],
        exact: true,
      });
      await stage({ staging_target_path: staging });
      expect(runner.inner.calls.map((c) => c.command)).toEqual(['findmnt', 'blkid', 'dumpe2fs', 'mount']);
      expect(runner.inner.unused()).toEqual([]);
    });

    it('an ext4 smaller than its device (expanded while unstaged) is checked and grown before it is mounted', async () => {
      const staging = join(dir, 'stage-grow');
      const size = (await dm.getDevice(vol)).size;
      runner.inner.add(
        notMounted(staging),
        { command: 'blkid', stdout: 'TYPE=ext4\n' },
        superblock(size / 4096 - 1024),
        { command: 'e2fsck', args: ['-f', '-p', `/dev/fake/${vol}`], exact: true, exitCode: 1 }, // 1: errors corrected
        { command: 'resize2fs', args: [`/dev/fake/${vol}`], exact: true },
        { command: 'mount', args: ['-t', 'ext4', `/dev/fake/${vol}`, staging], exact: true },
      );
      await stage({ staging_target_path: staging });
      expect(runner.inner.calls.map((c) => c.command)).toEqual([
        'findmnt',
        'blkid',
        'dumpe2fs',
        'e2fsck',
        'resize2fs',
        'mount',
      ]);
      expect(runner.inner.unused()).toEqual([]);
    });

    it('when e2fsck finds errors it may not fix, the ext4 is mounted as it is (not grown, not made unmountable)', async () => {
      const staging = join(dir, 'stage-fsck-fails');
      const size = (await dm.getDevice(vol)).size;
      runner.inner.add(
        notMounted(staging),
        { command: 'blkid', stdout: 'TYPE=ext4\n' },
        superblock(size / 4096 - 1024),
        { command: 'e2fsck', args: ['-f', '-p', `/dev/fake/${vol}`], exact: true, exitCode: 4 },
        { command: 'mount', args: ['-t', 'ext4', `/dev/fake/${vol}`, staging], exact: true },
      );
      await stage({ staging_target_path: staging });
      expect(runner.inner.calls.map((c) => c.command)).toEqual(['findmnt', 'blkid', 'dumpe2fs', 'e2fsck', 'mount']);
      expect(runner.inner.unused()).toEqual([]);
    });

    it('an ext4 staged read-only (mount flag ro) is never grown: no dumpe2fs, e2fsck or resize2fs', async () => {
      const staging = join(dir, 'stage-ro');
      runner.inner.add(
        notMounted(staging),
        { command: 'blkid', stdout: 'TYPE=ext4\n' },
        { command: 'mount', args: ['-t', 'ext4', '-o', 'ro', `/dev/fake/${vol}`, staging], exact: true },
      );
      await stage({ staging_target_path: staging, volume_capability: mountCapability('', ['ro']) });
      expect(runner.inner.calls.map((c) => c.command)).toEqual(['findmnt', 'blkid', 'mount']);
    });

    it('already staged with this device → OK; with another device or fs type → ALREADY_EXISTS', async () => {
      const staging = join(dir, 'stage-again');
      runner.inner.add(mountedAt(staging, `/dev/fake/${vol}`));
      await stage({ staging_target_path: staging });
      runner.inner.add(mountedAt(staging, '/dev/sdz'));
      await expect(stage({ staging_target_path: staging })).rejects.toMatchObject({
        code: grpc.status.ALREADY_EXISTS,
        details: `staging_target_path ${staging} already has /dev/sdz (ext4) mounted, which is not volume ${vol}`,
      });
      runner.inner.add(mountedAt(staging, `/dev/fake/${vol}`));
      await expect(
        stage({ staging_target_path: staging, volume_capability: mountCapability('xfs') }),
      ).rejects.toMatchObject({
        code: grpc.status.ALREADY_EXISTS,
        details: `volume ${vol} is already staged at ${staging} as ext4; the request asks for xfs`,
      });
    });

    it('dax asked for on a device without dax → INVALID_ARGUMENT', async () => {
      const staging = join(dir, 'stage-dax');
      runner.inner.add(notMounted(staging));
      await expect(
        stage({ staging_target_path: staging, volume_capability: mountCapability('', ['dax']) }),
      ).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details:
          'volume_capability.mount.mount_flags asks for "dax", but this volume cannot use dax (emulated device or usage=FileIO); remove the option',
      });
    });

    it('a concurrent call on the same volume → ABORTED', async () => {
      const staging = join(dir, 'stage-conc');
      let open: () => void = () => undefined;
      runner.gate = new Promise((r) => (open = r));
      runner.inner.add(mountedAt(staging, `/dev/fake/${vol}`));
      const first = stage({ staging_target_path: staging });
      await new Promise((r) => setTimeout(r, 200));
      await expect(publish({})).rejects.toMatchObject({
        code: grpc.status.ABORTED,
        details: `an operation on volume "${vol}" is already in progress`,
      });
      open();
      await first;
    });
  });

  describe('NodeUnstageVolume', () => {
    it('required fields; a path that is not mounted → OK', async () => {
      await expect(call(c.node, c.node.NodeUnstageVolume, { staging_target_path: '/x' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'volume_id is required',
      });
      await expect(call(c.node, c.node.NodeUnstageVolume, { volume_id: vol })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'staging_target_path is required',
      });
      runner.inner.add(notMounted(join(dir, 'nothing')));
      await expect(
        call(c.node, c.node.NodeUnstageVolume, { volume_id: vol, staging_target_path: join(dir, 'nothing') }),
      ).resolves.toEqual({});
    });
  });

  describe('NodePublishVolume', () => {
    it.each([
      [{ volume_id: '' }, 'volume_id is required'],
      [{ target_path: '' }, 'target_path is required'],
      [{ volume_capability: null }, 'volume_capability is required'],
      [{ staging_target_path: '' }, 'staging_target_path is required'],
      [
        { volume_context: { 'csi.storage.k8s.io/ephemeral': 'true' } },
        'invalid ephemeral volume attributes: parameter "size" is required for ephemeral volumes (a Kubernetes quantity, e.g. 1Gi, 100Mi, 2G or 1073741824)',
      ],
      [
        { volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '1Gi', eraseafter: 'nah' } },
        'invalid ephemeral volume attributes: parameter "eraseafter": "nah" is not a boolean; allowed values: true, false',
      ],
      [
        {
          volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '1Gi' },
          volume_capability: blockCapability(),
        },
        'volume_capability must be a mount capability: ephemeral inline volumes are filesystems',
      ],
    ] as Array<[Partial<csi.NodePublishVolumeRequest>, string]>)('%j → INVALID_ARGUMENT', async (req, details) => {
      await expect(publish(req)).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details });
    });

    it('a target_path that is the staging path (as text) → INVALID_ARGUMENT; a raw block target ending in "/" too; no tool runs', async () => {
      const staging = join(dir, 'stage');
      for (const target of [staging, `${staging}/`, `${staging}//`])
        for (const volume_capability of [mountCapability(), blockCapability()])
          await expect(
            publish({ staging_target_path: staging, target_path: target, volume_capability }),
          ).rejects.toMatchObject({
            code: grpc.status.INVALID_ARGUMENT,
            details: `target_path ${target} is the staging_target_path; a volume is published at a path of its own`,
          });
      // Found by the node's CSI fuzz test: the block publish answered INTERNAL (EISDIR).
      const target = `${join(dir, 'pub', 'block-dir')}/`;
      await expect(publish({ target_path: target, volume_capability: blockCapability() })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `target_path ${target} ends in "/": a raw block volume is published on a file, not in a directory`,
      });
      expect(runner.inner.calls).toEqual([]);
    });

    it('unknown volume → NOT_FOUND', async () => {
      await expect(publish({ volume_id: 'nope-2' })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume nope-2 does not exist on node ${TEST_NODE}`,
      });
    });

    it('not staged → FAILED_PRECONDITION', async () => {
      runner.inner.add(notMounted(join(dir, 'stage')));
      await expect(publish({})).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `volume ${vol} is not staged at ${join(dir, 'stage')}: call NodeStageVolume first`,
      });
    });

    it('bind mount from the staging path, read-only by remount; already published the same way → OK; otherwise ALREADY_EXISTS', async () => {
      const staging = join(dir, 'stage');
      const target = join(dir, 'pub', 'target');
      runner.inner.add(
        mountedAt(staging, `/dev/fake/${vol}`),
        notMounted(target),
        { command: 'mount', args: ['--bind', staging, target], exact: true },
        { command: 'mount', args: ['-o', 'remount,bind,ro', target], exact: true },
      );
      await publish({ target_path: target, readonly: true });
      expect((await stat(target)).isDirectory()).toBe(true);
      runner.inner.add(
        mountedAt(staging, `/dev/fake/${vol}`),
        mountedAt(target, `/dev/fake/${vol}`, { 'vfs-options': 'ro,relatime' }),
      );
      await publish({ target_path: target, readonly: true });
      runner.inner.add(
        mountedAt(staging, `/dev/fake/${vol}`),
        mountedAt(target, `/dev/fake/${vol}`, { 'vfs-options': 'ro,relatime' }),
      );
      await expect(publish({ target_path: target, readonly: false })).rejects.toMatchObject({
        code: grpc.status.ALREADY_EXISTS,
        details: `volume ${vol} is already published at ${target} read-only; the request asks for read-write`,
      });
    });
  });

  describe('ephemeral inline volumes', () => {
    const ephemeral = { 'csi.storage.k8s.io/ephemeral': 'true', 'csi.storage.k8s.io/pod.name': 'pod-1', size: '16Mi' };

    it('publish creates, formats and mounts at the target; unpublish unmounts and deletes', async () => {
      const id = 'csi-eph-1';
      const local = ephemeralVolumeId(id); // device and record are kept under an id that fits every mode
      expect(local).toMatch(/^csi-ep-[0-9a-f]{56}$/);
      const target = join(dir, 'eph-1');
      runner.inner.add(
        notMounted(target),
        { command: 'blkid', args: ['-p', '-o', 'export', `/dev/fake/${local}`], exact: true, exitCode: 2 },
        {
          command: 'mkfs.ext4',
          args: ['-b', '4096', '-E', 'stride=512,stripe_width=512', '-F', `/dev/fake/${local}`],
          exact: true,
        },
        { command: 'mount', args: ['-t', 'ext4', '-o', 'ro', `/dev/fake/${local}`, target], exact: true },
      );
      await publish({
        volume_id: id,
        staging_target_path: '',
        target_path: target,
        volume_context: ephemeral,
        readonly: true,
      });
      expect(await dm.getDevice(local)).toMatchObject({ size: 16 * MiB });
      expect(await node.deps.state.get(local)).toMatchObject({ ephemeral: true, name: id, size: 16 * MiB });
      expect(await node.deps.state.get(id)).toBeUndefined();
      runner.inner.add(
        mountedAt(target, `/dev/fake/${local}`),
        { command: 'umount', args: [target], exact: true },
        notMounted(target),
      );
      await call(c.node, c.node.NodeUnpublishVolume, { volume_id: id, target_path: target });
      expect(dm.erasures.at(-1)).toEqual({ volumeId: local, bytes: 16 * MiB });
      expect(await node.deps.state.get(local)).toBeUndefined();
    });

    it('a failed mount removes the volume it created', async () => {
      const id = 'csi-eph-2';
      const local = ephemeralVolumeId(id);
      const target = join(dir, 'eph-2');
      runner.inner.add(
        notMounted(target),
        { command: 'blkid', exitCode: 2 },
        { command: 'mkfs.ext4' },
        { command: 'mount', exitCode: 32, stderr: 'mount: wrong fs type' },
        notMounted(target),
      );
      await expect(
        publish({ volume_id: id, staging_target_path: '', target_path: target, volume_context: ephemeral }),
      ).rejects.toMatchObject({
        code: grpc.status.INTERNAL,
        details: `mount -t ext4 /dev/fake/${local} ${target}: exit code 32: mount: wrong fs type`,
      });
      expect((await dm.listDevices()).map((d) => d.volumeId)).not.toContain(local);
      expect(await node.deps.state.get(local)).toBeUndefined();
    });

    it('a handle whose id is that of a persistent volume (CreateVolume of the same name) → ALREADY_EXISTS, volume kept', async () => {
      const handle = 'csi-eph-3';
      const created = await call(c.controller, c.controller.CreateVolume, {
        name: handle,
        capacity_range: { required_bytes: String(16 * MiB) },
        volume_capabilities: [mountCapability()],
      });
      const id = created.volume!.volume_id;
      expect(id).toBe(ephemeralVolumeId(handle));
      runner.inner.add(notMounted(join(dir, 'eph-3')));
      await expect(
        publish({
          volume_id: handle,
          staging_target_path: '',
          target_path: join(dir, 'eph-3'),
          volume_context: ephemeral,
        }),
      ).rejects.toMatchObject({
        code: grpc.status.ALREADY_EXISTS,
        details: `volume "${handle}" (id ${id}) already exists, but it is a persistent volume, not an ephemeral one`,
      });
      // NodeUnpublishVolume of the handle must not take the persistent volume with it.
      runner.inner.add(notMounted(join(dir, 'eph-3')));
      await call(c.node, c.node.NodeUnpublishVolume, { volume_id: handle, target_path: join(dir, 'eph-3') });
      expect(await node.deps.state.get(id)).toMatchObject({ name: handle });
      await call(c.controller, c.controller.DeleteVolume, { volume_id: id });
    });
  });

  describe('NodeUnpublishVolume', () => {
    it('required fields; missing target → OK; unmounts and removes the target', async () => {
      await expect(call(c.node, c.node.NodeUnpublishVolume, { target_path: '/x' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'volume_id is required',
      });
      await expect(call(c.node, c.node.NodeUnpublishVolume, { volume_id: vol })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'target_path is required',
      });
      runner.inner.add(notMounted(join(dir, 'gone')));
      await expect(
        call(c.node, c.node.NodeUnpublishVolume, { volume_id: vol, target_path: join(dir, 'gone') }),
      ).resolves.toEqual({});
      const target = join(dir, 'pub2');
      await mkdir(target);
      runner.inner.add(
        mountedAt(target, `/dev/fake/${vol}`),
        { command: 'umount', args: [target], exact: true },
        notMounted(target),
      );
      await call(c.node, c.node.NodeUnpublishVolume, { volume_id: vol, target_path: target });
      await expect(stat(target)).rejects.toMatchObject({ code: 'ENOENT' });
    });
  });

  describe('NodeGetVolumeStats', () => {
    it('required fields; unknown volume, missing path, not a mount → NOT_FOUND', async () => {
      const stats = (req: Partial<csi.NodeGetVolumeStatsRequest>): Promise<csi.NodeGetVolumeStatsResponse__Output> =>
        call(c.node, c.node.NodeGetVolumeStats, { volume_id: vol, volume_path: dir, ...req });
      await expect(stats({ volume_id: '' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'volume_id is required',
      });
      await expect(stats({ volume_path: '' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'volume_path is required',
      });
      await expect(stats({ volume_id: 'nope-3' })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume nope-3 does not exist on node ${TEST_NODE}`,
      });
      await expect(stats({ volume_path: join(dir, 'missing') })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume_path ${join(dir, 'missing')} does not exist`,
      });
      runner.inner.add(notMounted(dir));
      await expect(stats({})).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume_path ${dir} is not a mount point: volume ${vol} is not published there`,
      });
    });

    it('usage from statfs; abnormal when the filesystem turned read-only or the staging mount vanished', async () => {
      runner.inner.add(mountedAt(dir, `/dev/fake/${vol}`));
      const ok = await call(c.node, c.node.NodeGetVolumeStats, { volume_id: vol, volume_path: dir });
      expect(ok.volume_condition).toEqual({ abnormal: false, message: 'volume is mounted and writable' });
      const [bytes, inodes] = ok.usage;
      expect(bytes).toMatchObject({ unit: 'BYTES' });
      expect(Number(bytes!.total)).toBeGreaterThan(0);
      expect(Number(bytes!.used) + Number(bytes!.available)).toBeLessThanOrEqual(Number(bytes!.total));
      expect(inodes).toMatchObject({ unit: 'INODES' });
      runner.inner.add(mountedAt(dir, `/dev/fake/${vol}`, { 'fs-options': 'ro,errors=remount-ro' }));
      const ro = await call(c.node, c.node.NodeGetVolumeStats, { volume_id: vol, volume_path: dir });
      expect(ro.volume_condition).toEqual({
        abnormal: true,
        message: `the ext4 filesystem on /dev/fake/${vol} was switched to read-only (filesystem errors?); check the kernel log`,
      });
      runner.inner.add(mountedAt(dir, `/dev/fake/${vol}`), notMounted('/staging'));
      const gone = await call(c.node, c.node.NodeGetVolumeStats, {
        volume_id: vol,
        volume_path: dir,
        staging_target_path: '/staging',
      });
      expect(gone.volume_condition).toEqual({ abnormal: true, message: 'the staging mount at /staging vanished' });
    });
  });

  describe('NodeExpandVolume', () => {
    it('required fields, sizes, unknown volume and path', async () => {
      const expand = (req: Partial<csi.NodeExpandVolumeRequest>): Promise<csi.NodeExpandVolumeResponse__Output> =>
        call(c.node, c.node.NodeExpandVolume, {
          volume_id: vol,
          volume_path: dir,
          capacity_range: { required_bytes: String(128 * MiB) },
          ...req,
        });
      await expect(expand({ volume_id: '' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'volume_id is required',
      });
      await expect(expand({ volume_path: '' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'volume_path is required',
      });
      // capacity_range is optional: the volume is looked up first (csi-sanity: unknown volume → NOT_FOUND).
      await expect(expand({ volume_id: 'nope-5', capacity_range: null })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume nope-5 does not exist on node ${TEST_NODE}`,
      });
      await expect(expand({ volume_id: 'nope-4' })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume nope-4 does not exist on node ${TEST_NODE}`,
      });
      await expect(expand({ volume_path: join(dir, 'missing') })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume_path ${join(dir, 'missing')} does not exist`,
      });
    });

    it('without a capacity range grows only the filesystem, to the device size', async () => {
      const before = (await dm.getDevice(vol)).size;
      runner.inner.add(mountedAt(dir, `/dev/fake/${vol}`), {
        command: 'resize2fs',
        args: [`/dev/fake/${vol}`],
        exact: true,
      });
      const res = await call(c.node, c.node.NodeExpandVolume, {
        volume_id: vol,
        volume_path: dir,
        capacity_range: null,
      });
      expect(res).toEqual({ capacity_bytes: String(before) });
      expect((await dm.getDevice(vol)).size).toBe(before);
    });

    it('grows the device and runs resize2fs on a mounted ext4', async () => {
      runner.inner.add(mountedAt(dir, `/dev/fake/${vol}`), {
        command: 'resize2fs',
        args: [`/dev/fake/${vol}`],
        exact: true,
      });
      const res = await call(c.node, c.node.NodeExpandVolume, {
        volume_id: vol,
        volume_path: dir,
        capacity_range: { required_bytes: String(128 * MiB) },
      });
      expect(res).toEqual({ capacity_bytes: String(128 * MiB) });
      expect((await dm.getDevice(vol)).size).toBe(128 * MiB);
      expect((await node.deps.state.get(vol))?.size).toBe(128 * MiB);
    });

    it('ext4 without CAP_SYS_RESOURCE: resize2fs refused → FAILED_PRECONDITION naming the capability (the device still grows)', async () => {
      capable = false;
      try {
        runner.inner.add(mountedAt(dir, `/dev/fake/${vol}`), {
          command: 'resize2fs',
          args: [`/dev/fake/${vol}`],
          exact: true,
          exitCode: 1,
          stderr: 'resize2fs: Permission denied to resize filesystem\n',
        });
        await expect(
          call(c.node, c.node.NodeExpandVolume, {
            volume_id: vol,
            volume_path: dir,
            capacity_range: { required_bytes: String(132 * MiB) },
          }),
        ).rejects.toMatchObject({
          code: grpc.status.FAILED_PRECONDITION,
          details: `volume ${vol}: the device grew to ${132 * MiB} bytes, but growing a mounted ext4 filesystem needs CAP_SYS_RESOURCE, which the node driver lacks; run it privileged (or add SYS_RESOURCE) and retry, or stop the pods that use the volume: the node grows ext4 without it when the volume is staged next`,
        });
        expect((await dm.getDevice(vol)).size).toBe(132 * MiB);
      } finally {
        capable = true;
      }
    });

    it('xfs grows with xfs_growfs on the mount point', async () => {
      runner.inner.add(mountedAt(dir, `/dev/fake/${big}`, { fstype: 'xfs' }), {
        command: 'xfs_growfs',
        args: ['-d', dir],
        exact: true,
      });
      const res = await call(c.node, c.node.NodeExpandVolume, {
        volume_id: big,
        volume_path: dir,
        capacity_range: { required_bytes: String(400 * MiB) },
      });
      expect(res).toEqual({ capacity_bytes: String(400 * MiB) });
    });
  });
});
