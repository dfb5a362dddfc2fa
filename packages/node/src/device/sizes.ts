// Sizes of the device managers, in one module: the size check every manager makes, the shortage
// lvm and direct name, rounding to an allocation unit (fake and emulated pools, LVM extents) and
// the PMEM alignment math of the lvm and direct managers. Byte counts are plain numbers: every size
// we meet (≤ a few TiB per region) is far below 2^53, where doubles stop being exact, and every
// alignment helper asserts that its inputs and result are safe integers so a mistake fails loudly
// instead of rounding silently.
//
// The fsdax "map=dev" formula: an fsdax namespace keeps its page metadata (one 64-byte struct page
// per 4 KiB page, i.e. 1/64 = ~1.6 %) plus an 8 KiB info block at its start, and the data starts at
// the next pfn-alignment boundary. `ndctl create-namespace --size` sets the raw size, the block
// device is smaller by that reserve. We bound the reserve from above (one extra alignment step for
// a start that is not pfn-aligned), pick the smallest aligned raw size whose bound still leaves the
// requested bytes, and the direct manager verifies the size the kernel really reports.
import { InvalidArgumentError, KiB, MiB } from '@pmem-csi/csi';
import { NotEnoughSpaceError } from './device-manager.js';

/** @throws InvalidArgumentError unless `size` is a positive whole number of bytes (every manager's size check). */
export function assertVolumeSize(size: number, what = 'size'): void {
  if (!Number.isSafeInteger(size) || size <= 0)
    throw new InvalidArgumentError(`${what} must be a positive whole number of bytes, got ${size}`);
}

/** The shortage of a create, naming the largest volume that fits now (lvm and direct). */
export function notEnoughSpace(volumeId: string, size: number, largest: number): NotEnoughSpaceError {
  return new NotEnoughSpaceError(
    `not enough PMEM for volume ${volumeId} of ${size} bytes: the largest volume this node can create now is ${largest} bytes`,
  );
}

/** Default fsdax pfn alignment (PMD size on x86); ndctl and the kernel default to it. */
export const FSDAX_PFN_ALIGN = 2 * MiB;
/** The pfn info block at the start of an fsdax namespace. */
export const PFN_INFO_BLOCK = 8 * KiB;
/** Bytes of raw namespace per byte of page metadata (64-byte struct page per 4 KiB page). */
export const PAGE_METADATA_DIVISOR = 4096 / 64;

function assertSize(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${what} must be a non-negative safe integer, got ${value}`);
  }
}

function assertPositive(value: number, what: string): void {
  assertSize(value, what);
  if (value === 0) throw new RangeError(`${what} must be positive, got 0`);
}

/** Greatest common divisor of two non-negative integers. */
export function gcd(a: number, b: number): number {
  assertSize(a, 'gcd operand');
  assertSize(b, 'gcd operand');
  let x = a;
  let y = b;
  while (y !== 0) [x, y] = [y, x % y];
  return x;
}

/** Least common multiple of two positive integers. */
export function lcm(a: number, b: number): number {
  assertPositive(a, 'lcm operand');
  assertPositive(b, 'lcm operand');
  const result = (a / gcd(a, b)) * b;
  assertSize(result, `lcm(${a}, ${b})`);
  return result;
}

/** The smallest multiple of `align` that is ≥ `value`. */
export function alignUp(value: number, align: number): number {
  assertSize(value, 'value');
  assertPositive(align, 'alignment');
  const rest = value % align;
  const result = rest === 0 ? value : value + (align - rest);
  assertSize(result, `alignUp(${value}, ${align})`);
  return result;
}

/** The largest multiple of `align` that is ≤ `value`. */
export function alignDown(value: number, align: number): number {
  assertSize(value, 'value');
  assertPositive(align, 'alignment');
  return value - (value % align);
}

/** Upper bound of the bytes an fsdax map=dev namespace of `raw` bytes keeps for itself. */
export function fsdaxReserve(raw: number, pfnAlign = FSDAX_PFN_ALIGN): number {
  assertSize(raw, 'raw size');
  const metadata = PFN_INFO_BLOCK + Math.ceil(raw / PAGE_METADATA_DIVISOR);
  return alignUp(metadata, pfnAlign) + pfnAlign;
}

/** A lower bound of the usable bytes of an fsdax map=dev namespace of `raw` bytes (0 if none). */
export function usableForRaw(raw: number, pfnAlign = FSDAX_PFN_ALIGN): number {
  return Math.max(0, raw - fsdaxReserve(raw, pfnAlign));
}

/**
 * The smallest raw namespace size, a multiple of `align`, whose usable size (by the bound above)
 * is ≥ `usable`. Closed-form estimate raw ≈ x + x/63 with x = usable + reserve constants, then a
 * few exact steps by `align` in either direction.
 */
export function rawForUsable(usable: number, align: number, pfnAlign = FSDAX_PFN_ALIGN): number {
  assertPositive(usable, 'usable size');
  assertPositive(align, 'alignment');
  const x = usable + PFN_INFO_BLOCK + 2 * pfnAlign;
  let raw = alignUp(x + Math.ceil(x / (PAGE_METADATA_DIVISOR - 1)), align);
  while (raw > align && usableForRaw(raw - align, pfnAlign) >= usable) raw -= align;
  while (usableForRaw(raw, pfnAlign) < usable) raw += align;
  return raw;
}
