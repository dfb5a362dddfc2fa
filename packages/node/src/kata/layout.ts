// The byte layout of a Kata Containers image file (see README.md in this folder): an MBR at 0, the
// nvdimm DAX info block (struct nd_pfn_sb) at 4 KiB, the filesystem from 2 MiB on. A guest kernel
// that gets the file as an NVDIMM finds the info block, checks its checksum and makes an fsdax
// /dev/pmemN of the data area, which its filesystem fills. Pure functions: the bytes only.
import { MiB } from '@pmem-csi/csi';

/** Name of the image file in the root of the volume's filesystem (the Go driver's name, which Kata's runtime looks for). */
export const IMAGE_FILE_NAME = 'kata-containers-pmem-csi-vm.img';
/** Where the filesystem starts, and the alignment of DAX huge-page mappings. */
export const DATA_OFFSET = 2 * MiB;
/** Alignment of the whole image file and of the DAX mapping. */
export const DAX_ALIGNMENT = 2 * MiB;
/** Where the kernel looks for the info block (SZ_4K from the start of the namespace). */
export const INFO_BLOCK_OFFSET = 4096;
/** Size of struct nd_pfn_sb. */
export const INFO_BLOCK_SIZE = 4096;
/** PFN_SIG, NUL-terminated, 16 bytes. */
export const PFN_SIGNATURE = 'NVDIMM_PFN_INFO\0';
/** enum nd_pfn_mode: struct pages kept in RAM (what Kata's image builder writes). */
export const PFN_MODE_RAM = 1;

/** Field offsets in struct nd_pfn_sb (all little endian). */
export const INFO_FIELDS = {
  signature: 0,
  uuid: 16,
  parentUuid: 32,
  flags: 48,
  versionMajor: 52,
  versionMinor: 54,
  dataOffset: 56,
  npfns: 64,
  mode: 72,
  startPad: 76,
  endTrunc: 80,
  align: 84,
  checksum: 4088,
} as const;

const SECTOR = 512;
const MBR_PARTITION_ENTRY = 446;
const LINUX_PARTITION_TYPE = 0x83;
const MAX_SECTORS = 0xffff_ffff;

/**
 * nd_fletcher64 over `block` as little-endian u32 words: lo wraps at 2^32, hi accumulates lo, the
 * result is (hi << 32 | lo) mod 2^64.
 */
export function fletcher64(block: Uint8Array): bigint {
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  let lo = 0;
  let hi = 0n;
  for (let i = 0; i + 4 <= block.byteLength; i += 4) {
    lo = (lo + view.getUint32(i, true)) >>> 0;
    hi += BigInt(lo);
  }
  return ((hi << 32n) | BigInt(lo)) & 0xffff_ffff_ffff_ffffn;
}

/** The 4 KiB DAX info block: signature, version 0.2, data at DATA_OFFSET, align DAX_ALIGNMENT, mode RAM, checksum. */
export function daxInfoBlock(): Buffer {
  const block = Buffer.alloc(INFO_BLOCK_SIZE);
  block.write(PFN_SIGNATURE, INFO_FIELDS.signature, 'latin1');
  block.writeUInt16LE(2, INFO_FIELDS.versionMinor);
  block.writeBigUInt64LE(BigInt(DATA_OFFSET), INFO_FIELDS.dataOffset);
  block.writeUInt32LE(PFN_MODE_RAM, INFO_FIELDS.mode);
  block.writeUInt32LE(DAX_ALIGNMENT, INFO_FIELDS.align);
  block.writeBigUInt64LE(fletcher64(block), INFO_FIELDS.checksum); // computed with the checksum field 0
  return block;
}

/** Whether `block` is a valid info block (signature and checksum), as the kernel checks it. */
export function isDaxInfoBlock(block: Uint8Array): boolean {
  if (block.byteLength !== INFO_BLOCK_SIZE) return false;
  const copy = Buffer.from(block);
  if (copy.toString('latin1', 0, PFN_SIGNATURE.length) !== PFN_SIGNATURE) return false;
  const stored = copy.readBigUInt64LE(INFO_FIELDS.checksum);
  copy.writeBigUInt64LE(0n, INFO_FIELDS.checksum);
  return fletcher64(copy) === stored;
}

/**
 * A 512-byte MBR with one primary Linux partition from DATA_OFFSET to the end of an image of
 * `imageBytes`: for tools (file, blkid, partprobe) only; the guest's pmem device starts at the data.
 */
export function masterBootRecord(imageBytes: number): Buffer {
  const mbr = Buffer.alloc(SECTOR);
  const entry = MBR_PARTITION_ENTRY;
  // CHS fields: 0xfe/0xff/0xff means "use the LBA fields" (addresses beyond CHS range).
  mbr.set([0x00, 0xfe, 0xff, 0xff, LINUX_PARTITION_TYPE, 0xfe, 0xff, 0xff], entry);
  mbr.writeUInt32LE(DATA_OFFSET / SECTOR, entry + 8);
  // An MBR counts at most 2^32-1 sectors (2 TiB): a larger image's partition entry ends early,
  // which only tools see (the guest reads the info block, not the MBR).
  mbr.writeUInt32LE(Math.min(Math.floor((imageBytes - DATA_OFFSET) / SECTOR), MAX_SECTORS), entry + 12);
  mbr[510] = 0x55;
  mbr[511] = 0xaa;
  return mbr;
}

/** The largest image size (a multiple of DAX_ALIGNMENT) not above `bytes`. */
export function alignImageSize(bytes: number): number {
  return Math.floor(bytes / DAX_ALIGNMENT) * DAX_ALIGNMENT;
}
