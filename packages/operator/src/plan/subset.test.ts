import { isSubset } from './subset.js';

describe('isSubset', () => {
  it('ignores fields only the live object has', () => {
    expect(isSubset({ a: 1, b: { c: 'x' } }, { a: 1, b: { c: 'x', d: 2 }, status: {} })).toBe(true);
  });
  it('compares arrays element by element and by length', () => {
    expect(isSubset([{ a: 1 }], [{ a: 1, b: 2 }])).toBe(true);
    expect(isSubset([1, 2], [1, 2, 3])).toBe(false);
    expect(isSubset([1, 2], [2, 1])).toBe(false);
  });
  it('requires every set field to match exactly', () => {
    expect(isSubset({ a: 1 }, { a: '1' })).toBe(false);
    expect(isSubset({ a: { b: 1 } }, { a: null })).toBe(false);
    expect(isSubset({ a: undefined }, {})).toBe(true);
    expect(isSubset({ a: null }, { a: null })).toBe(true);
  });
});
