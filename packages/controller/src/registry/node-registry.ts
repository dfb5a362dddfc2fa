// The controller's knowledge of node drivers. A registration is a lease: a node that stops renewing
// becomes *unavailable*, never forgotten, because its volumes still belong to it (forgetting it is
// how the Go driver came to report deletes as done that it never made). A renewal quoting an
// unknown or expired registration gets NOT_FOUND so the node registers again; every registration
// is followed by a volume listing (volumes/volume-reconciler.ts) unless the node sent an inventory that can be
// trusted, and the node counts as available only once its volumes are known. Pure bookkeeping
// with an injectable clock: no I/O here.
//
// Scale (5,000 nodes on a 2-core controller):
// - Lease length grows with the number of known nodes, so that renewals stay a small, bounded
//   load: lease = clamp(3 × nodes / renewalsPerSecond, leaseSeconds, maxLeaseSeconds), i.e. at most
//   `renewalsPerSecond` renewals per second (nodes renew at a third of their lease). Defaults:
//   30 s up to 1,500 nodes, 100 s at 5,000, at most 4 × the base lease = 120 s (from 6,000); a
//   short base lease (tests, local stacks) keeps a short maximum, and so a short settle period. Measured (bench/
//   registry.bench.ts --grpc): a renewal costs the controller ~0.6 ms of CPU over mTLS, nearly all
//   of it gRPC and per-call work (the same without TLS; this bookkeeping is ~5 µs), so 150/s is
//   ~9% of a core — a fixed 30 s lease at 5,000 nodes would be 500/s, ~30% (92% measured before
//   the per-call costs went down). The price is slower detection of a dead node in big clusters
//   (up to the lease); CreateVolume on such a node fails UNAVAILABLE until its lease runs out, as
//   before, and placement already skips nodes whose lease ran out. Every reply quotes the lease it
//   grants and the expiry uses that value, so a lease that changes with the cluster size never
//   expires a node early. A restarted controller does not know how long the leases it granted
//   before were: the default settle period (volumes/volume-index.ts) covers the renewal interval of the
//   longest lease it may grant (maxLeaseSeconds / 3) — settleMsFor(): 75 s with the defaults, so
//   a restarted controller never answers CreateVolume for an unknown name before every live node
//   had its chance to register again and report its volumes.
// - Placement reads an order of all nodes by maximum volume size (largest first, ties by node id
//   in code-unit order), kept sorted as capacities change (copy-on-write: an iteration that spans
//   an await keeps the order it started with). A CreateVolume walks it from the top and stops at
//   the first node too small: no list of every node, no sort, per call. Views (NodeView) are made
//   only for nodes handed out.
// - Whether every node's volumes are known is a counter (CreateVolume asks on every call).
import { randomUUID } from 'node:crypto';
import type { Capacity } from '@pmem-csi/csi';
import { NotFoundError, nullLogger, type Logger } from '@pmem-csi/runtime';

/**
 * - syncing: registered, its volumes are being listed; not used for placement yet.
 * - available: registered, lease valid, volumes known.
 * - unavailable: lease expired, or the listing failed (registration revoked); volumes stay its own.
 * - unregistered: the node said goodbye (orderly shutdown); volumes stay its own.
 */
export type NodeState = 'syncing' | 'available' | 'unavailable' | 'unregistered';

export interface NodeView {
  readonly nodeId: string;
  readonly endpoint: string;
  readonly state: NodeState;
  /** Why the node is not available, when it is not. */
  readonly reason: string | undefined;
  readonly capacity: Capacity;
  readonly deviceMode: string;
  readonly version: string;
  readonly registeredAt: Date;
  readonly leaseExpiresAt: Date | undefined;
  /** Whether the node's volumes were listed at least once since this controller started. */
  readonly volumesKnown: boolean;
}

export interface RegisterInput {
  readonly nodeId: string;
  readonly endpoint: string;
  readonly capacity: Capacity;
  readonly deviceMode: string;
  readonly version: string;
}

/** One accepted registration; `previousEndpoint` is set when the node moved. */
export interface Registration {
  readonly nodeId: string;
  readonly registrationId: string;
  readonly endpoint: string;
  readonly previousEndpoint: string | undefined;
  /** The lease granted with this registration. */
  readonly leaseSeconds: number;
}

