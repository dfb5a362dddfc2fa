// How long a registration lasts. A node renews at a third of its lease; one that stops renewing
// becomes unavailable when the lease runs out (node-registry.ts). Pure: no clock, no I/O.
//
// Scale (5,000 nodes on a 2-core controller): the lease grows with the number of known nodes, so that
// renewals stay a small, bounded load: lease = clamp(3 × nodes / renewalsPerSecond, leaseSeconds,
// maxLeaseSeconds), i.e. at most `renewalsPerSecond` renewals per second. Defaults: 30 s up to 1,500
// nodes, 100 s at 5,000, at most 4 × the base lease = 120 s (from 6,000); a short base lease (tests,
// local stacks) keeps a short maximum, and so a short settle period. A renewal's cost is nearly all
// gRPC and per-call work, not this bookkeeping (packages/controller/bench/registry.bench.ts measures
// both): a fixed 30 s lease at 5,000 nodes would mean 500 renewals per second, not 150. The price is
// slower detection of a dead node in big clusters (up to the lease); CreateVolume on such a node fails
// UNAVAILABLE until its lease runs out, and placement skips nodes whose lease ran out. Every reply
// quotes the lease it grants and the expiry uses that value, so a lease that changes with the cluster
// size never expires a node early. A restarted controller does not know how long the leases it granted
// before were: the default settle period (volumes/volume-index.ts) covers the renewal interval of the
// longest lease it may grant — settleMsFor(): 75 s with the defaults, so a restarted controller never
// answers CreateVolume for an unknown name before every live node had its chance to register again and
// report its volumes.

export const DEFAULT_LEASE_SECONDS = 30;
/** The longest lease is this many times the base lease unless configured. */
export const DEFAULT_MAX_LEASE_FACTOR = 4;
export const DEFAULT_RENEWALS_PER_SECOND = 150;

export interface LeaseOptions {
  /** Lease length in seconds of a small cluster (default 30); nodes renew at a third of it. */
  readonly leaseSeconds?: number;
  /** Longest lease granted as the cluster grows (default 4 × leaseSeconds; leaseSeconds = no scaling). */
  readonly maxLeaseSeconds?: number;
  /** Renewal rate the lease is sized for (default 150 per second). */
  readonly renewalsPerSecond?: number;
}

/** LeaseOptions with the defaults applied. */
export interface LeasePolicy {
  readonly leaseSeconds: number;
  readonly maxLeaseSeconds: number;
  readonly renewalsPerSecond: number;
}

/** The policy of `options`: defaults applied, the longest lease never below the base lease. */
export function leasePolicy(options: LeaseOptions = {}): LeasePolicy {
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
  return {
    leaseSeconds,
    maxLeaseSeconds: Math.max(leaseSeconds, options.maxLeaseSeconds ?? DEFAULT_MAX_LEASE_FACTOR * leaseSeconds),
    renewalsPerSecond: options.renewalsPerSecond ?? DEFAULT_RENEWALS_PER_SECOND,
  };
}

/** The lease for a cluster of `nodes` (see the header). */
export function leaseSecondsFor(nodes: number, o: LeasePolicy): number {
  const wanted = Math.ceil((3 * nodes) / o.renewalsPerSecond);
  return Math.max(o.leaseSeconds, Math.min(o.maxLeaseSeconds, wanted));
}

/**
 * The default start-up settle period for these leases: 1.5 × the base lease (a node notices the
 * restart at its next renewal, a third of its lease later, and the rest is slack for retries),
 * plus the longer renewal interval of the longest lease the controller may have granted.
 */
export function settleMsFor(leaseSeconds: number, maxLeaseSeconds: number): number {
  return leaseSeconds * 1500 + (Math.max(0, maxLeaseSeconds - leaseSeconds) * 1000) / 3;
}
