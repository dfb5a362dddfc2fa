// Retry delays of the registrar: exponential (1 s doubling up to 30 s by default) with jitter, so a
// restarted controller is not hit by every node in the same instant.

export interface BackoffPolicy {
  /** Delay after the first failure. */
  readonly initialMs: number;
  /** Upper bound of the exponential part. */
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000 };

/**
 * Delay before retry number `attempt` (0 = after the first failure): min(max, initial·2^attempt),
 * of which the upper half is random ("equal jitter"), so it lies in [d/2, d].
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const exp = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(Math.max(attempt, 0), 30));
  const half = exp / 2;
  return Math.round(half + half * Math.min(Math.max(random(), 0), 1));
}
