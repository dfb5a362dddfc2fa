// Validation helpers shared by the RPCs of both node services: required fields, int64 byte sizes
// (strings on the wire), capacity ranges and StorageClass/ephemeral parameters. Every problem is an
// InvalidArgument (OutOfRange for sizes beyond what we can represent) naming the field.
import { parseVolumeParameters, volumeNameProblem, type VolumeParameterOrigin, type VolumeParameters } from '@pmem-csi/api';
import { InvalidArgumentError, OutOfRangeError, type csi } from '@pmem-csi/runtime';

/** A required string field; empty → InvalidArgument naming it. */
export function requireField(value: string, field: string): string {
  if (value === '') throw new InvalidArgumentError(`${field} is required`);
  return value;
}

type Int64 = string | number | null | undefined;

/**
 * A CreateVolume name (or an ephemeral volume's handle) that yields a volume id every device mode
 * accepts: the rule shared with the central controller (@pmem-csi/api volumeNameProblem).
 * @throws InvalidArgumentError naming `field` and what is allowed
 */
export function volumeName(value: string, field = 'name'): string {
  const problem = volumeNameProblem(value, field);
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  return value;
}

/** Parse a non-negative int64 field (absent = 0). */
export function parseBytes(value: Int64, field: string): number {
  if (value === undefined || value === null || value === '') return 0;
  const text = String(value);
  if (!/^\d+$/.test(text)) throw new InvalidArgumentError(`${field} must be a non-negative integer number of bytes, got ${JSON.stringify(text)}`);
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new OutOfRangeError(`${field} ${text} is too large; the maximum supported is ${Number.MAX_SAFE_INTEGER} bytes`);
  return n;
}

/** A validated capacity range; 0 means "not given". */
export interface SizeRange {
  readonly required: number;
  readonly limit: number;
}

/** Validate capacity_range. */
export function sizeRange(range: csi.CapacityRange__Output | null | undefined, field = 'capacity_range'): SizeRange {
  const required = parseBytes(range?.required_bytes, `${field}.required_bytes`);
  const limit = parseBytes(range?.limit_bytes, `${field}.limit_bytes`);
  if (limit > 0 && limit < required) {
    throw new InvalidArgumentError(`${field}.limit_bytes (${limit}) must not be smaller than ${field}.required_bytes (${required})`);
  }
  return { required, limit };
}

/** The size to allocate for a range: required, else the default capped by the limit. */
export function sizeToCreate(range: SizeRange, defaultSize: number): number {
  if (range.required > 0) return range.required;
  return range.limit > 0 ? Math.min(range.limit, defaultSize) : defaultSize;
}

/** Whether `size` lies within the range (limit 0 = unlimited). */
export function sizeFits(size: number, range: SizeRange): boolean {
  return size >= range.required && (range.limit === 0 || size <= range.limit);
}

/** Parse parameters of `origin`; bad keys or values → InvalidArgument listing every problem. */
export function checkParameters(params: Readonly<Record<string, string>>, origin: VolumeParameterOrigin): VolumeParameters {
  const result = parseVolumeParameters(params, origin);
  if (!result.ok) throw new InvalidArgumentError(result.message);
  return result.value;
}
