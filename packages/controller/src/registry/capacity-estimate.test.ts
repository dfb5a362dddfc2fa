import type { Capacity } from '@pmem-csi/csi';
import { adjustCapacity } from './capacity-estimate.js';

describe('adjustCapacity', () => {
  const c = (maxVolumeSize: number, available: number, managed = 100): Capacity => ({
    maxVolumeSize,
    available,
    managed,
    total: 200,
  });

  it('moves the free bytes by the volume size, clamped to [0, managed]', () => {
    expect(adjustCapacity(c(40, 40), -10)).toEqual(c(30, 30));
    expect(adjustCapacity(c(40, 40), -50)).toEqual(c(0, 0));
    expect(adjustCapacity(c(40, 40), 10)).toEqual(c(50, 50));
    expect(adjustCapacity(c(95, 95), 10)).toEqual(c(100, 100));
    expect(adjustCapacity(c(10, 10, 0), 5)).toEqual(c(15, 15, 0)); // managed unknown: no ceiling
  });

  it('on a fragmented node takes the lower bound of the largest volume', () => {
    expect(adjustCapacity(c(20, 50), -5)).toEqual(c(15, 45)); // may have come out of the largest extent
    expect(adjustCapacity(c(20, 50), -45)).toEqual(c(5, 5)); // did not fit the largest extent; clamped to the free bytes
    expect(adjustCapacity(c(20, 50), -25)).toEqual(c(20, 25));
    expect(adjustCapacity(c(20, 50), 5)).toEqual(c(20, 55)); // freed a smaller extent, perhaps
    expect(adjustCapacity(c(20, 50), 30)).toEqual(c(30, 80)); // freed at least 30 in one piece
  });
});
