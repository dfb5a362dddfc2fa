// Capacity accounting shared by the fake and emulated device managers: a fixed pool of bytes
// handed out in granularity-sized units, like an LVM volume group. Reservations are checked and
// taken in one synchronous call, so concurrent creates can never over-commit the pool (no await
// between the check and the take), and a failed create gives its space back exactly.
import { formatBytes, type Capacity } from '@pmem-csi/csi';
import { NotEnoughSpaceError, NotEnoughSpaceToGrowError } from './device-manager.js';
import { alignDown, alignUp, assertVolumeSize } from './sizes.js';

/** "4294967296 bytes (4 GiB)": exact bytes for machines, the unit for people. */
function exactBytes(n: number): string {
  return n < 1024 ? `${n} bytes` : `${n} bytes (${formatBytes(n)})`;
}

/** A pool of `total` bytes allocated per volume id in multiples of `granularity`. */
export class SpaceLedger {
  readonly #used = new Map<string, number>();
  #allocated = 0;

  constructor(
    readonly total: number,
    readonly granularity: number,
  ) {
    assertVolumeSize(total, 'total size');
    assertVolumeSize(granularity, 'granularity');
  }

  /** Requested size rounded up to the granularity. */
  round(size: number): number {
    return alignUp(size, this.granularity);
  }

  has(volumeId: string): boolean {
    return this.#used.has(volumeId);
  }

  sizeOf(volumeId: string): number | undefined {
    return this.#used.get(volumeId);
  }

  /** Free bytes; never negative, even when more was loaded than the pool holds. */
  get available(): number {
    return Math.max(0, this.total - this.#allocated);
  }

  /** Largest single volume that fits now (the pool does not fragment). */
  get maxVolumeSize(): number {
    return alignDown(this.available, this.granularity);
  }

  capacity(): Capacity {
    return { maxVolumeSize: this.maxVolumeSize, available: this.available, managed: this.total, total: this.total };
  }

  /**
   * What reserve(size) would give a new volume, or grow(volumeId, size) would leave `volumeId` with
   * (`grow` given), without taking anything or checking free space.
   */
  sizeFor(size: number, grow?: string): number {
    assertVolumeSize(size);
    return Math.max(this.round(size), grow === undefined ? 0 : (this.#used.get(grow) ?? 0));
  }

  /** Take `size` (rounded up) for a new volume. @throws NotEnoughSpaceError */
  reserve(volumeId: string, size: number): number {
    assertVolumeSize(size);
    const rounded = this.round(size);
    if (rounded > this.maxVolumeSize) throw this.#notEnough(volumeId, size, rounded);
    this.#set(volumeId, rounded);
    return rounded;
  }

  /** Grow a volume to at least `size` (rounded up); returns the new size. @throws NotEnoughSpaceToGrowError */
  grow(volumeId: string, size: number): number {
    assertVolumeSize(size);
    const current = this.#used.get(volumeId) ?? 0;
    const rounded = this.round(size);
    if (rounded <= current) return current;
    if (rounded - current > this.maxVolumeSize) throw this.#notEnough(volumeId, size, rounded, current);
    this.#set(volumeId, rounded);
    return rounded;
  }

  /**
   * Record a volume's size without a space check: a volume found at start-up (the backing store is
   * the truth, even when it holds more than the pool) or a size put back after a failed resize.
   */
  assign(volumeId: string, size: number): void {
    this.#set(volumeId, size);
  }

  release(volumeId: string): void {
    this.#allocated -= this.#used.get(volumeId) ?? 0;
    this.#used.delete(volumeId);
  }

  #set(volumeId: string, size: number): void {
    this.#allocated += size - (this.#used.get(volumeId) ?? 0);
    this.#used.set(volumeId, size);
  }

  #notEnough(volumeId: string, size: number, rounded: number, current = 0): NotEnoughSpaceError {
    const id = JSON.stringify(volumeId);
    const unit = `rounded up to a multiple of ${formatBytes(this.granularity)}`;
    const what =
      current > 0
        ? `to grow volume ${id} from ${formatBytes(current)} to ${formatBytes(rounded)} (requested ${size} bytes, ${unit})`
        : `for volume ${id}: requested ${size} bytes, ${formatBytes(rounded)} when ${unit}`;
    const largest = current + this.maxVolumeSize;
    const message = `not enough space ${what}; the largest size available is ${exactBytes(largest)}`;
    return current > 0 ? new NotEnoughSpaceToGrowError(message, largest) : new NotEnoughSpaceError(message);
  }
}
