// The controller's knowledge of node drivers. A registration is a lease: a node that stops renewing
// becomes *unavailable*, never forgotten, because its volumes still belong to it (forgetting it is
// how the Go driver came to report deletes as done that it never made). A renewal quoting an
// unknown or expired registration gets NOT_FOUND so the node registers again; every registration
// is followed by a volume listing (reconciler.ts), and the node counts as available only once
// that listing arrived. Pure bookkeeping with an injectable clock: no I/O here.
import { randomUUID } from 'node:crypto';
import { NotFoundError, nullLogger, type Logger } from '@pmem-csi/runtime';

/** Capacity in bytes as last reported by the node. */
export interface NodeCapacity {
  /** Largest single volume the node can create now. */
  readonly maxVolumeSize: number;
  readonly available: number;
  readonly managed: number;
  readonly total: number;
}

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
  readonly capacity: NodeCapacity;
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
  readonly capacity: NodeCapacity;
  readonly deviceMode: string;
  readonly version: string;
}

/** One accepted registration; `previousEndpoint` is set when the node moved. */
export interface Registration {
  readonly nodeId: string;
  readonly registrationId: string;
  readonly endpoint: string;
  readonly previousEndpoint: string | undefined;
}

export interface NodeRegistryOptions {
  /** Lease length in seconds (default 30); nodes renew at a third of it. */
  readonly leaseSeconds?: number;
  readonly now?: () => number;
  readonly log?: Logger;
}

export const DEFAULT_LEASE_SECONDS = 30;

interface NodeRecord {
  readonly nodeId: string;
  endpoint: string;
  registrationId: string | undefined;
  capacity: NodeCapacity;
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

const EMPTY_CAPACITY: NodeCapacity = { maxVolumeSize: 0, available: 0, managed: 0, total: 0 };

export class NodeRegistry {
  readonly #nodes = new Map<string, NodeRecord>();
  readonly #leaseMs: number;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly leaseSeconds: number;

  constructor(options: NodeRegistryOptions = {}) {
    this.leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    this.#leaseMs = this.leaseSeconds * 1000;
    this.#now = options.now ?? Date.now;
    this.#log = options.log ?? nullLogger;
  }

  /** Accept a (re)registration; the previous registration of the node, if any, ends. */
  register(input: RegisterInput): Registration {
    const now = this.#now();
    const old = this.#nodes.get(input.nodeId);
    const registrationId = randomUUID();
    const previousEndpoint = old !== undefined && old.endpoint !== input.endpoint ? old.endpoint : undefined;
    this.#nodes.set(input.nodeId, {
      ...input,
      registrationId,
      registeredAt: now,
      leaseExpiresAt: now + this.#leaseMs,
      listed: false,
      volumesKnown: old?.volumesKnown ?? false,
      unregistered: false,
      reason: undefined,
      expiryLogged: false,
    });
    return { nodeId: input.nodeId, registrationId, endpoint: input.endpoint, previousEndpoint };
  }

  /** Extend the lease and update the capacity. @throws NotFoundError for an unknown or expired registration */
  renew(nodeId: string, registrationId: string, capacity: NodeCapacity | undefined): void {
    const rec = this.#current(nodeId, registrationId);
    const now = this.#now();
    if (now >= rec.leaseExpiresAt) {
      this.#expire(rec, 'the lease expired before it was renewed; waiting for the node to register again');
      throw unknownRegistration(nodeId);
    }
    rec.leaseExpiresAt = now + this.#leaseMs;
    if (capacity !== undefined) rec.capacity = capacity;
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

  /** Replace the capacity estimate of a node (e.g. after a node said it has less than reported). */
  updateCapacity(nodeId: string, capacity: NodeCapacity): void {
    const rec = this.#nodes.get(nodeId);
    if (rec !== undefined) rec.capacity = capacity;
  }

  /** The node's current view, or undefined for a node that never registered. */
  view(nodeId: string): NodeView | undefined {
    const rec = this.#nodes.get(nodeId);
    return rec === undefined ? undefined : this.#toView(rec);
  }

  /** All known nodes, sorted by id. */
  list(): NodeView[] {
    return [...this.#nodes.keys()].sort().map((id) => this.#toView(this.#nodes.get(id) as NodeRecord));
  }

  /** Log nodes whose lease ran out since the last sweep (state itself is computed on demand). */
  sweep(): void {
    const now = this.#now();
    for (const rec of this.#nodes.values()) {
      if (rec.registrationId !== undefined && now >= rec.leaseExpiresAt && !rec.expiryLogged) {
        rec.expiryLogged = true;
        this.#log.warn('node lease expired; node unavailable, its volumes stay attributed to it', { node: rec.nodeId, endpoint: rec.endpoint });
      }
    }
  }

  #current(nodeId: string, registrationId: string): NodeRecord {
    const rec = this.#nodes.get(nodeId);
    if (rec === undefined || rec.registrationId === undefined || rec.registrationId !== registrationId) throw unknownRegistration(nodeId);
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

  #toView(rec: NodeRecord): NodeView {
    const now = this.#now();
    const state = this.#state(rec, now);
    return {
      nodeId: rec.nodeId,
      endpoint: rec.endpoint,
      state,
      reason: reasonFor(rec, state),
      capacity: rec.capacity ?? EMPTY_CAPACITY,
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
      return 'listing the node\'s volumes';
    default:
      return rec.reason ?? `the lease expired at ${new Date(rec.leaseExpiresAt).toISOString()} without renewal`;
  }
}

function unknownRegistration(nodeId: string): NotFoundError {
  return new NotFoundError(`unknown registration for node ${JSON.stringify(nodeId)}; register again`);
}
