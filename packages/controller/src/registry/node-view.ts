// A node as the registry knows it: the record it keeps (mutable, never leaves the registry) and the
// read-only view it hands out. The state is derived from the record and the time, never stored, so a
// lease that ran out shows at once without a sweep.
import type { Capacity } from '@pmem-csi/csi';
import type { OrderEntry } from './capacity-order.js';

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

/** The registry's record of a node (node-registry.ts); records are never removed. */
export interface NodeRecord {
  readonly nodeId: string;
  endpoint: string;
  registrationId: string | undefined;
  capacity: Capacity;
  /** Where the record sits in the placement order (capacity-order.ts; replaced when its maxVolumeSize changes). */
  entry: OrderEntry;
  /** Bumped by every local capacity adjustment (see NodeRegistry.capacityStamp). */
  capacityStamp: number;
  /** Bumped by every capacity the node reported itself (registration, renewal, refresh; see NodeRegistry.capacityReports). */
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

/** The node's state at `now` (ms since the epoch). */
export function stateOf(rec: NodeRecord, now: number): NodeState {
  if (rec.registrationId === undefined) return rec.unregistered ? 'unregistered' : 'unavailable';
  if (now >= rec.leaseExpiresAt) return 'unavailable';
  return rec.listed ? 'available' : 'syncing';
}

/** A view of the record at `now`: a copy, unaffected by later changes of the record. */
export function viewOf(rec: NodeRecord, now: number): NodeView {
  const state = stateOf(rec, now);
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

/** Views by node id in code-unit order. */
export const byNodeId = (a: NodeView, b: NodeView): number => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0);

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
