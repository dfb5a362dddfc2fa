// The controller's knowledge of node drivers: their registrations. A registration is a lease
// (lease-policy.ts): a node that stops renewing becomes *unavailable*, never forgotten, because its
// volumes still belong to it (forgetting it is how the Go driver came to report deletes as done that it
// never made). A renewal quoting an unknown or expired registration gets NOT_FOUND so the node registers
// again; every registration is followed by a volume listing (volumes/volume-reconciler.ts) unless the
// node sent an inventory that can be trusted, and the node counts as available only once its volumes
// are known. Pure bookkeeping with an injectable clock: no I/O here.
//
// At scale (5,000 nodes on a 2-core controller) every call is O(1) or walks only what it returns:
// placement reads the capacity order (capacity-order.ts) and makes views (node-view.ts) only for the
// nodes it hands out; whether every node's volumes are known is a counter (CreateVolume asks on every
// call); a renewal touches one record.
//
// Leases held by a connection (lease-policy.ts): with a ConnectionWatch, a registration or renewal
// that names the connection it came over (its grpc-js peer) while that connection is open binds the
// lease to it and gets the longer held lease; when the connection closes, the lease is cut to at most
// the base lease from that moment. A renewal over another connection moves the binding there; one
// over an untracked connection ends it (the ordinary lease applies).
import { randomUUID } from 'node:crypto';
import { type Capacity, NotFoundError } from '@pmem-csi/csi';
import { type ConnectionWatch, type Logger, nullLogger } from '@pmem-csi/runtime';
import { LeaseHolds } from './lease-holds.js';
import { adjustCapacity } from './capacity-estimate.js';
import { CapacityOrder } from './capacity-order.js';
import {
  heldLeaseSecondsFor,
  leasePolicy,
  leaseSecondsFor,
  type LeaseOptions,
  type LeasePolicy,
} from './lease-policy.js';
import { byNodeId, stateOf, viewOf, type NodeRecord, type NodeView } from './node-view.js';

export interface RegisterInput {
  readonly nodeId: string;
  readonly endpoint: string;
  readonly capacity: Capacity;
  readonly deviceMode: string;
  readonly version: string;
  /** The connection the registration came over (grpc-js peer), to hold the lease by. */
  readonly peer?: string;
}

/** One accepted registration; `previousEndpoint` is set when the node moved. */
export interface Registration {
  readonly nodeId: string;
  readonly registrationId: string;
  readonly endpoint: string;
  readonly previousEndpoint: string | undefined;
  /** The lease granted with this registration. */
  readonly leaseSeconds: number;
  /** Whether the lease is held by the registration's connection. */
  readonly held: boolean;
}

export interface NodeRegistryOptions extends LeaseOptions {
  readonly now?: () => number;
  readonly log?: Logger;
  /** Called once per registration whose lease ran out without renewal (pmem_csi_controller_lease_expiries_total). */
  readonly onLeaseExpired?: (nodeId: string) => void;
  /** The registry listener's connections; without it no lease is held by a connection. */
  readonly connections?: ConnectionWatch;
}

export class NodeRegistry {
  readonly #nodes = new Map<string, NodeRecord>();
  readonly #order = new CapacityOrder();
  /** Records whose volumes were never listed since this controller started. */
  #unknownVolumes = 0;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #onLeaseExpired: ((nodeId: string) => void) | undefined;
  readonly #lease: LeasePolicy;
  readonly #holds: LeaseHolds;

  constructor(options: NodeRegistryOptions = {}) {
    this.#lease = leasePolicy(options);
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? nullLogger;
    this.#onLeaseExpired = options.onLeaseExpired;
    this.#holds = new LeaseHolds(options.connections);
  }

  /** The lease of a small cluster (the shortest granted). */
  get baseLeaseSeconds(): number {
    return this.#lease.leaseSeconds;
  }

  /** The longest lease this registry ever grants. */
  get maxLeaseSeconds(): number {
    return this.#lease.maxLeaseSeconds;
  }

  /** The longest lease held by a connection this registry grants. */
  get maxHeldLeaseSeconds(): number {
    return this.#lease.maxHeldLeaseSeconds;
  }

