import { GiB, MiB } from '@pmem-csi/csi';
import { FSDAX_PFN_ALIGN, alignDown, alignUp, fsdaxReserve, gcd, lcm, rawForUsable, usableForRaw } from './sizes.js';

describe('gcd / lcm', () => {
  it('computes gcd', () => {
    expect(gcd(12, 18)).toBe(6);
    expect(gcd(0, 5)).toBe(5);
    expect(gcd(96 * MiB, GiB)).toBe(32 * MiB);
  });

  it('computes lcm of PMEM alignments', () => {
    expect(lcm(2 * MiB, 16 * MiB)).toBe(16 * MiB);
    expect(lcm(2 * MiB * 2, 96 * MiB)).toBe(96 * MiB);
    expect(lcm(2 * MiB * 3, 16 * MiB)).toBe(48 * MiB);
    expect(lcm(GiB, 96 * MiB)).toBe(3 * GiB);
  });

  it('rejects non-integers, negatives and zero', () => {
    expect(() => lcm(0, 4)).toThrow('lcm operand must be positive, got 0');
    expect(() => gcd(1.5, 4)).toThrow('gcd operand must be a non-negative safe integer, got 1.5');
    expect(() => alignUp(-1, 4)).toThrow('value must be a non-negative safe integer, got -1');
    expect(() => alignUp(2 ** 53, 3)).toThrow('value must be a non-negative safe integer');
  });
});

describe('alignUp / alignDown', () => {
  it('rounds to multiples', () => {
    expect(alignUp(1, 4 * MiB)).toBe(4 * MiB);
    expect(alignUp(4 * MiB, 4 * MiB)).toBe(4 * MiB);
    expect(alignUp(0, 4 * MiB)).toBe(0);
    expect(alignDown(5 * GiB - 1, GiB)).toBe(4 * GiB);
    expect(alignDown(3 * GiB, GiB)).toBe(3 * GiB);
  });

  it('rejects a zero alignment', () => {
    expect(() => alignDown(5, 0)).toThrow('alignment must be positive, got 0');
  });
});

describe('fsdax map=dev reserve', () => {
  it('bounds the 1/64 page metadata plus info block and alignment', () => {
    // 1500 GiB raw gave 1476.56 GiB usable on real hardware (63/64 of raw); our bound is a bit more.
    const raw = 1500 * GiB;
    expect(usableForRaw(raw)).toBeLessThanOrEqual(raw - raw / 64);
    expect(raw - raw / 64 - usableForRaw(raw)).toBeLessThanOrEqual(2 * FSDAX_PFN_ALIGN + 8 * 1024);
    expect(fsdaxReserve(GiB)).toBe(16 * MiB + 2 * MiB + 2 * MiB);
  });

  it('reports 0 usable for tiny namespaces', () => {
    expect(usableForRaw(2 * MiB)).toBe(0);
  });

  it.each([
    [1, 16 * MiB],
    [100 * MiB, 16 * MiB],
    [GiB, 96 * MiB],
    [GiB, 2 * MiB],
    [10 * GiB + 123, 48 * MiB],
    [700 * GiB, 16 * MiB],
  ])('rawForUsable(%d, align %d) is the smallest aligned raw size that fits', (usable, align) => {
    const raw = rawForUsable(usable, align);
    expect(raw % align).toBe(0);
    expect(usableForRaw(raw)).toBeGreaterThanOrEqual(usable);
    expect(raw === align || usableForRaw(raw - align) < usable).toBe(true);
  });

  it('needs about 1.6 % more raw than usable for large volumes', () => {
    const raw = rawForUsable(64 * GiB, 16 * MiB);
    expect(raw / (64 * GiB)).toBeGreaterThan(1.0158);
    expect(raw / (64 * GiB)).toBeLessThan(1.0165);
  });
});
