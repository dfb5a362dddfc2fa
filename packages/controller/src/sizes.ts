// Byte sizes at the RPC edge. Protobuf int64 fields arrive as decimal strings (longs=String); the
// controller computes with Numbers, which is exact below 2^53 (8 PiB, far above any PMEM node).
// Values are validated once here so that a malformed or huge size becomes a clear InvalidArgument /
// OutOfRange naming the field instead of NaN or a silent rounding later on.
import { InvalidArgumentError, OutOfRangeError } from '@pmem-csi/runtime';

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

type Int64 = string | number | { toString(): string } | null | undefined;

/** Parse a non-negative int64 field (absent = 0); throws InvalidArgument/OutOfRange naming `field`. */
export function parseBytes(value: Int64, field: string): number {
  if (value === undefined || value === null || value === '') return 0;
  const text = String(value);
  if (!/^-?\d+$/.test(text)) throw new InvalidArgumentError(`${field} must be an integer number of bytes, got ${JSON.stringify(text)}`);
  if (text.startsWith('-')) {
    if (/^-0+$/.test(text)) return 0;
    throw new InvalidArgumentError(`${field} must not be negative, got ${text}`);
  }
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new OutOfRangeError(`${field} ${text} is too large; the maximum supported is ${Number.MAX_SAFE_INTEGER} bytes`);
  return n;
}

const UNITS: ReadonlyArray<readonly [number, string]> = [
  [GiB, 'GiB'],
  [MiB, 'MiB'],
  [KiB, 'KiB'],
];

/** Human-readable size for messages: exact units when possible ("3 GiB"), else 2 decimals plus bytes. */
export function formatBytes(bytes: number): string {
  for (const [unit, name] of UNITS) {
    if (bytes >= unit && bytes % unit === 0) return `${bytes / unit} ${name}`;
  }
  for (const [unit, name] of UNITS) {
    if (bytes >= unit) return `${(bytes / unit).toFixed(2)} ${name} (${bytes} bytes)`;
  }
  return `${bytes} bytes`;
}