export interface NodeRegistryOptions {
  /** Lease length in seconds of a small cluster (default 30); nodes renew at a third of it. */
  readonly leaseSeconds?: number;
  /** Longest lease granted as the cluster grows (default 4 × leaseSeconds; leaseSeconds = no scaling). */
  readonly maxLeaseSeconds?: number;
  /** Renewal rate the lease is sized for (default 150 per second). */
  readonly renewalsPerSecond?: number;
  readonly now?: () => number;
  readonly log?: Logger;
  /** Called once per registration whose lease ran out without renewal (pmem_csi_controller_lease_expiries_total). */
  readonly onLeaseExpired?: (nodeId: string) => void;
}

export const DEFAULT_LEASE_SECONDS = 30;
/** The longest lease is this many times the base lease unless configured. */
export const DEFAULT_MAX_LEASE_FACTOR = 4;
export const DEFAULT_RENEWALS_PER_SECOND = 150;

/**
 * The default start-up settle period for these leases: 1.5 × the base lease (a node notices the
 * restart at its next renewal, a third of its lease later, and the rest is slack for retries),
 * plus the longer renewal interval of the longest lease the controller may have granted.
 */
export function settleMsFor(leaseSeconds: number, maxLeaseSeconds: number): number {
  return leaseSeconds * 1500 + (Math.max(0, maxLeaseSeconds - leaseSeconds) * 1000) / 3;
}

/** The lease for a cluster of `nodes` (see the header). */
export function leaseSecondsFor(
  nodes: number,
  o: { leaseSeconds: number; maxLeaseSeconds: number; renewalsPerSecond: number },
): number {
  const wanted = Math.ceil((3 * nodes) / o.renewalsPerSecond);
  return Math.max(o.leaseSeconds, Math.min(o.maxLeaseSeconds, wanted));
}

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

interface NodeRecord {
  readonly nodeId: string;
  endpoint: string;
  registrationId: string | undefined;
  capacity: Capacity;
  /** Where the record sits in the placement order (replaced when its maxVolumeSize changes). */
  entry: OrderEntry;
  /** Bumped by every local capacity adjustment (see capacityStamp). */
  capacityStamp: number;
  /** Bumped by every capacity the node reported itself (registration, renewal, refresh; see capacityReports). */
  capacityReports: number;
  deviceMode: string;
  version: string;
  registeredAt: number;
  leaseExpiresAt: number;
  listed: boolean;
  volumesKnown: boolean;
  unregistered: boolean;
  reason: string | undefined;
  expiryLogged: boolean;
}

/** A node's place in the placement order; immutable, so an order once read never changes under a reader. */
interface OrderEntry {
  readonly maxVolumeSize: number;
  readonly nodeId: string;
}

/** Largest maximum volume size first, ties by node id in code-unit order (deterministic, no locale). */
function compareOrder(a: OrderEntry, b: OrderEntry): number {
  if (a.maxVolumeSize !== b.maxVolumeSize) return b.maxVolumeSize - a.maxVolumeSize;
  if (a.nodeId === b.nodeId) return 0;
  return a.nodeId < b.nodeId ? -1 : 1;
}

/** The first position in `order` whose entry sorts at or after `entry`. */
function lowerBound(order: readonly OrderEntry[], entry: OrderEntry): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareOrder(order[mid] as OrderEntry, entry) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const byId = (a: NodeView, b: NodeView): number => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0);

export class NodeRegistry {
  readonly #nodes = new Map<string, NodeRecord>();
  /** One entry per record, largest maximum volume size first; replaced (never mutated) on change. */
  #order: readonly OrderEntry[] = [];
  /** Records whose volumes were never listed since this controller started. */
  #unknownVolumes = 0;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #onLeaseExpired: ((nodeId: string) => void) | undefined;
  readonly #lease: { leaseSeconds: number; maxLeaseSeconds: number; renewalsPerSecond: number };

