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

//
// A lease held by a connection (node-registry.ts): a registration or renewal that came over a
// connection the registry's listener tracks (runtime ConnectionTracker) is bound to it, and the
// registry learns at once when that connection closes (the node's process ended, its host went away:
// TCP keepalive). Such a lease can be long without slowing the detection of a dead node, so it is
// sized for far fewer renewals: clamp(3 × nodes / heldRenewalsPerSecond, leaseSeconds,
// maxHeldLeaseSeconds) — 30 s up to 250 nodes, 600 s at 5,000 (25 renewals per second instead of
// 150). When the connection closes the lease is cut to at most the base lease from then. What a held
// lease still waits out in full is a node process whose event loop hangs with its connection open (the
// kernel keeps answering for it; the pod's TCP liveness probe too): up to 600 s at 5,000 nodes, where
// the unheld lease was 100 s. A renewal remains the node's capacity report between volume changes
// (those push at once).
//
// The settle period does not grow with the held lease: a node whose connection to the controller
// closes (a controller restart closes them all) renews at once instead of waiting for its renewal
// time (packages/node/src/registration/registrar.ts), so it re-registers within the settle period
// computed for unheld leases.

export const DEFAULT_LEASE_SECONDS = 30;
/** The longest lease is this many times the base lease unless configured. */
export const DEFAULT_MAX_LEASE_FACTOR = 4;
export const DEFAULT_RENEWALS_PER_SECOND = 150;
/** Renewal rate that leases held by a connection are sized for. */
export const DEFAULT_HELD_RENEWALS_PER_SECOND = 25;
/** The longest held lease is this many times the base lease unless configured. */
export const DEFAULT_MAX_HELD_LEASE_FACTOR = 20;

export interface LeaseOptions {
  /** Lease length in seconds of a small cluster (default 30); nodes renew at a third of it. */
  readonly leaseSeconds?: number;
  /** Longest lease granted as the cluster grows (default 4 × leaseSeconds; leaseSeconds = no scaling). */
  readonly maxLeaseSeconds?: number;
  /** Renewal rate the lease is sized for (default 150 per second). */
  readonly renewalsPerSecond?: number;
  /** Renewal rate a lease held by a connection is sized for (default 25 per second). */
  readonly heldRenewalsPerSecond?: number;
  /** Longest lease held by a connection (default 20 × leaseSeconds, never below maxLeaseSeconds). */
  readonly maxHeldLeaseSeconds?: number;
}

/** LeaseOptions with the defaults applied. */
export interface LeasePolicy {
  readonly leaseSeconds: number;
  readonly maxLeaseSeconds: number;
  readonly renewalsPerSecond: number;
  readonly heldRenewalsPerSecond: number;
  readonly maxHeldLeaseSeconds: number;
}

function positive(value: number, field: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${field} must be a positive number, got ${value}`);
  return value;
}

/** The policy of `options`: defaults applied, the longest lease never below the base lease. */
export function leasePolicy(options: LeaseOptions = {}): LeasePolicy {
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
  const maxLeaseSeconds = Math.max(leaseSeconds, options.maxLeaseSeconds ?? DEFAULT_MAX_LEASE_FACTOR * leaseSeconds);
  return {
    leaseSeconds,
    maxLeaseSeconds,
    renewalsPerSecond: options.renewalsPerSecond ?? DEFAULT_RENEWALS_PER_SECOND,
    heldRenewalsPerSecond: positive(
      options.heldRenewalsPerSecond ?? DEFAULT_HELD_RENEWALS_PER_SECOND,
      'heldRenewalsPerSecond',
    ),
    maxHeldLeaseSeconds: Math.max(
      maxLeaseSeconds,
      positive(options.maxHeldLeaseSeconds ?? DEFAULT_MAX_HELD_LEASE_FACTOR * leaseSeconds, 'maxHeldLeaseSeconds'),
    ),
  };
}

/** The lease for a cluster of `nodes` (see the header). */
export function leaseSecondsFor(nodes: number, o: LeasePolicy): number {
  const wanted = Math.ceil((3 * nodes) / o.renewalsPerSecond);
  return Math.max(o.leaseSeconds, Math.min(o.maxLeaseSeconds, wanted));
}

/** The lease held by a connection for a cluster of `nodes` (see the header); never below the unheld lease. */
export function heldLeaseSecondsFor(nodes: number, o: LeasePolicy): number {
  const wanted = Math.ceil((3 * nodes) / o.heldRenewalsPerSecond);
  return Math.max(leaseSecondsFor(nodes, o), Math.min(o.maxHeldLeaseSeconds, wanted));
}

/**
 * The default start-up settle period for these leases: 1.5 × the base lease (a node notices the
 * restart at its next renewal, a third of its lease later, and the rest is slack for retries),
 * plus the longer renewal interval of the longest lease the controller may have granted.
 */
export function settleMsFor(leaseSeconds: number, maxLeaseSeconds: number): number {
  return leaseSeconds * 1500 + (Math.max(0, maxLeaseSeconds - leaseSeconds) * 1000) / 3;
}
