// Kata image files on real loop devices: made inside a mounted "volume" (an ext4 on a loop device,
// as a staged volume is), the header bytes where the kernel and tools look for them, the inner
// filesystem at 2 MiB mountable through a loop device with that offset and keeping its data, the
// loop devices found and detached again, and a partial image a crash left behind rebuilt. Needs
// root and loop devices; without them every case FAILS with the reason. Everything made here is
// removed in afterAll, also after failures.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import {
  access,
  constants,
  mkdir,
  mkdtemp,
  open,
  readFile,
  readdir,
  realpath,
  rm,
  stat,
  statfs,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostRunner } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';
import { attachImage, createImageFile, detachImage, imageLoopDevices, imagePath } from './image-file.js';
import { isDaxInfoBlock } from './layout.js';
import { ext4Geometry } from '../mount/filesystem.js';

const host = new HostRunner();
jest.setTimeout(120_000);

/** Why these tests cannot run here (empty when they can). */
async function prerequisites(): Promise<string[]> {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push(`they need root, running as uid ${String(process.getuid?.())}`);
  for (const tool of ['losetup', 'fallocate', 'mkfs.ext4', 'mkfs.xfs', 'mount', 'umount', 'blkid'])
    if (host.which(tool) === undefined) problems.push(`${tool} is not installed`);
  try {
    await access('/dev/loop-control', constants.R_OK | constants.W_OK);
  } catch (e) {
    problems.push(`no loop device support (/dev/loop-control: ${(e as Error).message})`);
  }
  return problems;
}

async function readAt(path: string, offset: number, length: number): Promise<Buffer> {
  const h = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    await h.read(buf, 0, length, offset);
    return buf;
  } finally {
    await h.close();
  }
}

