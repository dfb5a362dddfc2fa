// The bytes of a Kata image file's header, checked field by field against the kernel's struct
// nd_pfn_sb (README.md), with the checksum recomputed here independently; and the refusals of
// createImageFile that need no host tool (too small, xfs below its minimum, a foreign file).
import { describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedRunner } from '@pmem-csi/runtime/testing';
import { FailedPreconditionError, MiB, OutOfRangeError } from '@pmem-csi/csi';
import { createImageFile, innerMkfsCommand } from './image-file.js';
import { alignImageSize, daxInfoBlock, fletcher64, isDaxInfoBlock, masterBootRecord } from './layout.js';

/** nd_fletcher64 written out again, on plain numbers split into 32-bit halves (no shared code). */
function referenceChecksum(block: Buffer): bigint {
  const copy = Buffer.from(block);
  copy.fill(0, 4088, 4096);
  let lo = 0n;
  let hi = 0n;
  for (let i = 0; i < 4096; i += 4) {
    lo = (lo + BigInt(copy.readUInt32LE(i))) % 2n ** 32n;
    hi = hi + lo;
  }
  return (hi * 2n ** 32n + lo) % 2n ** 64n;
}

describe('DAX info block (struct nd_pfn_sb)', () => {
  const block = daxInfoBlock();

  it('is 4096 bytes: signature, version 0.2, dataoff 2 MiB, mode RAM, align 2 MiB, the rest zero', () => {
    expect(block.length).toBe(4096);
    expect(block.subarray(0, 16)).toEqual(Buffer.from('NVDIMM_PFN_INFO\0', 'latin1'));
    expect(block.subarray(16, 52)).toEqual(Buffer.alloc(36)); // uuid, parent_uuid, flags
    expect(block.readUInt16LE(52)).toBe(0);
    expect(block.readUInt16LE(54)).toBe(2);
    expect(block.readBigUInt64LE(56)).toBe(2097152n);
    expect(block.readBigUInt64LE(64)).toBe(0n);
    expect(block.readUInt32LE(72)).toBe(1);
    expect(block.readUInt32LE(76)).toBe(0);
    expect(block.readUInt32LE(80)).toBe(0);
    expect(block.readUInt32LE(84)).toBe(2097152);
    expect(block.subarray(88, 4088)).toEqual(Buffer.alloc(4000));
  });

  it('carries the Fletcher-64 checksum the kernel computes', () => {
    expect(block.readBigUInt64LE(4088)).toBe(referenceChecksum(block));
    expect(fletcher64(Buffer.alloc(4096))).toBe(0n);
    // Two words: lo = 1 + 2 = 3, hi = 1 + 3 = 4.
    expect(fletcher64(Buffer.from([1, 0, 0, 0, 2, 0, 0, 0]))).toBe((4n << 32n) | 3n);
    // lo wraps at 2^32 (0xffffffff + 2 → 1); hi = 0xffffffff + 1 = 2^32, whose shift leaves 64 bits: 0.
    expect(fletcher64(Buffer.from([0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0]))).toBe(1n);
    expect(fletcher64(Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]))).toBe(
      ((0x1_ffff_fffen << 32n) & 0xffff_ffff_ffff_ffffn) | 0xffff_ffffn,
    );
  });

  it('isDaxInfoBlock accepts it and refuses a changed byte or a wrong length', () => {
    expect(isDaxInfoBlock(block)).toBe(true);
    const broken = Buffer.from(block);
    broken[60] = 1;
    expect(isDaxInfoBlock(broken)).toBe(false);
    expect(isDaxInfoBlock(block.subarray(0, 512))).toBe(false);
  });
});

describe('MBR', () => {
  it('one Linux partition from sector 4096 (2 MiB) to the end of the image, boot signature 55 AA', () => {
    const mbr = masterBootRecord(64 * MiB);
    expect(mbr.length).toBe(512);
    expect(mbr[446 + 4]).toBe(0x83);
    expect(mbr.readUInt32LE(446 + 8)).toBe(4096);
    expect(mbr.readUInt32LE(446 + 12)).toBe((64 * MiB - 2 * MiB) / 512);
    expect(mbr.subarray(462, 510)).toEqual(Buffer.alloc(48)); // no other partition
    expect([mbr[510], mbr[511]]).toEqual([0x55, 0xaa]);
  });

  it('caps the sector count at 2^32-1 for images above 2 TiB', () => {
    expect(masterBootRecord(4 * 1024 * 1024 * MiB).readUInt32LE(446 + 12)).toBe(0xffffffff);
  });

  it('image sizes are rounded down to 2 MiB', () => {
    expect(alignImageSize(5 * MiB)).toBe(4 * MiB);
    expect(alignImageSize(4 * MiB)).toBe(4 * MiB);
  });
});

describe('mkfs of the inner filesystem', () => {
  it('the DAX geometry without discard (a discard would punch holes into the allocated image)', () => {
    expect(innerMkfsCommand('ext4', '/dev/loop7', 62 * MiB)).toEqual({
      command: 'mkfs.ext4',
      args: ['-b', '4096', '-E', 'stride=512,stripe_width=512,nodiscard', '-F', '/dev/loop7'],
    });
    expect(innerMkfsCommand('xfs', '/dev/loop7', 318 * MiB)).toEqual({
      command: 'mkfs.xfs',
      args: ['-K', '-b', 'size=4096', '-m', 'reflink=0', '-d', 'su=2m,sw=1,agcount=4', '-f', '/dev/loop7'],
    });
  });
});

describe('createImageFile refusals (no host tool runs)', () => {
  it.each([
    [
      { fsType: 'ext4', sizeBytes: 3 * MiB },
      FailedPreconditionError,
      /^volume vol-1: 2097152 bytes are too small for a Kata Containers image file/,
    ],
    [{ fsType: 'xfs', sizeBytes: 100 * MiB }, OutOfRangeError, /xfs needs at least 314572800 bytes/],
  ] as const)('%j', async (req, type, message) => {
    const dir = await mkdtemp(join(tmpdir(), 'pmem-kata-layout-'));
    const runner = new ScriptedRunner();
    try {
      const err = await createImageFile(runner, { volumeId: 'vol-1', dir, ...req }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(type);
      expect((err as Error).message).toMatch(message);
      expect(runner.calls).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a file at the image path that is no image → FAILED_PRECONDITION naming it, and it is left alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pmem-kata-layout-'));
    try {
      await writeFile(join(dir, 'kata-containers-pmem-csi-vm.img'), Buffer.alloc(8 * MiB, 7));
      await expect(createImageFile(new ScriptedRunner(), { volumeId: 'vol-1', dir, fsType: 'ext4' })).rejects.toThrow(
        new FailedPreconditionError(
          `${join(dir, 'kata-containers-pmem-csi-vm.img')} exists but is not a Kata Containers image file (no valid DAX info block at byte 4096); it was not made by PMEM-CSI, move it away`,
        ),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
