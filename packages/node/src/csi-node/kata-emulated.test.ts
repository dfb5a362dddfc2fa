// Kata Containers volumes (kataContainers: "true", issue 26) on emulated PMEM, through gRPC: staging
// formats the volume and creates the Kata image file with its loop device; publishing mounts the
// image's filesystem from that loop device at the target (never dax), several times and read-only
// too; stats report the inner filesystem; growth, raw block and a dax mount flag are refused with
// the reason; a node that lost the loop device (restart) or the image (killed between staging's
// mount and the image) recovers at publish; unstage detaches, delete removes everything. Needs root
// and loop devices; without them every case FAILS with the reason. Everything is removed in afterAll.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdir, readdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HostRunner } from '@pmem-csi/runtime';
import { MiB, type csi } from '@pmem-csi/csi';
import { detachImage, imageLoopDevices, imagePath } from '../kata/image-file.js';
import { findMountAt } from '../mount/findmnt.js';
import { cleanUpHostDir } from '../testing/host-cleanup.js';
import { emulatedHostDir, startEmulatedNode } from '../testing/emulated-node.js';
import { blockCapability, call, mountCapability, type TestClients, type TestNode } from '../testing/test-node.js';
import { ephemeralVolumeId } from '../volumes/volumes.js';

const host = new HostRunner();
jest.setTimeout(180_000);