describe('Kata image files on loop devices', () => {
  let root: string;
  const mounts: string[] = [];
  const loops: string[] = [];

  /** A mounted ext4 "volume" of `size` bytes (a sparse file on a loop device); returns its mount point. */
  async function volume(name: string, size: number): Promise<string> {
    const file = join(root, `${name}.vol`);
    await host.run('truncate', ['--size', String(size), file]);
    const dev = (await host.run('losetup', ['--find', '--show', file])).stdout.trim();
    loops.push(dev);
    await host.run('mkfs.ext4', ['-q', '-b', '4096', dev]);
    const dir = join(root, name);
    await mkdir(dir);
    await host.run('mount', [dev, dir]);
    mounts.push(dir);
    return dir;
  }

  async function mountInner(device: string, dir: string, fsType: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    await host.run('mount', ['-t', fsType, device, dir]);
    mounts.push(dir);
  }

  async function waitUntilUnbound(path: string): Promise<void> {
    const until = Date.now() + 10_000;
    while ((await imageLoopDevices(host, path)).length > 0 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 100));
    expect(await imageLoopDevices(host, path)).toEqual([]);
  }

  async function unmount(dir: string): Promise<void> {
    await host.run('umount', [dir]);
    mounts.splice(mounts.indexOf(dir), 1);
  }

  beforeAll(async () => {
    const problems = await prerequisites();
    if (problems.length > 0)
      throw new Error(`Kata image file tests cannot run on this machine: ${problems.join('; ')}`);
    root = await realpath(await mkdtemp(join(tmpdir(), 'pmem-kata-img-')));
  });

  afterAll(async () => {
    for (const dir of [...mounts].reverse()) await host.run('umount', [dir]).catch(() => undefined);
    for (const dir of [...mounts].reverse()) await host.run('umount', ['-l', dir]).catch(() => undefined);
    for (const dev of loops) await host.run('losetup', ['--detach', dev]).catch(() => undefined);
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  it('prerequisites: root, losetup, fallocate, mkfs.ext4/xfs, mount, blkid, /dev/loop-control', async () => {
    expect(await prerequisites()).toEqual([]);
  });

  it('ext4, filling the volume: header bytes, inner filesystem at 2 MiB, data kept across loop devices', async () => {
    const dir = await volume('ext4vol', 128 * MiB);
    const free = await statfs(dir);
    const img = await createImageFile(host, { volumeId: 'vol-ext4', dir, fsType: 'ext4' });
    expect(img).toMatchObject({ path: imagePath(dir), created: true });
    expect(img.sizeBytes % (2 * MiB)).toBe(0);
    // All the space left to the volume's users, less 64 blocks of reserve, rounded down to 2 MiB.
    expect(img.sizeBytes).toBe(Math.floor(((free.bavail - 64) * free.bsize) / (2 * MiB)) * 2 * MiB);
    expect(img.sizeBytes).toBeGreaterThan(80 * MiB); // of 128 MiB, less the journal and root's 5 %
    expect(img.dataBytes).toBe(img.sizeBytes - 2 * MiB);
    const st = await stat(img.path);
    expect(st.size).toBe(img.sizeBytes);
    expect(st.blocks * 512).toBeGreaterThanOrEqual(img.sizeBytes); // allocated, not sparse
    expect(await readdir(dir)).toEqual(['kata-containers-pmem-csi-vm.img', 'lost+found']);

    const mbr = await readAt(img.path, 0, 512);
    expect([mbr[510], mbr[511], mbr[446 + 4]]).toEqual([0x55, 0xaa, 0x83]);
    expect(mbr.readUInt32LE(446 + 8)).toBe(4096);
    expect(mbr.readUInt32LE(446 + 12)).toBe(img.dataBytes / 512);
    const info = await readAt(img.path, 4096, 4096);
    expect(info.toString('latin1', 0, 16)).toBe('NVDIMM_PFN_INFO\0');
    expect(info.readBigUInt64LE(56)).toBe(2097152n);
    expect(isDaxInfoBlock(info)).toBe(true);
    expect((await readAt(img.path, 2 * MiB + 0x438, 2)).readUInt16LE(0)).toBe(0xef53); // ext4 magic
    const blkid = await host.run('blkid', ['-p', '-o', 'export', img.path], { okExitCodes: [0, 2] });
    expect(blkid.stdout).toMatch(/^PTTYPE=dos$/m);

    const dev = await attachImage(host, img.path);
    loops.push(dev);
    expect(await attachImage(host, img.path)).toBe(dev); // same range: the same device
    expect(await imageLoopDevices(host, img.path)).toEqual([dev]);
    const inner = join(root, 'ext4-inner');
    await mountInner(dev, inner, 'ext4');
    // The filesystem fills the data area exactly (the loop device's size limit).
    expect(await ext4Geometry(host, dev)).toEqual({ blockCount: img.dataBytes / 4096, blockSize: 4096 });
    await writeFile(join(inner, 'hello'), 'from runc');
    await unmount(inner);
    expect(await detachImage(host, img.path)).toEqual([dev]);
    expect(await imageLoopDevices(host, img.path)).toEqual([]);

    const again = await attachImage(host, img.path);
    loops.push(again);
    await mountInner(again, inner, 'ext4');
    expect(await readFile(join(inner, 'hello'), 'utf8')).toBe('from runc');
    await unmount(inner);
    await detachImage(host, img.path);

    // A second create keeps the complete image (and its data).
    expect(await createImageFile(host, { volumeId: 'vol-ext4', dir, fsType: 'ext4' })).toEqual({
      ...img,
      created: false,
    });
  });

  it('xfs of a given size: the xfs superblock at 2 MiB, mountable through the offset loop device', async () => {
    const dir = await volume('xfsvol', 400 * MiB);
    const img = await createImageFile(host, { volumeId: 'vol-xfs', dir, fsType: 'xfs', sizeBytes: 321 * MiB });
    expect(img).toMatchObject({ sizeBytes: 320 * MiB, dataBytes: 318 * MiB, created: true });
    expect((await readAt(img.path, 2 * MiB, 4)).toString('latin1')).toBe('XFSB');
    const dev = await attachImage(host, img.path);
    loops.push(dev);
    const inner = join(root, 'xfs-inner');
    await mountInner(dev, inner, 'xfs');
    await writeFile(join(inner, 'x'), 'xfs data');
    await unmount(inner);
    expect(await detachImage(host, img.path)).toEqual([dev]);
  });

  it('detach waits until the kernel has let go of the image; while its filesystem is still mounted it fails naming the device', async () => {
    const dir = await volume('busyvol', 64 * MiB);
    const img = await createImageFile(host, { volumeId: 'vol-busy', dir, fsType: 'ext4' });
    const dev = await attachImage(host, img.path);
    loops.push(dev);
    const inner = join(root, 'busy-inner');
    await mountInner(dev, inner, 'ext4');
    // The mount keeps the loop device open: detaching only marks it; the image stays bound.
    await expect(detachImage(host, img.path, { settleMs: 500 })).rejects.toMatchObject({
      kind: 'FailedPrecondition',
      message: expect.stringContaining(`is still bound to ${dev}`),
    });
    expect(await imageLoopDevices(host, img.path)).toEqual([dev]);
    // Once nothing holds it, the marked device goes and the volume's filesystem unmounts at once.
    await unmount(inner);
    await waitUntilUnbound(img.path);
    await unmount(dir);
  });

  it('a partial image a crash left (with its mkfs loop device still bound) is detached, removed and rebuilt', async () => {
    const dir = await volume('crashvol', 64 * MiB);
    const partial = join(dir, '.kata-containers-pmem-csi-vm.img.partial');
    await host.run('fallocate', ['--length', String(16 * MiB), partial]);
    const stale = (await host.run('losetup', ['--find', '--show', '--offset', String(2 * MiB), partial])).stdout.trim();
    loops.push(stale);
    const img = await createImageFile(host, { volumeId: 'vol-crash', dir, fsType: 'ext4' });
    expect(img.created).toBe(true);
    expect(await readdir(dir)).toEqual(['kata-containers-pmem-csi-vm.img', 'lost+found']);
    const bound = (await host.run('losetup', ['--json', '--list', '--output', 'NAME,BACK-FILE'])).stdout;
    expect(bound).not.toContain(partial);
    expect(isDaxInfoBlock(await readAt(img.path, 4096, 4096))).toBe(true);
  });
});