  constructor(options: NodeRegistryOptions = {}) {
    const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    this.#lease = {
      leaseSeconds,
      maxLeaseSeconds: Math.max(leaseSeconds, options.maxLeaseSeconds ?? DEFAULT_MAX_LEASE_FACTOR * leaseSeconds),
      renewalsPerSecond: options.renewalsPerSecond ?? DEFAULT_RENEWALS_PER_SECOND,
    };
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? nullLogger;
    this.#onLeaseExpired = options.onLeaseExpired;
  }

  /** The lease of a small cluster (the shortest granted). */
  get baseLeaseSeconds(): number {
    return this.#lease.leaseSeconds;
  }

  /** The longest lease this registry ever grants. */
  get maxLeaseSeconds(): number {
    return this.#lease.maxLeaseSeconds;
  }

  /** The lease granted now, for the current number of known nodes. */
  get leaseSeconds(): number {
    return leaseSecondsFor(this.#nodes.size, this.#lease);
  }

  /** Number of known nodes (any state). */
  get size(): number {
    return this.#nodes.size;
  }

  /** Accept a (re)registration; the previous registration of the node, if any, ends. */
  register(input: RegisterInput): Registration {
    const now = this.#now();
    const old = this.#nodes.get(input.nodeId);
    const registrationId = randomUUID();
    const previousEndpoint = old !== undefined && old.endpoint !== input.endpoint ? old.endpoint : undefined;
    const rec: NodeRecord = old ?? {
      nodeId: input.nodeId,
      endpoint: input.endpoint,
      registrationId: undefined,
      capacity: input.capacity,
      entry: { maxVolumeSize: input.capacity.maxVolumeSize, nodeId: input.nodeId },
      capacityStamp: 0,
      capacityReports: 0,
      deviceMode: input.deviceMode,
      version: input.version,
      registeredAt: now,
      leaseExpiresAt: now,
      listed: false,
      volumesKnown: false,
      unregistered: false,
      reason: undefined,
      expiryLogged: false,
    };
    if (old === undefined) {
      this.#nodes.set(input.nodeId, rec);
      this.#unknownVolumes++;
      this.#insert(rec);
    }
    const leaseSeconds = this.leaseSeconds;
    Object.assign(rec, {
      endpoint: input.endpoint,
      deviceMode: input.deviceMode,
      version: input.version,
      registrationId,
      registeredAt: now,
      leaseExpiresAt: now + leaseSeconds * 1000,
      listed: false,
      unregistered: false,
      reason: undefined,
      expiryLogged: false,
    });
    this.#reportCapacity(rec, input.capacity);
    return { nodeId: input.nodeId, registrationId, endpoint: input.endpoint, previousEndpoint, leaseSeconds };
  }

  /**
   * Extend the lease and update the capacity; returns the lease granted (seconds).
   * @throws NotFoundError for an unknown or expired registration
   */
  renew(nodeId: string, registrationId: string, capacity: Capacity | undefined): number {
    const rec = this.#current(nodeId, registrationId);
    const now = this.#now();
    if (now >= rec.leaseExpiresAt) {
      if (!rec.expiryLogged) this.#onLeaseExpired?.(nodeId); // not seen by a sweep yet
      rec.expiryLogged = true;
      this.#expire(rec, 'the lease expired before it was renewed; waiting for the node to register again');
      throw unknownRegistration(nodeId);
    }
    const leaseSeconds = this.leaseSeconds;
    rec.leaseExpiresAt = now + leaseSeconds * 1000;
    if (capacity !== undefined) this.#reportCapacity(rec, capacity);
    return leaseSeconds;
  }

  /** End a registration on the node's request; the node stays known. @throws NotFoundError */
  unregister(nodeId: string, registrationId: string): void {
    const rec = this.#current(nodeId, registrationId);
    rec.registrationId = undefined;
    rec.unregistered = true;
    rec.listed = false;
    rec.reason = 'the node unregistered (shut down)';
  }

  /** Whether `registrationId` is still the node's live registration. */
  isCurrent(nodeId: string, registrationId: string): boolean {
    return this.#nodes.get(nodeId)?.registrationId === registrationId;
  }

  /** Record that the node's volumes were listed for this registration; false if it was superseded. */
  markListed(nodeId: string, registrationId: string): boolean {
    const rec = this.#nodes.get(nodeId);
    if (rec === undefined || rec.registrationId !== registrationId) return false;
    rec.listed = true;
    if (!rec.volumesKnown) this.#unknownVolumes--;
    rec.volumesKnown = true;
    return true;
  }

  /** End a registration whose volume listing failed: the node's next renewal gets NOT_FOUND. */
  revoke(nodeId: string, registrationId: string, reason: string): boolean {
    const rec = this.#nodes.get(nodeId);
    if (rec === undefined || rec.registrationId !== registrationId) return false;
    rec.registrationId = undefined;
    rec.listed = false;
    rec.reason = reason;
    return true;
  }

  /** Replace the capacity estimate of a node (a report of the node itself). */
  updateCapacity(nodeId: string, capacity: Capacity): void {
    const rec = this.#nodes.get(nodeId);
    if (rec !== undefined) this.#reportCapacity(rec, capacity);
  }

  /**
   * Account locally for a volume created (`delta` < 0) or deleted (`delta` > 0) on the node; see adjustCapacity.
   * `reportsBefore` (capacityReports read before the create or delete was sent): when the node reported its
   * capacity while the call was under way, that report may already include the change (a node pushes a renewal
   * right after each create or delete, which can arrive before the answer), so it is not applied twice; the
   * caller's scheduled refresh settles it. Returns whether the estimate was adjusted.
   */
  adjustCapacity(nodeId: string, delta: number, reportsBefore?: number): boolean {
    const rec = this.#nodes.get(nodeId);
    if (rec === undefined) return false;
    if (reportsBefore !== undefined && rec.capacityReports !== reportsBefore) return false;
    rec.capacityStamp++;
    this.#setCapacity(rec, adjustCapacity(rec.capacity, delta));
    return true;
  }

  /** Changes whenever the node reports its capacity itself; see adjustCapacity's `reportsBefore`. */
  capacityReports(nodeId: string): number {
    return this.#nodes.get(nodeId)?.capacityReports ?? 0;
  }

  /** Changes whenever adjustCapacity runs: a report asked for before a change may not include it. */
  capacityStamp(nodeId: string): number {
    return this.#nodes.get(nodeId)?.capacityStamp ?? 0;
  }

  /** The node's current view, or undefined for a node that never registered. */
  view(nodeId: string): NodeView | undefined {
    const rec = this.#nodes.get(nodeId);
    return rec === undefined ? undefined : this.#toView(rec, this.#now());
  }

  /** Whether the node is available now (live lease, volumes listed); no view is made. */
  isAvailable(nodeId: string): boolean {
    const rec = this.#nodes.get(nodeId);
    return rec !== undefined && this.#state(rec, this.#now()) === 'available';
  }

  /** All known nodes, sorted by id (status pages; not for per-call paths). */
  list(): NodeView[] {
    const now = this.#now();
    return [...this.#nodes.values()].map((rec) => this.#toView(rec, now)).sort(byId);
  }

  /**
   * Available nodes whose maximum volume size is at least `minSize` and that `allow` accepts,
   * largest first (ties by node id). Lazy: stops where the order drops below `minSize`, and makes
   * a view only for the nodes it yields. Walks the order as it was when the iteration started.
   */
  *largestFirst(minSize: number, allow?: (nodeId: string) => boolean): Generator<NodeView, void, undefined> {
    for (const { maxVolumeSize, nodeId } of this.#order) {
      if (maxVolumeSize < minSize) return;
      if (allow !== undefined && !allow(nodeId)) continue;
      const rec = this.#nodes.get(nodeId) as NodeRecord; // records are never removed
      const now = this.#now();
      if (this.#state(rec, now) !== 'available' || rec.capacity.maxVolumeSize < minSize) continue;
      yield this.#toView(rec, now);
    }
  }

  /** Sum of free bytes and the largest maximum volume size over the available nodes (no views). */
  availableCapacity(): { available: number; maxVolumeSize: number } {
    const now = this.#now();
    let available = 0;
    let maxVolumeSize = 0;
    for (const rec of this.#nodes.values()) {
      if (this.#state(rec, now) !== 'available') continue;
      available += rec.capacity.available;
      maxVolumeSize = Math.max(maxVolumeSize, rec.capacity.maxVolumeSize);
    }
    return { available, maxVolumeSize };
  }

  /** The nodes whose volumes were never listed since start, by id; O(1) when there are none. */
  nodesWithUnknownVolumes(): NodeView[] {
    if (this.#unknownVolumes === 0) return [];
    return this.#matching((rec) => !rec.volumesKnown);
  }

  /** The nodes that are not available now, by id (views only for those). */
  nodesNotAvailable(): NodeView[] {
    const now = this.#now();
    return this.#matching((rec) => this.#state(rec, now) !== 'available');
  }

  /** Log nodes whose lease ran out since the last sweep (state itself is computed on demand). */
  sweep(): void {
    const now = this.#now();
    for (const rec of this.#nodes.values()) {
      if (rec.registrationId !== undefined && now >= rec.leaseExpiresAt && !rec.expiryLogged) {
        rec.expiryLogged = true;
        this.#onLeaseExpired?.(rec.nodeId);
        this.#log.warn('node lease expired; node unavailable, its volumes stay attributed to it', {
          node: rec.nodeId,
          endpoint: rec.endpoint,
        });
      }
    }
  }

  #matching(pred: (rec: NodeRecord) => boolean): NodeView[] {
    const now = this.#now();
    const views: NodeView[] = [];
    for (const rec of this.#nodes.values()) if (pred(rec)) views.push(this.#toView(rec, now));
    return views.sort(byId);
  }

  #reportCapacity(rec: NodeRecord, capacity: Capacity): void {
    rec.capacityReports++;
    this.#setCapacity(rec, capacity);
  }

  #setCapacity(rec: NodeRecord, capacity: Capacity): void {
    rec.capacity = capacity;
    if (rec.entry.maxVolumeSize === capacity.maxVolumeSize) return;
    const order = this.#order.slice();
    order.splice(lowerBound(order, rec.entry), 1);
    rec.entry = { maxVolumeSize: capacity.maxVolumeSize, nodeId: rec.nodeId };
    order.splice(lowerBound(order, rec.entry), 0, rec.entry);
    this.#order = order;
  }

  #insert(rec: NodeRecord): void {
    const order = this.#order.slice();
    order.splice(lowerBound(order, rec.entry), 0, rec.entry);
    this.#order = order;
  }

  #current(nodeId: string, registrationId: string): NodeRecord {
    const rec = this.#nodes.get(nodeId);
    if (rec === undefined || rec.registrationId === undefined || rec.registrationId !== registrationId)
      throw unknownRegistration(nodeId);
    return rec;
  }

  #expire(rec: NodeRecord, reason: string): void {
    rec.registrationId = undefined;
    rec.listed = false;
    rec.reason = reason;
  }

  #state(rec: NodeRecord, now: number): NodeState {
    if (rec.registrationId === undefined) return rec.unregistered ? 'unregistered' : 'unavailable';
    if (now >= rec.leaseExpiresAt) return 'unavailable';
    return rec.listed ? 'available' : 'syncing';
  }

  #toView(rec: NodeRecord, now: number): NodeView {
    const state = this.#state(rec, now);
    return {
      nodeId: rec.nodeId,
      endpoint: rec.endpoint,
      state,
      reason: reasonFor(rec, state),
      capacity: rec.capacity,
      deviceMode: rec.deviceMode,
      version: rec.version,
      registeredAt: new Date(rec.registeredAt),
      leaseExpiresAt: rec.registrationId === undefined ? undefined : new Date(rec.leaseExpiresAt),
      volumesKnown: rec.volumesKnown,
    };
  }
}

function reasonFor(rec: NodeRecord, state: NodeState): string | undefined {
  switch (state) {
    case 'available':
      return undefined;
    case 'syncing':
      return "listing the node's volumes";
    default:
      return rec.reason ?? `the lease expired at ${new Date(rec.leaseExpiresAt).toISOString()} without renewal`;
  }
}

function unknownRegistration(nodeId: string): NotFoundError {
  return new NotFoundError(`unknown registration for node ${JSON.stringify(nodeId)}; register again`);
}
