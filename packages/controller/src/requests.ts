// Validation of the fields that CreateVolume, GetCapacity and ValidateVolumeCapabilities share:
// the capacity range, StorageClass parameters and the content source. Every problem becomes an
// InvalidArgument (or OutOfRange for sizes beyond what we can represent) whose message names the
// field and what is allowed, before any node is asked.
//
// Size policy: CSI lets both required_bytes and limit_bytes be 0 ("no preference"). The controller
// then asks for DEFAULT_VOLUME_SIZE (1 GiB, configurable), capped by limit_bytes when only a limit
// is given. The node receives that explicit size, so controller placement and node allocation
// agree on the same number; the node may round up (alignment) but never above the limit.
import { parseVolumeParameters, volumeNameProblem, type VolumeParameters } from '@pmem-csi/api';
import type { csi } from '@pmem-csi/runtime';
import { InvalidArgumentError } from '@pmem-csi/runtime';
import { formatBytes, GiB, parseBytes } from './sizes.js';

/** Size used when a CreateVolume request gives neither required_bytes nor limit_bytes. */
export const DEFAULT_VOLUME_SIZE = GiB;

/** A validated capacity range; `limit` 0 means unlimited. `size` is what the controller asks for. */
export interface SizeRequest {
  readonly required: number;
  readonly limit: number;
  readonly size: number;
}

/** Validate capacity_range and pick the size to create. */
export function sizeRequest(range: csi.CapacityRange__Output | null, defaultSize: number = DEFAULT_VOLUME_SIZE): SizeRequest {
  const required = parseBytes(range?.required_bytes, 'capacity_range.required_bytes');
  const limit = parseBytes(range?.limit_bytes, 'capacity_range.limit_bytes');
  if (limit > 0 && limit < required) {
    throw new InvalidArgumentError(
      `capacity_range.limit_bytes (${formatBytes(limit)}) must not be smaller than capacity_range.required_bytes (${formatBytes(required)})`,
    );
  }
  if (required > 0) return { required, limit, size: required };
  return { required, limit, size: limit > 0 ? Math.min(limit, defaultSize) : defaultSize };
}

/** Whether an existing volume of `capacity` bytes satisfies the requested range. */
export function sizeFits(capacity: number, req: SizeRequest): boolean {
  return capacity >= req.required && (req.limit === 0 || capacity <= req.limit);
}

/** The requested range in words, for AlreadyExists messages. */
export function describeRange(req: SizeRequest): string {
  const min = req.required > 0 ? `at least ${formatBytes(req.required)}` : '';
  const max = req.limit > 0 ? `at most ${formatBytes(req.limit)}` : '';
  return [min, max].filter((s) => s !== '').join(' and ') || 'any size';
}

/** Parse StorageClass parameters (origin createVolume); bad keys or values → InvalidArgument. */
export function checkParameters(params: Readonly<Record<string, string>>): VolumeParameters {
  const result = parseVolumeParameters(params, 'createVolume');
  if (!result.ok) throw new InvalidArgumentError(result.message);
  return result.value;
}

/** Snapshots and clones are not supported (no CREATE_DELETE_SNAPSHOT / CLONE_VOLUME capability). */
export function checkContentSource(source: csi.VolumeContentSource__Output | null): void {
  if (source === null || source === undefined) return;
  const kind = source.type ?? (source.snapshot ? 'snapshot' : source.volume ? 'volume' : undefined);
  if (kind === undefined) return;
  throw new InvalidArgumentError(
    `volume_content_source (${kind}) is not supported: this driver cannot create volumes from snapshots or clone volumes; omit volume_content_source`,
  );
}

/** A required string field; empty → InvalidArgument naming it. */
export function requireField(value: string, field: string): string {
  if (value === '') throw new InvalidArgumentError(`${field} is required`);
  return value;
}

/**
 * The CreateVolume name: at most 128 bytes (CSI), no control characters, and one whose volume id
 * every node accepts (the rule the nodes check too, @pmem-csi/api volumeNameProblem), so the
 * controller never forwards a volume the node would refuse and never echoes an oversized name in
 * volume_context. @throws InvalidArgumentError naming `name` and what is allowed
 */
export function volumeName(value: string): string {
  const problem = volumeNameProblem(value, 'name');
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  return value;
}