  /** The lease granted now, for the current number of known nodes. */
  get leaseSeconds(): number {
    return leaseSecondsFor(this.#nodes.size, this.#lease);
  }

  /** The lease granted now to a registration held by its connection. */
  get heldLeaseSeconds(): number {
    return heldLeaseSecondsFor(this.#nodes.size, this.#lease);
  }

  /** Number of leases held by an open connection. */
  get held(): number {
    return this.#holds.size;
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
    const rec = old ?? this.#add(input, now);
    const held = this.#hold(rec, input.peer);
    const leaseSeconds = held ? this.heldLeaseSeconds : this.leaseSeconds;
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
    return { nodeId: input.nodeId, registrationId, endpoint: input.endpoint, previousEndpoint, leaseSeconds, held };
  }

  /**
   * Extend the lease and update the capacity; returns the lease granted (seconds).
   * @throws NotFoundError for an unknown or expired registration
   */
  renew(nodeId: string, registrationId: string, capacity: Capacity | undefined, peer?: string): number {
    const rec = this.#current(nodeId, registrationId);
    const now = this.#now();
    if (now >= rec.leaseExpiresAt) {
      if (!rec.expiryLogged) this.#onLeaseExpired?.(nodeId); // not seen by a sweep yet
      rec.expiryLogged = true;
      this.#end(rec, 'the lease expired before it was renewed; waiting for the node to register again');
      throw unknownRegistration(nodeId);
    }
    const leaseSeconds = this.#hold(rec, peer) ? this.heldLeaseSeconds : this.leaseSeconds;
    rec.leaseExpiresAt = now + leaseSeconds * 1000;
    if (capacity !== undefined) this.#reportCapacity(rec, capacity);
    return leaseSeconds;
  }

  /** End a registration on the node's request; the node stays known. @throws NotFoundError */
  unregister(nodeId: string, registrationId: string): void {
    const rec = this.#current(nodeId, registrationId);
    this.#end(rec, 'the node unregistered (shut down)');
    rec.unregistered = true;
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
    this.#end(rec, reason);
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
    return rec === undefined ? undefined : viewOf(rec, this.#now());
  }

  /** Whether the node is available now (live lease, volumes listed); no view is made. */
  isAvailable(nodeId: string): boolean {
    const rec = this.#nodes.get(nodeId);
    return rec !== undefined && stateOf(rec, this.#now()) === 'available';
  }

  /** All known nodes, sorted by id (status pages; not for per-call paths). */
  list(): NodeView[] {
    const now = this.#now();
    return [...this.#nodes.values()].map((rec) => viewOf(rec, now)).sort(byNodeId);
  }

  /**
   * Available nodes whose maximum volume size is at least `minSize` and that `allow` accepts,
   * largest first (ties by node id). Lazy: stops where the order drops below `minSize`, and makes
   * a view only for the nodes it yields. Walks the order as it was when the iteration started.
   */
  *largestFirst(minSize: number, allow?: (nodeId: string) => boolean): Generator<NodeView, void, undefined> {
    for (const { maxVolumeSize, nodeId } of this.#order.entries) {
      if (maxVolumeSize < minSize) return;
      if (allow !== undefined && !allow(nodeId)) continue;
      const rec = this.#nodes.get(nodeId) as NodeRecord; // records are never removed
      const now = this.#now();
      if (stateOf(rec, now) !== 'available' || rec.capacity.maxVolumeSize < minSize) continue;
      yield viewOf(rec, now);
    }
  }

  /** Sum of free bytes and the largest maximum volume size over the available nodes (no views). */
  availableCapacity(): { available: number; maxVolumeSize: number } {
    const now = this.#now();
    let available = 0;
    let maxVolumeSize = 0;
    for (const rec of this.#nodes.values()) {
      if (stateOf(rec, now) !== 'available') continue;
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
    return this.#matching((rec) => stateOf(rec, now) !== 'available');
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

  /** A record for a node registering for the first time (register fills in the registration). */
  #add(input: RegisterInput, now: number): NodeRecord {
    const rec: NodeRecord = {
      nodeId: input.nodeId,
      endpoint: input.endpoint,
      registrationId: undefined,
      capacity: input.capacity,
      entry: this.#order.add(input.nodeId, input.capacity.maxVolumeSize),
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
    this.#nodes.set(input.nodeId, rec);
    this.#unknownVolumes++;
    return rec;
  }

  #matching(pred: (rec: NodeRecord) => boolean): NodeView[] {
    const now = this.#now();
    const views: NodeView[] = [];
    for (const rec of this.#nodes.values()) if (pred(rec)) views.push(viewOf(rec, now));
    return views.sort(byNodeId);
  }

  #reportCapacity(rec: NodeRecord, capacity: Capacity): void {
    rec.capacityReports++;
    this.#setCapacity(rec, capacity);
  }

  #setCapacity(rec: NodeRecord, capacity: Capacity): void {
    rec.capacity = capacity;
    rec.entry = this.#order.move(rec.entry, capacity.maxVolumeSize);
  }

  #current(nodeId: string, registrationId: string): NodeRecord {
    const rec = this.#nodes.get(nodeId);
    if (rec === undefined || rec.registrationId === undefined || rec.registrationId !== registrationId)
      throw unknownRegistration(nodeId);
    return rec;
  }

  /** Bind the node's lease to the open connection `peer`; false (and no binding) when there is none. */
  #hold(rec: NodeRecord, peer: string | undefined): boolean {
    if (peer === undefined) {
      this.#holds.release(rec.nodeId);
      return false;
    }
    return this.#holds.hold(rec.nodeId, peer, () => this.#connectionClosed(rec, peer));
  }

  /** The connection holding the node's lease closed: the lease lasts at most the base lease from now. */
  #connectionClosed(rec: NodeRecord, peer: string): void {
    const cut = this.#now() + this.#lease.leaseSeconds * 1000;
    if (rec.registrationId !== undefined && cut < rec.leaseExpiresAt) {
      rec.leaseExpiresAt = cut;
      this.#log.debug('the connection holding a node lease closed; lease cut to the base lease', {
        node: rec.nodeId,
        peer,
      });
    }
  }

  /** The registration ends; the node and its volumes stay known. */
  #end(rec: NodeRecord, reason: string): void {
    this.#holds.release(rec.nodeId);
    rec.registrationId = undefined;
    rec.listed = false;
    rec.reason = reason;
  }
}

function unknownRegistration(nodeId: string): NotFoundError {
  return new NotFoundError(`unknown registration for node ${JSON.stringify(nodeId)}; register again`);
}
