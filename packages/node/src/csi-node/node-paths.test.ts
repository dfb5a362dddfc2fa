// Path and option safety of the node service (issue 14, R5), over real gRPC with fake devices and
// scripted host tools: relative and dotted paths, system directories (also through symbolic links)
// and the driver's own state are refused before any tool runs; targets that already hold other
// content are refused; unpublish/unstage never unmount another volume or a host mount;
// NodeGetVolumeStats answers only for the volume's own mounts; mount flags cannot smuggle options.
// Each case would have caught the defect it names: before the fix these calls mounted, unmounted or
// answered.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdir, mkdtemp, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import { FakeDeviceManager } from '../device/fake.js';
import { mountedAt, notMounted, SwitchableRunner } from '../testing/scripted-mounts.js';
import {
  blockCapability,
  call,
  mountCapability,
  startTestNode,
  testClients,
  type TestClients,
  type TestNode,
} from '../testing/test-node.js';
import { MiB, type csi } from '@pmem-csi/csi';

const ABSOLUTE =
  'an absolute path without "." or ".." components, e.g. /var/lib/kubelet/pods/<pod uid>/volumes/... (a relative path would be resolved against the driver\'s working directory)';
const PROTECTED =
  ": the driver never mounts a volume on, or unmounts from, system directories or its own state. Allowed: a directory of the kubelet's pods or plugins, e.g. /var/lib/kubelet/pods/<pod uid>/volumes/...";