describe('Kata Containers volumes on emulated PMEM (root, loop devices)', () => {
  let dir = '';
  let node: TestNode | undefined;
  let c: TestClients;
  const stagings: string[] = [];
  const targets: string[] = [];

  beforeAll(async () => {
    dir = await emulatedHostDir(host, 'Kata emulated tests', 'pmem-csi-kata-');
    ({ node, c } = await startEmulatedNode(host, dir, 1024 * MiB));
  });

  afterAll(async () => {
    // The image's mounts and loop devices first: the host-dir clean-up knows only the emulated ones.
    for (const t of targets) await host.run('umount', [t]).catch(() => undefined);
    for (const s of stagings) await detachImage(host, imagePath(s)).catch(() => undefined);
    c?.close();
    await node?.stop();
    if (dir !== '') await cleanUpHostDir(host, dir);
  });

  const create = async (name: string, size: number): Promise<string> =>
    (
      await call(c.controller, c.controller.CreateVolume, {
        name,
        capacity_range: { required_bytes: String(size) },
        volume_capabilities: [mountCapability()],
        parameters: { kataContainers: 'true' },
      })
    ).volume!.volume_id;
  const stage = (volume_id: string, staging: string, cap = mountCapability()): Promise<unknown> => {
    if (!stagings.includes(staging)) stagings.push(staging);
    return call(c.node, c.node.NodeStageVolume, { volume_id, staging_target_path: staging, volume_capability: cap });
  };
  const publish = (req: Partial<csi.NodePublishVolumeRequest>): Promise<unknown> => {
    if (req.target_path !== undefined && !targets.includes(req.target_path)) targets.push(req.target_path);
    return call(c.node, c.node.NodePublishVolume, req);
  };
  const unpublish = (volume_id: string, target_path: string): Promise<unknown> =>
    call(c.node, c.node.NodeUnpublishVolume, { volume_id, target_path });
  const unstage = (volume_id: string, staging: string): Promise<unknown> =>
    call(c.node, c.node.NodeUnstageVolume, { volume_id, staging_target_path: staging });
  const stats = (volume_id: string, volume_path: string): Promise<csi.NodeGetVolumeStatsResponse__Output> =>
    call(c.node, c.node.NodeGetVolumeStats, { volume_id, volume_path });

  it('stage → image + loop device; publish → inner filesystem at the targets without dax; stats, refusals, unstage, delete', async () => {
    const id = await create('kata-ext4', 128 * MiB);
    const staging = join(dir, 'stage-ext4');
    const paths = [join(dir, 'target-a'), join(dir, 'target-b'), join(dir, 'target-ro')] as const;
    await stage(id, staging);
    await stage(id, staging); // idempotent
    const image = imagePath(staging);
    const loops = await imageLoopDevices(host, image);
    expect(loops).toHaveLength(1);
    expect((await readdir(staging)).sort()).toEqual(['kata-containers-pmem-csi-vm.img', 'lost+found']);

    await publish({
      volume_id: id,
      staging_target_path: staging,
      target_path: paths[0],
      volume_capability: mountCapability(),
    });
    await publish({
      volume_id: id,
      staging_target_path: staging,
      target_path: paths[0],
      volume_capability: mountCapability(),
    });
    await publish({
      volume_id: id,
      staging_target_path: staging,
      target_path: paths[1],
      volume_capability: mountCapability(),
    });
    await publish({
      volume_id: id,
      staging_target_path: staging,
      target_path: paths[2],
      volume_capability: mountCapability(),
      readonly: true,
    });
    expect(await imageLoopDevices(host, image)).toEqual(loops); // one loop device for every target
    for (const t of paths) {
      const m = await findMountAt(host, t);
      expect(m).toMatchObject({ source: loops[0], fstype: 'ext4' });
      expect(m?.options.some((o) => o.startsWith('dax'))).toBe(false);
    }
    expect((await findMountAt(host, paths[2]))?.vfsOptions).toContain('ro');
    await writeFile(join(paths[0], 'runc'), 'through the loop device');
    expect(await readFile(join(paths[1], 'runc'), 'utf8')).toBe('through the loop device');

    // Stats: the inner filesystem at a target, the volume's own at the staging path.
    const inner = await stats(id, paths[0]);
    const innerFs = await statfs(paths[0]);
    expect(inner.usage[0]).toMatchObject({ unit: 'BYTES', total: String(innerFs.blocks * innerFs.bsize) });
    const outer = await stats(id, staging);
    expect(Number(inner.usage[0]?.total)).toBeLessThan(Number(outer.usage[0]?.total));
    expect(inner.volume_condition).toMatchObject({ abnormal: false });

    // Refusals, each naming the reason.
    await expect(
      publish({
        volume_id: id,
        staging_target_path: staging,
        target_path: join(dir, 'blk'),
        volume_capability: blockCapability(),
      }),
    ).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: `volume_capability: volume ${id} has kataContainers "true", which needs a filesystem (the Kata image file lives in it); raw block access is not possible, use a mount capability`,
    });
    await expect(stage(id, join(dir, 'stage-blk'), blockCapability())).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
    await expect(
      publish({
        volume_id: id,
        staging_target_path: staging,
        target_path: join(dir, 'target-dax'),
        volume_capability: mountCapability('', ['dax']),
      }),
    ).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: expect.stringMatching(/loop device, which has no DAX/),
    });
    await expect(
      call(c.controller, c.controller.ControllerExpandVolume, {
        volume_id: id,
        capacity_range: { required_bytes: String(256 * MiB) },
      }),
    ).rejects.toMatchObject({
      code: grpc.status.OUT_OF_RANGE,
      details: `volume ${id} on node node-1 has kataContainers "true": its Kata Containers image file has a fixed size, so the volume cannot grow from ${128 * MiB} to ${256 * MiB} bytes; create a larger volume and copy the data`,
    });

    for (const t of paths) await unpublish(id, t);
    for (const t of paths) expect(await findMountAt(host, t)).toBeUndefined();
    expect(await imageLoopDevices(host, image)).toEqual(loops); // staged: still attached
    await unstage(id, staging);
    expect(await findMountAt(host, staging)).toBeUndefined();
    expect((await host.run('losetup', ['--json', '--list'])).stdout).not.toContain('kata-containers-pmem-csi-vm.img');
    await call(c.controller, c.controller.DeleteVolume, { volume_id: id });
  });

  it('recovers: a loop device lost after staging (restart) and an image missing after the staging mount (killed midway)', async () => {
    const id = await create('kata-crash', 64 * MiB);
    const staging = join(dir, 'stage-crash');
    const target = join(dir, 'target-crash');
    await stage(id, staging);
    const image = imagePath(staging);
    for (const loop of await imageLoopDevices(host, image)) await host.run('losetup', ['--detach', loop]);
    await publish({
      volume_id: id,
      staging_target_path: staging,
      target_path: target,
      volume_capability: mountCapability(),
    });
    await writeFile(join(target, 'kept'), 'data');
    await unpublish(id, target);

    // Killed between the staging mount and the image: no image, no loop device.
    for (const loop of await imageLoopDevices(host, image)) await host.run('losetup', ['--detach', loop]);
    await rm(image);
    await publish({
      volume_id: id,
      staging_target_path: staging,
      target_path: target,
      volume_capability: mountCapability(),
    });
    expect(await imageLoopDevices(host, image)).toHaveLength(1);
    expect(await readdir(target)).toEqual(['lost+found']); // a fresh image
    await unpublish(id, target);
    await unstage(id, staging);
    await call(c.controller, c.controller.DeleteVolume, { volume_id: id });
  });

  it('ephemeral inline: publish mounts the volume next to the target, the image filesystem at the target; unpublish removes all', async () => {
    const handle = 'csi-kata-ephemeral';
    const target = join(dir, 'pod', 'eph-target');
    const req = {
      volume_id: handle,
      target_path: target,
      volume_capability: mountCapability(),
      volume_context: { 'csi.storage.k8s.io/ephemeral': 'true', size: '64Mi', kataContainers: 'true' },
    };
    await mkdir(join(dir, 'pod'));
    await publish(req);
    await publish(req); // idempotent
    const local = ephemeralVolumeId(handle);
    const holder = join(dir, 'pod', `.pmem-csi-kata-${local}`);
    stagings.push(holder);
    const loops = await imageLoopDevices(host, imagePath(holder));
    expect(loops).toHaveLength(1);
    expect(await findMountAt(host, target)).toMatchObject({ source: loops[0], fstype: 'ext4' });
    await writeFile(join(target, 'eph'), 'ephemeral kata');
    const s = await stats(handle, target);
    expect(Number(s.usage[0]?.total)).toBeLessThan(64 * MiB);
    await unpublish(handle, target);
    expect(await readdir(join(dir, 'pod'))).toEqual([]);
    expect((await host.run('losetup', ['--json', '--list'])).stdout).not.toContain(holder);
    expect(await node!.deps.state.get(local)).toBeUndefined();
  });

  it('xfs inside the image', async () => {
    const id = await create('kata-xfs', 400 * MiB);
    const staging = join(dir, 'stage-xfs');
    const target = join(dir, 'target-xfs');
    await stage(id, staging, mountCapability('xfs'));
    await publish({
      volume_id: id,
      staging_target_path: staging,
      target_path: target,
      volume_capability: mountCapability('xfs'),
    });
    expect(await findMountAt(host, target)).toMatchObject({ fstype: 'xfs' });
    await writeFile(join(target, 'x'), 'xfs');
    await unpublish(id, target);
    await unstage(id, staging);
    await call(c.controller, c.controller.DeleteVolume, { volume_id: id });
  });
});
