// Validation of CSI requests, done once into typed plans. The central controller and the node's
// node-controller service parse the same CreateVolume with the same function, so they accept and
// refuse the same requests with the same messages. Every problem is an InvalidArgument (OutOfRange
// for sizes beyond what we can represent) whose message names the field and what is allowed.
//
// Size policy: CSI lets both required_bytes and limit_bytes be 0 ("no preference"). Then
// DEFAULT_VOLUME_SIZE is asked for, capped by limit_bytes when only a limit is given. The controller
// forwards that explicit size, so placement and node allocation agree on one number; the node may
// round up (alignment) but never above the limit.
import {
  parseVolumeParameters,
  volumeIdForName,
  volumeNameProblem,
  type VolumeParameterOrigin,
  type VolumeParameters,
} from '@pmem-csi/api';
import { DEFAULT_VOLUME_SIZE, formatBytes, parseBytes } from './bytes.js';
import { checkCapabilities } from './capabilities.js';
import { atFilesystemMinimum } from './fs-minimum.js';
import { InvalidArgumentError } from './errors.js';
import type { CapacityRangeInput, ContentSourceInput, CreateVolumeInput } from './wire.js';

/** A required string field; empty → InvalidArgument naming it. */
export function requireField(value: string, field: string): string {
  if (value === '') throw new InvalidArgumentError(`${field} is required`);
  return value;
}

/**
 * A CreateVolume name (or an ephemeral volume's handle): at most 128 bytes (CSI), no control
 * characters, and one whose volume id every device mode accepts (@pmem-csi/api volumeNameProblem).
 * @throws InvalidArgumentError naming `field` and what is allowed
 */
export function volumeName(value: string, field = 'name'): string {
  const problem = volumeNameProblem(value, field);
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  return value;
}

/** A validated capacity range; 0 means "not given" (`limit` 0 = unlimited). */
export interface SizeRange {
  readonly required: number;
  readonly limit: number;
}

/** A validated range and the size to create for it. */
export interface SizeRequest extends SizeRange {
  readonly size: number;
}

/** Validate capacity_range (at `field`). */
export function sizeRange(range: CapacityRangeInput | null | undefined, field = 'capacity_range'): SizeRange {
  const required = parseBytes(range?.required_bytes, `${field}.required_bytes`);
  const limit = parseBytes(range?.limit_bytes, `${field}.limit_bytes`);
  if (limit > 0 && limit < required) {
    throw new InvalidArgumentError(
      `${field}.limit_bytes (${formatBytes(limit)}) must not be smaller than ${field}.required_bytes (${formatBytes(required)})`,
    );
  }
  return { required, limit };
}

/** Validate capacity_range and pick the size to create: required, else the default capped by the limit. */
export function sizeRequest(
  range: CapacityRangeInput | null | undefined,
  defaultSize: number = DEFAULT_VOLUME_SIZE,
): SizeRequest {
  const { required, limit } = sizeRange(range);
  if (required > 0) return { required, limit, size: required };
  return { required, limit, size: limit > 0 ? Math.min(limit, defaultSize) : defaultSize };
}

/** Whether a volume of `capacity` bytes satisfies the range. */
export function sizeFits(capacity: number, range: SizeRange): boolean {
  return capacity >= range.required && (range.limit === 0 || capacity <= range.limit);
}

/** The requested range in words, for AlreadyExists messages. */
export function describeRange(range: SizeRange): string {
  const min = range.required > 0 ? `at least ${formatBytes(range.required)}` : '';
  const max = range.limit > 0 ? `at most ${formatBytes(range.limit)}` : '';
  return [min, max].filter((s) => s !== '').join(' and ') || 'any size';
}

/** Parse parameters of `origin`; bad keys or values → InvalidArgument listing every problem. */
export function checkParameters(
  params: Readonly<Record<string, string>>,
  origin: VolumeParameterOrigin,
): VolumeParameters {
  const result = parseVolumeParameters(params, origin);
  if (!result.ok) throw new InvalidArgumentError(result.message);
  return result.value;
}

/** Snapshots and clones are not supported (no CREATE_DELETE_SNAPSHOT / CLONE_VOLUME capability). */
export function checkContentSource(source: ContentSourceInput | null | undefined): void {
  if (source === null || source === undefined) return;
  const kind = source.type ?? (source.snapshot ? 'snapshot' : source.volume ? 'volume' : undefined);
  if (kind === undefined) return;
  throw new InvalidArgumentError(
    `volume_content_source (${kind}) is not supported: this driver cannot create volumes from snapshots or clone volumes; omit volume_content_source`,
  );
}

/** A validated CreateVolume: what both the controller and the node act on. */
export interface CreateVolumePlan {
  readonly name: string;
  /** The deterministic id of `name` (@pmem-csi/api volumeIdForName). */
  readonly volumeId: string;
  readonly size: SizeRequest;
  readonly parameters: VolumeParameters;
}

/**
 * Validate a CreateVolume request into a plan (no side effects): name, capacity range and size
 * (raised to the filesystem's minimum when the limit allows: fs-minimum.ts), capabilities (at least one), StorageClass parameters, no content source, no mutable parameters.
 * @throws InvalidArgumentError or OutOfRangeError naming the field
 */
export function planCreateVolume(req: CreateVolumeInput, defaultSize: number = DEFAULT_VOLUME_SIZE): CreateVolumePlan {
  const name = volumeName(req.name);
  const requested = sizeRequest(req.capacity_range, defaultSize);
  checkCapabilities(req.volume_capabilities, true);
  const size = {
    ...requested,
    size: atFilesystemMinimum(requested.size, requested.limit, req.volume_capabilities),
  };
  const parameters = checkParameters(req.parameters, 'createVolume');
  if (parameters.kataContainers) {
    const block = (req.volume_capabilities ?? []).findIndex((c) => c.block !== null && c.block !== undefined);
    if (block >= 0)
      throw new InvalidArgumentError(
        `volume_capabilities[${block}] asks for a raw block volume, which parameters.kataContainers "true" cannot give: a Kata Containers volume is a filesystem holding the VM's image file; use kataContainers "false" for raw block`,
      );
  }
  checkContentSource(req.volume_content_source);
  if (Object.keys(req.mutable_parameters ?? {}).length > 0) {
    throw new InvalidArgumentError(
      'mutable_parameters are not supported by this driver (no MODIFY_VOLUME capability); omit them',
    );
  }
  return { name, volumeId: volumeIdForName(name), size, parameters };
}
