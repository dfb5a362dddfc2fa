// Which volume capabilities this node honours. PMEM is local to one node, so only SINGLE_NODE_*
// access modes; a filesystem (ext4 or xfs) or the raw block device. The node-controller service
// uses the checks for CreateVolume/ValidateVolumeCapabilities, the node service for stage/publish,
// where the capability is also turned into a typed request (fs type, validated mount flags).
import { InvalidArgumentError, type csi } from '@pmem-csi/runtime';
import { fsTypeOf, SUPPORTED_FS_TYPES, type FsType } from '../mount/filesystem.js';
import { validateMountFlags } from '../mount/mount-options.js';

export const SUPPORTED_ACCESS_MODES = ['SINGLE_NODE_WRITER', 'SINGLE_NODE_READER_ONLY', 'SINGLE_NODE_SINGLE_WRITER', 'SINGLE_NODE_MULTI_WRITER'] as const;
const MODES = new Set<string>(SUPPORTED_ACCESS_MODES);
const ALLOWED_MODES = SUPPORTED_ACCESS_MODES.join(', ');

/** Why a capability is unsupported, or undefined. */
export function capabilityProblem(cap: csi.VolumeCapability__Output, field: string): string | undefined {
  const mode = cap.access_mode?.mode;
  if (mode === undefined || mode === 'UNKNOWN') return `${field}.access_mode is required; allowed: ${ALLOWED_MODES}`;
  if (!MODES.has(mode)) return `${field}.access_mode ${mode} is not supported: PMEM volumes are local to one node; allowed: ${ALLOWED_MODES}`;
  if (cap.access_type === 'block') return undefined;
  if (cap.access_type !== 'mount') return `${field} needs an access_type: mount or block`;
  const fsType = cap.mount?.fs_type ?? '';
  if (fsType !== '' && !(SUPPORTED_FS_TYPES as readonly string[]).includes(fsType)) {
    return `${field}.mount.fs_type ${JSON.stringify(fsType)} is not supported; allowed: ${SUPPORTED_FS_TYPES.join(', ')} (or empty for the default)`;
  }
  return undefined;
}

/** The first problem among `caps`, or undefined. */
export function capabilitiesProblem(caps: readonly csi.VolumeCapability__Output[], field = 'volume_capabilities'): string | undefined {
  for (const [i, cap] of caps.entries()) {
    const problem = capabilityProblem(cap, `${field}[${i}]`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** InvalidArgument unless every capability is supported and (when `required`) there is one. */
export function checkCapabilities(caps: readonly csi.VolumeCapability__Output[], required: boolean): void {
  if (required && caps.length === 0) throw new InvalidArgumentError('volume_capabilities is required: give at least one capability');
  const problem = capabilitiesProblem(caps);
  if (problem !== undefined) throw new InvalidArgumentError(problem);
}

/** A node-side capability: raw block, or a filesystem with validated mount flags. */
export type AccessRequest =
  | { readonly kind: 'block' }
  | { readonly kind: 'mount'; readonly fsType: FsType; readonly flags: readonly string[] };

/** Validate the `volume_capability` of a node RPC and type it. @throws InvalidArgumentError naming the field */
export function accessRequest(cap: csi.VolumeCapability__Output | null, field = 'volume_capability'): AccessRequest {
  if (cap === null || cap === undefined) throw new InvalidArgumentError(`${field} is required`);
  const problem = capabilityProblem(cap, field);
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  if (cap.access_type === 'block') return { kind: 'block' };
  return mountRequest(cap.mount ?? undefined, `${field}.mount`);
}

function mountRequest(mount: csi.VolumeCapability__Output['mount'] | undefined, field: string): AccessRequest {
  if ((mount?.volume_mount_group ?? '') !== '') {
    throw new InvalidArgumentError(`${field}.volume_mount_group is not supported by this driver (no VOLUME_MOUNT_GROUP capability)`);
  }
  return {
    kind: 'mount',
    fsType: fsTypeOf(mount?.fs_type ?? '', `${field}.fs_type`),
    flags: validateMountFlags(mount?.mount_flags ?? [], `${field}.mount_flags`),
  };
}
