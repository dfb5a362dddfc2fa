// The controller's estimate of a node's capacity between the node's own reports: what a create or a
// delete made through this controller changed. Pure.
import type { Capacity } from '@pmem-csi/csi';

/**
 * The capacity after the controller created (`delta` < 0) or deleted (`delta` > 0) a volume of
 * |delta| bytes on the node, until the node reports again. Free bytes move by |delta|, clamped to
 * [0, managed]. A node whose largest volume is all its free space (LVM, no fragmentation) keeps it
 * that way; otherwise the estimate is the lower bound: a create took at most |delta| from the
 * largest free extent (nothing when it did not fit there), a delete freed an extent of at least
 * |delta| and never shrank one.
 */
export function adjustCapacity(c: Capacity, delta: number): Capacity {
  const ceiling = c.managed > 0 ? Math.max(c.managed, c.available) : Number.MAX_SAFE_INTEGER;
  const available = Math.min(ceiling, Math.max(0, c.available + delta));
  let maxVolumeSize: number;
  if (c.maxVolumeSize >= c.available) maxVolumeSize = available;
  else if (delta > 0) maxVolumeSize = Math.max(c.maxVolumeSize, delta);
  else if (-delta > c.maxVolumeSize)
    maxVolumeSize = c.maxVolumeSize; // did not fit the largest extent: came from elsewhere
  else maxVolumeSize = c.maxVolumeSize + delta;
  return { ...c, available, maxVolumeSize: Math.min(maxVolumeSize, available) };
}
