// Volume growth on emulated PMEM for real (root, loop devices): what the pod sees grows with the
// volume — the loop device's capacity (`losetup --set-capacity`), so a published raw block volume
// is bigger at once, and the filesystem after NodeExpandVolume, also on the staging path after an
// offline expansion (ControllerExpandVolume while nothing was staged, then NodeStageVolume, then
// NodeExpandVolume on the staging path, as the kubelet does). Data written before the growth stays.
// Online ext4 growth needs CAP_SYS_RESOURCE (node-emulated.test.ts proves the refusal where the host
// lacks it); an ext4 expanded offline is grown at NodeStageVolume, before it is mounted, which needs
// no capability: that case runs for real everywhere.
// Without root or loop devices every case FAILS with the reason (never skips).
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { open, readFile, stat, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HostRunner } from '@pmem-csi/runtime';
import { GiB, MiB, type csi } from '@pmem-csi/csi';
import { cleanUpHostDir } from '../testing/host-cleanup.js';
import { emulatedHostDir, startEmulatedNode } from '../testing/emulated-node.js';
import { blockCapability, call, mountCapability, type TestClients, type TestNode } from '../testing/test-node.js';

const host = new HostRunner();
jest.setTimeout(180_000);

/** Size in bytes of the block device behind a device node (or a file it is bound onto), from sysfs. */
async function blockDeviceSize(path: string): Promise<number> {
  const rdev = BigInt((await stat(path)).rdev);
  const major = ((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn);
  const minor = (rdev & 0xffn) | ((rdev >> 12n) & ~0xffn);
  const sectors = await readFile(`/sys/dev/block/${major}:${minor}/size`, 'utf8');
  return Number(sectors.trim()) * 512;
}

async function filesystemBytes(path: string): Promise<number> {
  const s = await statfs(path);
  return s.blocks * s.bsize;
}

describe('volume growth on emulated PMEM (root, loop devices, real filesystems)', () => {
  let dir = '';
  let node: TestNode | undefined;
  let c: TestClients;

  beforeAll(async () => {
    dir = await emulatedHostDir(host, 'emulated node tests', 'pmem-csi-grow-');
    ({ node, c } = await startEmulatedNode(host, dir, GiB));
  });

  afterAll(async () => {
    c?.close();
    await node?.stop();
    if (dir !== '') await cleanUpHostDir(host, dir);
  });

  async function createVolume(name: string, size: number, cap: csi.VolumeCapability): Promise<string> {
    const res = await call(c.controller, c.controller.CreateVolume, {
      name,
      capacity_range: { required_bytes: String(size) },
      volume_capabilities: [cap],
    });
    return res.volume!.volume_id;
  }
  const controllerExpand = (
    volume_id: string,
    size: number,
    cap: csi.VolumeCapability,
  ): Promise<csi.ControllerExpandVolumeResponse__Output> =>
    call(c.controller, c.controller.ControllerExpandVolume, {
      volume_id,
      capacity_range: { required_bytes: String(size) },
      volume_capability: cap,
    });
  const nodeExpand = (req: Partial<csi.NodeExpandVolumeRequest>): Promise<csi.NodeExpandVolumeResponse__Output> =>
    call(c.node, c.node.NodeExpandVolume, req);
  const stage = (volume_id: string, staging: string, cap: csi.VolumeCapability): Promise<unknown> =>
    call(c.node, c.node.NodeStageVolume, { volume_id, staging_target_path: staging, volume_capability: cap });
  const unstage = (volume_id: string, staging: string): Promise<unknown> =>
    call(c.node, c.node.NodeUnstageVolume, { volume_id, staging_target_path: staging });
  const publish = (req: Partial<csi.NodePublishVolumeRequest>): Promise<unknown> =>
    call(c.node, c.node.NodePublishVolume, req);
  const unpublish = (volume_id: string, target_path: string): Promise<unknown> =>
    call(c.node, c.node.NodeUnpublishVolume, { volume_id, target_path });

  it('raw block: a published device grows at once (loop capacity), data at the old end kept, the new end writable', async () => {
    const cap = blockCapability();
    const id = await createVolume('grow-block', 32 * MiB, cap);
    const target = join(dir, 'block', 'pod', 'dev');
    await publish({
      volume_id: id,
      staging_target_path: join(dir, 'block', 'staging'),
      target_path: target,
      volume_capability: cap,
    });
    expect(await blockDeviceSize(target)).toBe(32 * MiB);
    const fh = await open(target, 'r+');
    try {
      await fh.write(Buffer.alloc(4096, 0x5a), 0, 4096, 32 * MiB - 4096);
      await fh.sync();
      expect(await controllerExpand(id, 64 * MiB, cap)).toEqual({
        capacity_bytes: String(64 * MiB),
        node_expansion_required: false,
      });
      expect(await blockDeviceSize(target)).toBe(64 * MiB);
      expect(await nodeExpand({ volume_id: id, volume_path: target, volume_capability: cap })).toEqual({
        capacity_bytes: String(64 * MiB),
      });
      await fh.write(Buffer.alloc(4096, 0xa5), 0, 4096, 64 * MiB - 4096);
      await fh.sync();
      const old = Buffer.alloc(4096);
      await fh.read(old, 0, 4096, 32 * MiB - 4096);
      const grown = Buffer.alloc(4096);
      await fh.read(grown, 0, 4096, 64 * MiB - 4096);
      expect([old[0], old[4095], grown[0], grown[4095]]).toEqual([0x5a, 0x5a, 0xa5, 0xa5]);
    } finally {
      await fh.close();
    }
    await unpublish(id, target);
    await call(c.controller, c.controller.DeleteVolume, { volume_id: id });
  });

  it('xfs expanded offline: NodeExpandVolume on the staging path grows the filesystem; the data and the publish target see it', async () => {
    const cap = mountCapability('xfs');
    const id = await createVolume('grow-xfs-offline', 320 * MiB, cap);
    const staging = join(dir, 'xfs', 'staging');
    const target = join(dir, 'xfs', 'pod');
    await stage(id, staging, cap);
    await writeFile(join(staging, 'kept'), 'before the growth');
    const small = await filesystemBytes(staging);
    await unstage(id, staging);
    expect(await controllerExpand(id, 448 * MiB, cap)).toEqual({
      capacity_bytes: String(448 * MiB),
      node_expansion_required: true,
    });
    await stage(id, staging, cap);
    expect(await filesystemBytes(staging)).toBe(small); // staged, not grown yet
    expect(
      await nodeExpand({ volume_id: id, volume_path: staging, staging_target_path: staging, volume_capability: cap }),
    ).toEqual({ capacity_bytes: String(448 * MiB) });
    const grown = await filesystemBytes(staging);
    expect(grown - small).toBeGreaterThan(120 * MiB);
    await publish({ volume_id: id, staging_target_path: staging, target_path: target, volume_capability: cap });
    expect(await filesystemBytes(target)).toBe(grown);
    expect(await readFile(join(target, 'kept'), 'utf8')).toBe('before the growth');
    await unpublish(id, target);
    await unstage(id, staging);
    await call(c.controller, c.controller.DeleteVolume, { volume_id: id });
  });

  it('ext4 expanded offline: NodeStageVolume grows it before mounting (no CAP_SYS_RESOURCE needed), NodeExpandVolume on the staging path then has nothing left to do', async () => {
    const cap = mountCapability('ext4');
    const id = await createVolume('grow-ext4-offline', 64 * MiB, cap);
    const staging = join(dir, 'ext4', 'staging');
    await stage(id, staging, cap);
    await writeFile(join(staging, 'kept'), 'before the growth');
    const small = await filesystemBytes(staging);
    await unstage(id, staging);
    await controllerExpand(id, 128 * MiB, cap);
    await stage(id, staging, cap);
    // Grown at staging (e2fsck -f -p, resize2fs on the unmounted device): works without the capability.
    const grown = await filesystemBytes(staging);
    expect(grown - small).toBeGreaterThan(60 * MiB);
    expect(await nodeExpand({ volume_id: id, volume_path: staging, staging_target_path: staging })).toEqual({
      capacity_bytes: String(128 * MiB),
    });
    expect(await filesystemBytes(staging)).toBe(grown);
    expect(await readFile(join(staging, 'kept'), 'utf8')).toBe('before the growth');
    // Staged again with nothing to grow: mounted as it is, nothing changes.
    await unstage(id, staging);
    await stage(id, staging, cap);
    expect(await filesystemBytes(staging)).toBe(grown);
    await unstage(id, staging);
    await call(c.controller, c.controller.DeleteVolume, { volume_id: id });
  });

  it('a directory that is neither staging path nor publish target → NOT_FOUND, the device not grown', async () => {
    const cap = mountCapability('ext4');
    const id = await createVolume('grow-nowhere', 32 * MiB, cap);
    const staging = join(dir, 'nowhere', 'staging');
    await stage(id, staging, cap);
    const elsewhere = join(dir, 'nowhere');
    await expect(
      nodeExpand({ volume_id: id, volume_path: elsewhere, capacity_range: { required_bytes: String(64 * MiB) } }),
    ).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: `volume_path ${elsewhere} is neither the staging path nor a publish target of volume ${id}: nothing is mounted there`,
    });
    expect((await node!.deps.dm.getDevice(id)).size).toBe(32 * MiB);
    await unstage(id, staging);
    await call(c.controller, c.controller.DeleteVolume, { volume_id: id });
  });
});
