// Kubernetes resource quantities ("1Gi", "100Mi", "2G", "1.5Gi", "1e9", "1073741824") parsed into
// a number of bytes. BigInt arithmetic keeps "1.5Gi" exact instead of trusting floating point;
// the result is a JS number, so sizes above Number.MAX_SAFE_INTEGER (8 PiB) are refused rather
// than silently rounded.

/** The apiserver's own quantity grammar (as in CRDs generated for resource.Quantity). */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
const QUANTITY_RE = new RegExp(QUANTITY_PATTERN);
const PARTS_RE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/;
// Longer inputs are not sizes anybody means; the cap also bounds the BigInt work per call.
const MAX_INPUT_LENGTH = 64;
// Beyond these, the result is known without computing 10^exponent: too large, or (with at most
// MAX_INPUT_LENGTH digits) a fraction of one byte that rounds up to 1.
const MAX_EXPONENT = 30;
const MIN_EXPONENT = -100;

const MULTIPLIERS: Readonly<Record<string, bigint>> = {
  '': 1n,
  k: 10n ** 3n,
  M: 10n ** 6n,
  G: 10n ** 9n,
  T: 10n ** 12n,
  P: 10n ** 15n,
  E: 10n ** 18n,
  Ki: 2n ** 10n,
  Mi: 2n ** 20n,
  Gi: 2n ** 30n,
  Ti: 2n ** 40n,
  Pi: 2n ** 50n,
  Ei: 2n ** 60n,
};
const SUB_UNIT_SUFFIXES: Readonly<Record<string, string>> = { m: '10^-3', u: '10^-6', n: '10^-9' };
const EXAMPLES = 'e.g. 1Gi, 100Mi, 2G, 1.5Gi or 1073741824';
const TOO_LARGE = `is too large: at most ${Number.MAX_SAFE_INTEGER} bytes are supported`;

export type QuantityResult =
  { readonly ok: true; readonly value: number } | { readonly ok: false; readonly message: string };

/** True when the apiserver would accept `input` as a quantity (CPU "100m" included). */
export function isQuantity(input: string): boolean {
  return input.length <= MAX_INPUT_LENGTH && QUANTITY_RE.test(input);
}

/**
 * Bytes denoted by a quantity. Fractions of a byte round up, as resource.Quantity.Value() does,
 * so a requested size is never shrunk. Errors name the input and what would be accepted.
 */
export function parseQuantityBytes(input: string): QuantityResult {
  const q = JSON.stringify(input);
  if (!isQuantity(input)) {
    return fail(
      `quantity ${q} is not valid: expected a number with an optional suffix Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E or an exponent (${EXAMPLES})`,
    );
  }
  const [, sign = '', whole = '', fraction = '', suffix = ''] = PARTS_RE.exec(input) ?? [];
  const subUnit = SUB_UNIT_SUFFIXES[suffix];
  if (subUnit !== undefined) {
    return fail(
      `quantity ${q} uses the suffix "${suffix}" (${subUnit}), which cannot express bytes; use M (10^6) or Mi (2^20)`,
    );
  }
  const numerator = BigInt(`${whole}${fraction}` || '0');
  if (sign === '-' && numerator !== 0n) {
    return fail(`quantity ${q} is negative; a size in bytes must not be negative`);
  }
  const scaled = scale(numerator, 10n ** BigInt(fraction.length), suffix);
  return typeof scaled === 'string' ? fail(`quantity ${q} ${scaled}`) : { ok: true, value: Number(scaled) };
}

// numerator/denominator × suffix, rounded up; a string is the reason it cannot be computed.
function scale(numerator: bigint, denominator: bigint, suffix: string): bigint | string {
  const multiplier = MULTIPLIERS[suffix];
  if (multiplier !== undefined) {
    return ceilDiv(numerator * multiplier, denominator);
  }
  const exponent = Number(suffix.slice(1));
  if (!Number.isInteger(exponent)) {
    return 'is not valid: the exponent must be an integer';
  }
  if (numerator === 0n) {
    return 0n;
  }
  if (exponent > MAX_EXPONENT) {
    return TOO_LARGE;
  }
  return exponent >= 0
    ? ceilDiv(numerator * 10n ** BigInt(exponent), denominator)
    : ceilDiv(numerator, denominator * 10n ** BigInt(-Math.max(exponent, MIN_EXPONENT)));
}

// Rounds up; a string when the result does not fit a safe JS integer.
function ceilDiv(num: bigint, den: bigint): bigint | string {
  const result = (num + den - 1n) / den;
  return result > BigInt(Number.MAX_SAFE_INTEGER) ? TOO_LARGE : result;
}

function fail(message: string): QuantityResult {
  return { ok: false, message };
}