describe('node service: paths and mount options the CO hands us (fake devices, scripted tools)', () => {
  let dir: string;
  let runner: SwitchableRunner;
  let node: TestNode;
  let c: TestClients;
  let a: string;
  let b: string;

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'pmem-paths-')));
    const dm = new FakeDeviceManager({ totalSize: 1024 * MiB });
    await dm.setup();
    runner = new SwitchableRunner();
    node = await startTestNode({ dm, dir, runner });
    c = testClients(node.address);
    const create = async (name: string): Promise<string> =>
      (
        await call(c.controller, c.controller.CreateVolume, {
          name,
          capacity_range: { required_bytes: String(64 * MiB) },
          volume_capabilities: [mountCapability()],
        })
      ).volume!.volume_id;
    a = await create('vol-a');
    b = await create('vol-b');
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

  const stage = (req: Partial<csi.NodeStageVolumeRequest>): Promise<csi.NodeStageVolumeResponse__Output> =>
    call(c.node, c.node.NodeStageVolume, {
      volume_id: a,
      staging_target_path: join(dir, 'stage'),
      volume_capability: mountCapability(),
      ...req,
    });
  const unstage = (req: Partial<csi.NodeUnstageVolumeRequest>): Promise<csi.NodeUnstageVolumeResponse__Output> =>
    call(c.node, c.node.NodeUnstageVolume, { volume_id: a, staging_target_path: join(dir, 'stage'), ...req });
  const publish = (req: Partial<csi.NodePublishVolumeRequest>): Promise<csi.NodePublishVolumeResponse__Output> =>
    call(c.node, c.node.NodePublishVolume, {
      volume_id: a,
      staging_target_path: join(dir, 'stage'),
      target_path: join(dir, 'target'),
      volume_capability: mountCapability(),
      ...req,
    });
  const unpublish = (req: Partial<csi.NodeUnpublishVolumeRequest>): Promise<csi.NodeUnpublishVolumeResponse__Output> =>
    call(c.node, c.node.NodeUnpublishVolume, { volume_id: a, target_path: join(dir, 'target'), ...req });
  const stats = (req: Partial<csi.NodeGetVolumeStatsRequest>): Promise<csi.NodeGetVolumeStatsResponse__Output> =>
    call(c.node, c.node.NodeGetVolumeStats, { volume_id: a, volume_path: join(dir, 'target'), ...req });

  describe('relative and dotted paths → INVALID_ARGUMENT naming the field; no tool runs, nothing is created under the working directory', () => {
    const rel = `pmem-rel-${process.pid}`;
    const cases: Array<[string, () => Promise<unknown>, string]> = [
      [
        'NodeStageVolume staging_target_path',
        () => stage({ staging_target_path: rel }),
        `staging_target_path "${rel}" is not allowed: CSI requires ${ABSOLUTE}`,
      ],
      [
        'NodeStageVolume staging_target_path with ..',
        () => stage({ staging_target_path: '/var/lib/kubelet/../../etc' }),
        `staging_target_path "/var/lib/kubelet/../../etc" is not allowed: CSI requires ${ABSOLUTE}`,
      ],
      [
        'NodeUnstageVolume staging_target_path',
        () => unstage({ staging_target_path: `./${rel}` }),
        `staging_target_path "./${rel}" is not allowed: CSI requires ${ABSOLUTE}`,
      ],
      [
        'NodePublishVolume target_path',
        () => publish({ target_path: rel }),
        `target_path "${rel}" is not allowed: CSI requires ${ABSOLUTE}`,
      ],
      [
        'NodePublishVolume staging_target_path',
        () => publish({ staging_target_path: rel }),
        `staging_target_path "${rel}" is not allowed: CSI requires ${ABSOLUTE}`,
      ],
      [
        'NodeUnpublishVolume target_path',
        () => unpublish({ target_path: `${rel}/x` }),
        `target_path "${rel}/x" is not allowed: CSI requires ${ABSOLUTE}`,
      ],
      [
        'NodeGetVolumeStats staging_target_path',
        () => stats({ staging_target_path: rel }),
        `staging_target_path "${rel}" is not allowed: CSI requires ${ABSOLUTE}`,
      ],
      [
        'NodeExpandVolume volume_path',
        () => call(c.node, c.node.NodeExpandVolume, { volume_id: a, volume_path: rel }),
        `volume_path "${rel}" is not allowed: CSI requires ${ABSOLUTE}`,
      ],
    ];
    it.each(cases)('%s', async (_name, fn, details) => {
      await expect(fn()).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details });
      expect(runner.inner.calls).toEqual([]);
      await expect(stat(resolve(rel))).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('NodeGetVolumeStats with a relative volume_path → NOT_FOUND (csi-sanity asks "some/path"), never statfs of the working directory', async () => {
      await expect(stats({ volume_path: '.' })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume_path "." is not an absolute path, so volume ${a} is not staged or published there (CSI requires absolute paths)`,
      });
      await expect(stats({ volume_path: 'some/path' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
      expect(runner.inner.calls).toEqual([]);
    });
  });

  describe('system directories and the driver state → INVALID_ARGUMENT before any tool runs', () => {
    it.each([
      '/',
      '/etc',
      '/etc/kubernetes/manifests',
      '/usr',
      '/usr/lib',
      '/proc',
      '/proc/1/root',
      '/sys',
      '/dev',
      '/dev/shm',
      '/boot',
      '/var/lib/kubelet',
      '/var/lib/kubelet/pods',
      '/var/lib',
      '/tmp',
      '/root',
    ])('publish target_path %s', async (path) => {
      const dirOf: Record<string, string> = {
        '/etc/kubernetes/manifests': '/etc',
        '/usr/lib': '/usr',
        '/proc/1/root': '/proc',
        '/dev/shm': '/dev',
      };
      const protectedDir = dirOf[path] ?? path;
      const what =
        protectedDir === path ? `the protected directory ${path}` : `inside the protected directory ${protectedDir}`;
      await expect(publish({ target_path: path })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `target_path ${path} is ${what}${PROTECTED}`,
      });
      expect(runner.inner.calls).toEqual([]);
    });

    it('stage on /etc, unstage and unpublish of /proc and /sys: nothing is mounted or unmounted', async () => {
      await expect(stage({ staging_target_path: '/etc' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `staging_target_path /etc is the protected directory /etc${PROTECTED}`,
      });
      await expect(unstage({ staging_target_path: '/sys' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `staging_target_path /sys is the protected directory /sys${PROTECTED}`,
      });
      await expect(unpublish({ target_path: '/proc' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `target_path /proc is the protected directory /proc${PROTECTED}`,
      });
      await expect(unpublish({ target_path: '/' })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `target_path / is the protected directory /${PROTECTED}`,
      });
      expect(runner.inner.calls).toEqual([]);
    });

    it('a symbolic link that leads into a system directory is judged by where it leads', async () => {
      await mkdir(join(dir, 'links'), { recursive: true });
      await symlink('/etc', join(dir, 'links', 'etc'));
      await expect(publish({ target_path: join(dir, 'links', 'etc') })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `target_path ${join(dir, 'links', 'etc')} is the protected directory /etc (through a symbolic link it is /etc)${PROTECTED}`,
      });
      await expect(publish({ target_path: join(dir, 'links', 'etc', 'cron.d', 'pod') })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `target_path ${join(dir, 'links', 'etc', 'cron.d', 'pod')} is inside the protected directory /etc (through a symbolic link it is /etc/cron.d/pod)${PROTECTED}`,
      });
      expect(runner.inner.calls).toEqual([]);
    });

    it("the driver's volume records are no mount target", async () => {
      const records = join(dir, 'volumes');
      await expect(publish({ target_path: records })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `target_path ${records} is the protected directory ${records}${PROTECTED}`,
      });
      await expect(stage({ staging_target_path: join(records, 'x') })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `staging_target_path ${join(records, 'x')} is inside the protected directory ${records}${PROTECTED}`,
      });
    });
  });

  describe('targets that already hold other content → FAILED_PRECONDITION, nothing formatted or mounted', () => {
    it('a staging directory with files in it', async () => {
      const staging = join(dir, 'full-stage');
      await mkdir(staging, { recursive: true });
      await writeFile(join(staging, 'precious'), 'data');
      runner.inner.add(notMounted(staging));
      await expect(stage({ staging_target_path: staging })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `staging_target_path ${staging} is a directory that already holds 1 entry ("precious") and is not a mount of this volume; the driver mounts only on an empty directory`,
      });
    });

    it('a publish target directory with files in it, or a file where a directory belongs', async () => {
      const staging = join(dir, 'stage');
      const full = join(dir, 'full-target');
      await mkdir(full, { recursive: true });
      await Promise.all(['a', 'b', 'c', 'd'].map((f) => writeFile(join(full, f), f)));
      runner.inner.add(mountedAt(staging, `/dev/fake/${a}`), notMounted(full));
      await expect(publish({ target_path: full })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `target_path ${full} is a directory that already holds 4 entries ("a", "b", "c", ...) and is not a mount of this volume; the driver mounts only on an empty directory`,
      });
      const file = join(dir, 'a-file');
      await writeFile(file, 'config');
      runner.inner.add(mountedAt(staging, `/dev/fake/${a}`), notMounted(file));
      await expect(publish({ target_path: file })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `target_path ${file} is a file of 6 bytes and not a mount of this volume; a filesystem volume needs a missing path or an empty directory there`,
      });
    });

    it('a raw block target that is a non-empty file or a symbolic link', async () => {
      const file = join(dir, 'blk-file');
      await writeFile(file, 'not empty');
      runner.inner.add(notMounted(file));
      await expect(publish({ target_path: file, volume_capability: blockCapability() })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `target_path ${file} is a file of 9 bytes and not a mount of this volume; a raw block volume needs a missing path, an empty file or an empty directory there`,
      });
      const link = join(dir, 'blk-link');
      await symlink(file, link);
      runner.inner.add(notMounted(link));
      await expect(publish({ target_path: link, volume_capability: blockCapability() })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `target_path ${link} is a symbolic link and not a mount of this volume; a raw block volume needs a missing path, an empty file or an empty directory there`,
      });
    });

    it('an ephemeral volume is not created for an occupied target', async () => {
      const full = join(dir, 'full-eph');
      await mkdir(full, { recursive: true });
      await writeFile(join(full, 'x'), 'x');
      runner.inner.add(notMounted(full));
      const ctx = { 'csi.storage.k8s.io/ephemeral': 'true', size: '16Mi' };
      await expect(
        publish({ volume_id: 'csi-eph-paths', staging_target_path: '', target_path: full, volume_context: ctx }),
      ).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
      expect(await node.deps.dm.listDevices()).toHaveLength(2);
    });
  });

  describe('unpublish and unstage unmount only the volume itself', () => {
    it("another volume's mount or a host mount → FAILED_PRECONDITION, no umount", async () => {
      const target = join(dir, 'b-target');
      runner.inner.add(mountedAt(target, `/dev/fake/${b}`));
      await expect(unpublish({ target_path: target })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `target_path ${target} has /dev/fake/${b} (ext4) mounted and it is not volume ${a}; refusing to unmount it`,
      });
      const staging = join(dir, 'host-stage');
      runner.inner.add(mountedAt(staging, '/dev/sda1'));
      await expect(unstage({ staging_target_path: staging })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `staging_target_path ${staging} has /dev/sda1 (ext4) mounted and it is not volume ${a}; refusing to unmount it`,
      });
      runner.inner.add(mountedAt(target, `/dev/fake/${b}`));
      await expect(unpublish({ volume_id: 'no-such-volume', target_path: target })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: `target_path ${target} has /dev/fake/${b} (ext4) mounted and volume no-such-volume does not exist on this node; refusing to unmount it`,
      });
      expect(runner.inner.calls.filter((x) => x.command === 'umount')).toEqual([]);
    });
  });

  describe("NodeGetVolumeStats answers only for the volume's own mounts → NOT_FOUND otherwise, no usage disclosed", () => {
    it.each([
      ['/', '/dev/vda1', 'ext4'],
      ['/proc', 'proc', 'proc'],
    ])('volume_path %s (%s)', async (path, source, fstype) => {
      runner.inner.add(mountedAt(path, source, { fstype }));
      await expect(stats({ volume_path: path })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume_path ${path} is not where volume ${a} is staged or published`,
      });
    });

    it("another volume's mount", async () => {
      const other = join(dir, 'b-mount');
      await mkdir(other, { recursive: true });
      runner.inner.add(mountedAt(other, `/dev/fake/${b}`));
      await expect(stats({ volume_path: other })).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume_path ${other} is not where volume ${a} is staged or published`,
      });
      runner.inner.add(mountedAt(other, `/dev/fake/${b}`));
      const own = await stats({ volume_id: b, volume_path: other });
      expect(own.usage.map((u) => u.unit)).toEqual(['BYTES', 'INODES']);
    });
  });

  describe('mount flags that smuggle options → INVALID_ARGUMENT naming the flag, nothing mounted', () => {
    const F = 'volume_capability.mount.mount_flags';
    const MOUNT = 'the driver decides how volumes are mounted (no bind, remount, move or propagation options)';
    const HELPER =
      'mount(8) helper and userspace options (helper=, loop, X-mount.*, x-*, verity.*) are not passed through';
    const DEVICE =
      'options naming another device (journal_path, journal_dev, logdev, rtdev) are not allowed: a volume uses only its own device';
    it.each<[string[], string]>([
      [
        ['noatime,bind'],
        `${F}[0] "noatime,bind" is not a single mount option: one option per entry (no commas, spaces or quotes, not starting with "-"), e.g. "noatime"`,
      ],
      [['bind=1'], `${F}[0] "bind=1" is not allowed: ${MOUNT}`],
      [['noatime', 'Remount'], `${F}[1] "Remount" is not allowed: ${MOUNT}`],
      [['rshared'], `${F}[0] "rshared" is not allowed: ${MOUNT}`],
      [['X-mount.mkdir'], `${F}[0] "X-mount.mkdir" is not allowed: ${HELPER}`],
      [['X-mount.subdir=etc'], `${F}[0] "X-mount.subdir=etc" is not allowed: ${HELPER}`],
      [['x-systemd.automount'], `${F}[0] "x-systemd.automount" is not allowed: ${HELPER}`],
      [['helper=evil'], `${F}[0] "helper=evil" is not allowed: ${HELPER}`],
      [['uhelper=udisks2'], `${F}[0] "uhelper=udisks2" is not allowed: ${HELPER}`],
      [['loop=/dev/loop0'], `${F}[0] "loop=/dev/loop0" is not allowed: ${HELPER}`],
      [['offset=4096'], `${F}[0] "offset=4096" is not allowed: ${HELPER}`],
      [['verity.hashdevice=/dev/sda'], `${F}[0] "verity.hashdevice=/dev/sda" is not allowed: ${HELPER}`],
      [['journal_path=/dev/sda'], `${F}[0] "journal_path=/dev/sda" is not allowed: ${DEVICE}`],
      [['logdev=/dev/sdb'], `${F}[0] "logdev=/dev/sdb" is not allowed: ${DEVICE}`],
      [
        ['errors=panic'],
        `${F}[0] "errors=panic" is not allowed: a volume's filesystem errors must not panic the node; use errors=remount-ro or errors=continue`,
      ],
    ])('stage and publish with %j', async (flags, details) => {
      await expect(stage({ volume_capability: mountCapability('', flags) })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details,
      });
      await expect(publish({ volume_capability: mountCapability('', flags) })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details,
      });
      expect(runner.inner.calls).toEqual([]);
    });

    it('more than 4 KiB of flags in all', async () => {
      const flags = Array.from({ length: 9 }, () => 'x'.repeat(500));
      await expect(stage({ volume_capability: mountCapability('', flags) })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `${F} has 4500 bytes; CSI allows at most 4096 for the whole field`,
      });
    });
  });
});
