// The smallest volume a filesystem can be made on. mkfs.xfs (xfsprogs >= 5.19) refuses filesystems
// under 300 MiB; ext4 has no practical minimum for our sizes. CreateVolume applies it, so a claim for
// 16 MiB of xfs gets a volume mkfs can format instead of one that binds and then fails at
// NodeStageVolume with the pod stuck in ContainerCreating (found by Kubernetes' External Storage suite,
// issue 25). CSI lets a plugin create more than required_bytes when limit_bytes allows it; when the
// limit does not, the request is refused up front.
import { formatBytes } from './bytes.js';
import { fsTypeOf, type FsType } from './capabilities.js';
import { OutOfRangeError } from './errors.js';
import type { VolumeCapabilityInput } from './wire.js';

/** mkfs.xfs's minimum filesystem size. */
export const XFS_MIN_BYTES = 300 * 1024 * 1024;

/** The smallest volume `fsType` can be made on (0: no minimum). */
export function filesystemMinimum(fsType: FsType): number {
  return fsType === 'xfs' ? XFS_MIN_BYTES : 0;
}

/** The largest filesystem minimum among the mount capabilities of `caps`, with where it comes from. */
export function capabilitiesMinimum(
  caps: readonly VolumeCapabilityInput[],
  field = 'volume_capabilities',
): { readonly bytes: number; readonly reason: string } {
  let best = { bytes: 0, reason: '' };
  for (const [i, cap] of caps.entries()) {
    if (cap.access_type !== 'mount') continue;
    const fsField = `${field}[${i}].mount.fs_type`;
    const fsType = fsTypeOf(cap.mount?.fs_type ?? '', fsField);
    const bytes = filesystemMinimum(fsType);
    if (bytes > best.bytes) best = { bytes, reason: `${fsField} ${fsType} needs at least ${formatBytes(bytes)}` };
  }
  return best;
}

/**
 * Raise `size` to the filesystem minimum of `caps` when `limit` (0 = none) allows it.
 * @throws OutOfRangeError naming the limit, the fs type and its minimum when it does not
 */
export function atFilesystemMinimum(
  size: number,
  limit: number,
  caps: readonly VolumeCapabilityInput[],
  limitField = 'capacity_range.limit_bytes',
): number {
  const min = capabilitiesMinimum(caps);
  if (size >= min.bytes) return size;
  if (limit > 0 && limit < min.bytes) {
    throw new OutOfRangeError(
      `${limitField} (${formatBytes(limit)}) is below the smallest volume the filesystem can be made on: ${min.reason}; raise the limit or use ext4`,
    );
  }
  return min.bytes;
}
