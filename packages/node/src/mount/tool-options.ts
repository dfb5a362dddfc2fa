// Time limits for the host tools of the mount layer. Every call also carries the RPC's AbortSignal,
// so a call never outlives its gRPC deadline; these limits catch tools that hang on their own
// (the Go driver had none, and kubelet retries piled up stuck children).

/** Per-call options of the mount helpers: the caller's signal (tied to the gRPC deadline). */
export interface ToolCallOptions {
  readonly signal?: AbortSignal;
}

/** Limits in ms by kind of work. */
export const TOOL_TIMEOUTS = {
  /** findmnt, blkid, dumpe2fs -h: read-only queries. */
  query: 15_000,
  /** mount, umount. */
  mount: 60_000,
  /** mkfs.*, e2fsck, resize2fs, xfs_growfs: proportional to the device size, so generous. */
  format: 600_000,
} as const;
