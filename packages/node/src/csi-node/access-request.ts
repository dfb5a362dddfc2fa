// The node side of a volume capability: after the shared check (@pmem-csi/csi capabilityProblem),
// NodeStage/NodePublish turn the capability into a typed request — raw block, or a filesystem type
// with validated mount flags (the node's mount policy, mount/mount-options.ts).
import {
  capabilityProblem,
  fsTypeOf,
  InvalidArgumentError,
  type FsType,
  type SUPPORTED_ACCESS_MODES,
  type csi,
} from '@pmem-csi/csi';
import { validateMountFlags } from '../mount/mount-options.js';

/** An access mode the driver supports (the only ones capabilityProblem lets through). */
export type AccessMode = (typeof SUPPORTED_ACCESS_MODES)[number];

/** A node-side capability: raw block, or a filesystem with validated mount flags; with its access mode. */
export type AccessRequest = { readonly mode: AccessMode } & (
  { readonly kind: 'block' } | { readonly kind: 'mount'; readonly fsType: FsType; readonly flags: readonly string[] }
);

/** Validate the `volume_capability` of a node RPC and type it. @throws InvalidArgumentError naming the field */
export function accessRequest(cap: csi.VolumeCapability__Output | null, field = 'volume_capability'): AccessRequest {
  if (cap === null || cap === undefined) throw new InvalidArgumentError(`${field} is required`);
  const problem = capabilityProblem(cap, field);
  if (problem !== undefined) throw new InvalidArgumentError(problem);
  // capabilityProblem lets only SUPPORTED_ACCESS_MODES through.
  const mode = cap.access_mode?.mode as AccessMode;
  if (cap.access_type === 'block') return { kind: 'block', mode };
  return { mode, ...mountRequest(cap.mount ?? undefined, `${field}.mount`) };
}

function mountRequest(
  mount: csi.VolumeCapability__Output['mount'] | undefined,
  field: string,
): { kind: 'mount'; fsType: FsType; flags: readonly string[] } {
  if ((mount?.volume_mount_group ?? '') !== '') {
    throw new InvalidArgumentError(
      `${field}.volume_mount_group is not supported by this driver (no VOLUME_MOUNT_GROUP capability)`,
    );
  }
  return {
    kind: 'mount',
    fsType: fsTypeOf(mount?.fs_type ?? '', `${field}.fs_type`),
    flags: validateMountFlags(mount?.mount_flags ?? [], `${field}.mount_flags`),
  };
}
