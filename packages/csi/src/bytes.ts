// Byte sizes of the CSI domain: the binary units, the default volume size, int64 request fields and
// sizes in messages. Protobuf int64 fields arrive as decimal strings (longs=String); we compute with
// Numbers, which is exact below 2^53 (8 PiB, far above any PMEM node). A field is validated once
// here, so a malformed or huge size is a clear InvalidArgument / OutOfRange naming the field instead
// of NaN or a silent rounding later on.
import { InvalidArgumentError, OutOfRangeError } from './errors.js';

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

/** Size of a CreateVolume that gives neither required_bytes nor limit_bytes (controller and node agree). */
export const DEFAULT_VOLUME_SIZE = GiB;

/** An int64 field as protobuf decoders hand it over (string with longs=String, number, Long, absent). */
export type Int64Field = string | number | { toString(): string } | null | undefined;

/**
 * Parse a non-negative int64 byte count (absent or "" = 0). "-0" is the value 0, which int64 has only
 * one of and which CSI allows ("not specified"), so it is accepted as 0; every other negative value is
 * refused, as the spec requires ("MUST NOT be negative").
 * @throws InvalidArgumentError (not an integer, negative) or OutOfRangeError (above 2^53 - 1), naming `field`
 */
export function parseBytes(value: Int64Field, field: string): number {
  if (value === undefined || value === null || value === '') return 0;
  const text = String(value);
  if (!/^-?\d+$/.test(text))
    throw new InvalidArgumentError(`${field} must be an integer number of bytes, got ${JSON.stringify(text)}`);
  if (text.startsWith('-')) {
    if (/^-0+$/.test(text)) return 0;
    throw new InvalidArgumentError(`${field} must not be negative, got ${text}`);
  }
  const n = Number(text);
  if (!Number.isSafeInteger(n))
    throw new OutOfRangeError(
      `${field} ${text} is too large; the maximum supported is ${Number.MAX_SAFE_INTEGER} bytes`,
    );
  return n;
}

const UNITS: ReadonlyArray<readonly [number, string]> = [
  [1024 * 1024 * GiB, 'PiB'],
  [1024 * GiB, 'TiB'],
  [GiB, 'GiB'],
  [MiB, 'MiB'],
  [KiB, 'KiB'],
];

/** A size for messages and logs: exact units when possible ("3 GiB"), else 2 decimals plus the bytes. */
export function formatBytes(bytes: number): string {
  for (const [unit, name] of UNITS) {
    if (bytes >= unit && bytes % unit === 0) return `${bytes / unit} ${name}`;
  }
  for (const [unit, name] of UNITS) {
    if (bytes >= unit) return `${(bytes / unit).toFixed(2)} ${name} (${bytes} bytes)`;
  }
  return `${bytes} bytes`;
}
