// Probes of what the guest's devices really hold: DAX attributes and mount options of files, raw
// reads and writes of block devices (O_DIRECT, fsync), marker and zero checks of erased space, an
// exclusive hold like the managers' own check, and the PMEM regions and live namespaces of ndctl.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdtemp, open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MiB } from '@pmem-csi/csi';
import { expect } from '@jest/globals';
import { labelLessNamespace, type NdNamespace, type NdRegion } from '../ndctl.js';
import { PMEM_KIND, ndctl, runner } from './guest-env.js';

/** STATX_ATTR_DAX. */
export const DAX_ATTR = 0x200000n;

/** The statx attributes of a file, from `xfs_io -c 'statx -r'` (works on ext4 and xfs). */
async function statxAttributes(file: string): Promise<bigint> {
  const res = await runner.run('xfs_io', ['-c', 'statx -r', file]);
  const m = /stat\.attributes = (0x[0-9a-f]+)/.exec(res.stdout);
  if (m?.[1] === undefined) throw new Error(`xfs_io statx -r ${file} printed no attributes:\n${res.stdout}`);
  return BigInt(m[1]);
}

export async function isDaxFile(file: string): Promise<boolean> {
  return ((await statxAttributes(file)) & DAX_ATTR) !== 0n;
}

/** Mount options of the filesystem at `target` (from findmnt). */
export async function mountOptions(target: string): Promise<string[]> {
  const res = await runner.run('findmnt', ['-J', '-o', 'TARGET,SOURCE,FSTYPE,OPTIONS', '--mountpoint', target]);
  const fs = (JSON.parse(res.stdout) as { filesystems: Array<{ options: string }> }).filesystems[0];
  if (fs === undefined) throw new Error(`nothing mounted at ${target}`);
  return fs.options.split(',');
}

/** Write `data` at `offset` of an existing file or device and fsync it. */
export async function writeRaw(path: string, offset: number, data: Buffer): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.write(data, 0, data.length, offset);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Write `data` to a new file and fsync it. */
export async function writeSynced(file: string, data: Buffer): Promise<void> {
  await writeFile(file, '');
  await writeRaw(file, 0, data);
}

/** Read `length` bytes of a block device at `offset` with O_DIRECT (no stale page cache) via dd. */
export async function readRaw(device: string, offset: number, length: number): Promise<Buffer> {
  const tmp = join(await mkdtemp('/tmp/raw-'), 'data');
  await runner.run('dd', [
    `if=${device}`,
    `of=${tmp}`,
    'bs=1M',
    `skip=${offset}`,
    `count=${length}`,
    'iflag=direct,skip_bytes,count_bytes',
    'status=none',
  ]);
  return readFile(tmp);
}

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** A value as it reads back from a JSON file (undefined fields dropped). */
export const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

/** A 4 KiB block that identifies test data on the raw device. */
export const MARK = Buffer.alloc(4096, 'pmem-csi-qemu-tier-erase-marker/');

const ZEROS = Buffer.alloc(MiB);

/** Whether every byte is zero (chunked Buffer.equals: a per-byte JS callback is far too slow under TCG). */
export function isZero(buf: Buffer): boolean {
  for (let off = 0; off < buf.length; off += ZEROS.length) {
    const chunk = buf.subarray(off, off + ZEROS.length);
    if (!chunk.equals(ZEROS.subarray(0, chunk.length))) return false;
  }
  return true;
}

/** How many 4 KiB blocks of `buf` are MARK. */
export function countMarks(buf: Buffer): number {
  let n = 0;
  for (let off = 0; off + 4096 <= buf.length; off += 4096) if (buf.subarray(off, off + 4096).equals(MARK)) n++;
  return n;
}

/** One exclusive open holds a block device (the same check the managers make before erasing). */
export async function holdDevice(path: string): Promise<() => Promise<void>> {
  const fh = await open(path, constants.O_RDONLY | constants.O_EXCL);
  return () => fh.close();
}

export async function pmemRegions(): Promise<NdRegion[]> {
  return (await ndctl.listRegions()).filter((r) => r.type === 'pmem');
}

/**
 * Namespaces that hold something, sorted: idle seeds (size 0) are the kernel's bookkeeping and
 * differ after a reboot (seen: destroyed namespaces keep their name as idle seeds until then).
 */
export function liveNamespaces(list: readonly NdNamespace[]): NdNamespace[] {
  return list.filter((ns) => ns.size > 0).sort((a, b) => a.dev.localeCompare(b.dev));
}

/** How the blank regions of this guest are described in case names: the NVDIMMs' or the CXL devices'. */
export const BLANK_REGIONS = PMEM_KIND === 'cxl' ? 'labelled CXL' : 'label-less';

/**
 * A blank region's namespaces before the driver's setup(): label-less on the tier's NVDIMMs (one
 * label-less namespace spanning the region), an idle seed on a CXL region (labels, nothing in use).
 */
export function expectBlankRegion(namespaces: readonly NdNamespace[]): void {
  if (PMEM_KIND === 'cxl') {
    expect(labelLessNamespace(namespaces)).toBeUndefined();
    expect(namespaces.map((n) => [n.mode, n.size, n.enabled])).toEqual([['raw', 0, false]]);
  } else {
    expect(labelLessNamespace(namespaces)).toBeDefined();
  }
}
