// Which volume capabilities the driver supports. PMEM volumes live on one node, so only the
// SINGLE_NODE_* access modes can be honoured; MULTI_NODE_* would promise sharing across nodes
// that a local device cannot give. Both access types work: a filesystem (ext4 or xfs, mounted with
// dax by the node) or the raw block device. One checker serves the controller's and the node's
// CreateVolume, GetCapacity and stage/publish (invalid → InvalidArgument naming the field) and
// ValidateVolumeCapabilities (→ not confirmed).
import { InvalidArgumentError } from './errors.js';
import type { VolumeCapabilityInput } from './wire.js';

export const SUPPORTED_ACCESS_MODES = [
  'SINGLE_NODE_WRITER',
  'SINGLE_NODE_READER_ONLY',
  'SINGLE_NODE_SINGLE_WRITER',
  'SINGLE_NODE_MULTI_WRITER',
] as const;

/** Filesystems the node can create; an empty fs_type means DEFAULT_FS_TYPE. */
export const SUPPORTED_FS_TYPES = ['ext4', 'xfs'] as const;
export type FsType = (typeof SUPPORTED_FS_TYPES)[number];
/** Filesystem used when a mount volume asks for none. */
export const DEFAULT_FS_TYPE: FsType = 'ext4';

const MODES = new Set<string>(SUPPORTED_ACCESS_MODES);
const ALLOWED_MODES = SUPPORTED_ACCESS_MODES.join(', ');

/** Whether `fsType` is one the node can create. */
export function isFsType(fsType: string): fsType is FsType {
  return (SUPPORTED_FS_TYPES as readonly string[]).includes(fsType);
}

/** The requested filesystem type ("" → the default). @throws InvalidArgumentError naming `field` */
export function fsTypeOf(requested: string, field: string): FsType {
  if (requested === '') return DEFAULT_FS_TYPE;
  if (isFsType(requested)) return requested;
  throw new InvalidArgumentError(
    `${field} ${JSON.stringify(requested)} is not supported; allowed: ${SUPPORTED_FS_TYPES.join(', ')} (or empty for ${DEFAULT_FS_TYPE})`,
  );
}

/** Why capability `cap` (at `field`) is unsupported, or undefined when it is supported. */
export function capabilityProblem(cap: VolumeCapabilityInput, field: string): string | undefined {
  const mode = cap.access_mode?.mode;
  if (mode === undefined || mode === 'UNKNOWN') return `${field}.access_mode is required; allowed: ${ALLOWED_MODES}`;
  if (!MODES.has(mode))
    return `${field}.access_mode ${mode} is not supported: PMEM volumes are local to one node; allowed: ${ALLOWED_MODES}`;
  if (cap.access_type === 'block') return undefined;
  if (cap.access_type !== 'mount') return `${field} needs an access_type: mount or block`;
  const fsType = cap.mount?.fs_type ?? '';
  if (fsType !== '' && !isFsType(fsType)) {
    return `${field}.mount.fs_type ${JSON.stringify(fsType)} is not supported; allowed: ${SUPPORTED_FS_TYPES.join(', ')} (or empty for the default)`;
  }
  return undefined;
}

/** The first problem among `caps`, or undefined when all are supported. */
export function capabilitiesProblem(
  caps: readonly VolumeCapabilityInput[],
  field = 'volume_capabilities',
): string | undefined {
  for (const [i, cap] of caps.entries()) {
    const problem = capabilityProblem(cap, `${field}[${i}]`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Throw InvalidArgument unless every capability is supported (and, when `required`, there is one). */
export function checkCapabilities(caps: readonly VolumeCapabilityInput[], required: boolean): void {
  if (required && caps.length === 0)
    throw new InvalidArgumentError('volume_capabilities is required: give at least one capability');
  const problem = capabilitiesProblem(caps);
  if (problem !== undefined) throw new InvalidArgumentError(problem);
}
