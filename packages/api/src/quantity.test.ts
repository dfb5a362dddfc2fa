import { isQuantity, parseQuantityBytes } from './quantity.js';

const GI = 1024 ** 3;

describe('parseQuantityBytes', () => {
  it.each<[string, number]>([
    ['0', 0],
    ['1073741824', GI],
    ['+5', 5],
    ['-0', 0],
    ['1Ki', 1024],
    ['100Mi', 100 * 1024 ** 2],
    ['1Gi', GI],
    ['1.5Gi', 1.5 * GI],
    ['.5Gi', 0.5 * GI],
    ['2.Gi', 2 * GI],
    ['2Ti', 2 * 1024 ** 4],
    ['3Pi', 3 * 1024 ** 5],
    ['0.001Ei', Math.ceil(0.001 * 1024 ** 6)],
    ['1k', 1000],
    ['2M', 2e6],
    ['2G', 2e9],
    ['1T', 1e12],
    ['1P', 1e15],
    ['0.001E', 1e15],
    ['1e3', 1000],
    ['1E3', 1000],
    ['15e-1', 2], // 1.5 bytes round up, as resource.Quantity.Value() does
    ['1.0000001', 2],
    ['1e-400', 1],
    ['0e999999999', 0],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
  ])('%s = %d bytes', (input, bytes) => {
    expect(parseQuantityBytes(input)).toEqual({ ok: true, value: bytes });
  });

  const syntax = (input: string): string =>
    `quantity ${JSON.stringify(input)} is not valid: expected a number with an optional suffix Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E or an exponent (e.g. 1Gi, 100Mi, 2G, 1.5Gi or 1073741824)`;
  const tooLarge = (input: string): string =>
    `quantity ${JSON.stringify(input)} is too large: at most 9007199254740991 bytes are supported`;

  it.each<[string, string]>([
    ['', syntax('')],
    ['abc', syntax('abc')],
    ['1 Gi', syntax('1 Gi')],
    ['1gi', syntax('1gi')],
    ['1GB', syntax('1GB')],
    ['1K', syntax('1K')],
    ['Gi', syntax('Gi')],
    ['1.2.3', syntax('1.2.3')],
    ['1'.repeat(65), syntax('1'.repeat(65))],
    ['-1Gi', 'quantity "-1Gi" is negative; a size in bytes must not be negative'],
    ['100m', 'quantity "100m" uses the suffix "m" (10^-3), which cannot express bytes; use M (10^6) or Mi (2^20)'],
    ['5u', 'quantity "5u" uses the suffix "u" (10^-6), which cannot express bytes; use M (10^6) or Mi (2^20)'],
    ['5n', 'quantity "5n" uses the suffix "n" (10^-9), which cannot express bytes; use M (10^6) or Mi (2^20)'],
    ['1e1.5', 'quantity "1e1.5" is not valid: the exponent must be an integer'],
    ['9007199254740992', tooLarge('9007199254740992')],
    ['8Pi', tooLarge('8Pi')],
    ['1Ei', tooLarge('1Ei')],
    ['1e31', tooLarge('1e31')],
    ['1e99999999999', tooLarge('1e99999999999')],
  ])('%j is refused', (input, message) => {
    expect(parseQuantityBytes(input)).toEqual({ ok: false, message });
  });
});

describe('isQuantity', () => {
  it.each(['100m', '0.5', '250Mi', '1Gi', '1e3', '-1'])('accepts %s (the apiserver grammar)', (q) => {
    expect(isQuantity(q)).toBe(true);
  });
  it.each(['', 'x', '1 Gi', '1GB', '1gi'])('refuses %j', (q) => {
    expect(isQuantity(q)).toBe(false);
  });
});
