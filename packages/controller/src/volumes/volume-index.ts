// Where every volume lives: volumeId → {node, name, size, volume context}.
//
// Idempotency policy (survives controller restarts; never only an in-memory map):
// - Volume ids are deterministic (`volumeIdForName`), and the nodes are the source of truth. The
//   index is rebuilt from the nodes' ListVolumes whenever a node (re)registers, and kept current by
//   the controller's own successful creates and deletes in between.
// - After a restart the index is empty until nodes re-register. For a start-up *settle period*
//   (default 1.5 × the lease, i.e. longer than a live node needs to notice the restart and
//   register again) the controller refuses to CREATE a volume whose id it cannot find, with
//   UNAVAILABLE ("controller started <n>s ago and is still collecting volumes from nodes; retry"),
//   instead of risking a second copy on another node. It also refuses while any registered node's
//   volumes have not been listed yet (listing in progress or failed).
// - A volume missing from the index is reported as gone (DeleteVolume OK, NotFound elsewhere)
//   only when that is provable: the settle period has passed AND every known node is available
//   with its volumes listed. Otherwise UNAVAILABLE names the nodes that could still hold it.
// - A forwarded CreateVolume with an unknown outcome (deadline, lost connection) leaves an
//   "uncertain" mark: the next attempt for that id goes to the same node first (nodes are
//   idempotent by name), so a timeout can not turn into a duplicate on another node.
// - Listings race with creates/deletes/expansions: entries and tombstones carry a sequence number,
//   and a listing only removes or rewrites entries older than its start (a volume grown after it
//   began keeps its new size) and never resurrects later deletes. A
//   tombstone is kept only while a listing of its node is running (beginListing/endListing), so
//   a long-running controller does not remember every volume it ever deleted.
// - Lookups on the CreateVolume path are O(1): by id, by name (a name → ids map) and the number of
//   volumes per node; only ListVolumes and a node's listing walk the whole index.
import type { NodeView } from '../registry/node-view.js';

export interface VolumeRecord {
  readonly volumeId: string;
  readonly nodeId: string;
  /** The CreateVolume name when known (from our create, or the node's volume context). */
  readonly name: string;
  readonly capacityBytes: number;
  readonly volumeContext: Readonly<Record<string, string>>;
}

/** What one node listing changed, for the reconciliation log line. */
export interface ReplaceResult {
  readonly added: number;
  readonly removed: number;
  readonly unchanged: number;
  /** Kept as they are although the listing omits them or shows an older size: created or grown after it began. */
  readonly keptNewer: number;
  /** Volume ids that another node already holds (a duplicate on two nodes). */
  readonly conflicts: readonly string[];
}

interface Stamp {
  readonly nodeId: string;
  readonly seq: number;
}

export class VolumeIndex {
  readonly #byId = new Map<string, { record: VolumeRecord; seq: number }>();
  /** CreateVolume name → ids with that name, in insertion order ('' is not indexed). */
  readonly #byName = new Map<string, Set<string>>();
  readonly #perNode = new Map<string, number>();
  readonly #tombstones = new Map<string, Stamp>();
  readonly #uncertain = new Map<string, Stamp>();
  /** Listings in progress per node. */
  readonly #listings = new Map<string, number>();
  #seq = 0;

  /**
   * A listing of `nodeId` starts: returns the sequence mark for replaceNode. Call endListing when
   * it is over, whatever happened.
   */
  beginListing(nodeId: string): number {
    this.#listings.set(nodeId, (this.#listings.get(nodeId) ?? 0) + 1);
    return ++this.#seq;
  }

  /** A listing of `nodeId` is over; with none left running, its deletes need no tombstones. */
  endListing(nodeId: string): void {
    const running = (this.#listings.get(nodeId) ?? 1) - 1;
    if (running > 0) {
      this.#listings.set(nodeId, running);
      return;
    }
    this.#listings.delete(nodeId);
    for (const [id, stamp] of this.#tombstones) if (stamp.nodeId === nodeId) this.#tombstones.delete(id);
  }

  /** Deletes remembered for listings still running (bounded by the deletes made during them). */
  get tombstones(): number {
    return this.#tombstones.size;
  }

  get(volumeId: string): VolumeRecord | undefined {
    return this.#byId.get(volumeId)?.record;
  }

  /** A volume by its CreateVolume name (fallback for volumes whose id is not the derived one). */
  findByName(name: string): VolumeRecord | undefined {
    if (name === '') return undefined;
    for (const id of this.#byName.get(name) ?? []) return this.#byId.get(id)?.record;
    return undefined;
  }

  /** Number of volumes indexed on `nodeId`. */
  countOn(nodeId: string): number {
    return this.#perNode.get(nodeId) ?? 0;
  }

  /** Whether a create on `nodeId` has an unknown outcome. */
  hasUncertainOn(nodeId: string): boolean {
    for (const stamp of this.#uncertain.values()) if (stamp.nodeId === nodeId) return true;
    return false;
  }

  /** Record a volume a node created for us. */
  add(record: VolumeRecord): void {
    this.#put(record, ++this.#seq);
    this.#tombstones.delete(record.volumeId);
    this.#uncertain.delete(record.volumeId);
  }

  /**
   * Record the size a node grew a volume to for us. It is a change made now: a listing that began
   * before it may still show the old size and does not undo it. Returns the size before, or
   * undefined for a volume the index does not hold (nothing is recorded then).
   */
  resize(volumeId: string, capacityBytes: number): number | undefined {
    const entry = this.#byId.get(volumeId);
    if (entry === undefined) return undefined;
    this.#put({ ...entry.record, capacityBytes }, ++this.#seq);
    return entry.record.capacityBytes;
  }

  /** Forget a volume that its node deleted (or reported as not found). */
  remove(volumeId: string): void {
    const entry = this.#byId.get(volumeId);
    if (entry === undefined) return;
    this.#drop(volumeId);
    const nodeId = entry.record.nodeId;
    // Only a listing already running could still show the volume (see #deletedSince).
    if ((this.#listings.get(nodeId) ?? 0) > 0) this.#tombstones.set(volumeId, { nodeId, seq: ++this.#seq });
  }

  /** Remember that a create of `volumeId` on `nodeId` may or may not have happened. */
  markUncertain(volumeId: string, nodeId: string): void {
    this.#uncertain.set(volumeId, { nodeId, seq: ++this.#seq });
  }

  /** The node where a create of `volumeId` had an unknown outcome, if any. */
  uncertainNode(volumeId: string): string | undefined {
    return this.#uncertain.get(volumeId)?.nodeId;
  }

  clearUncertain(volumeId: string): void {
    this.#uncertain.delete(volumeId);
  }

  /** Make the node's entries match its listing, which started at sequence mark `since` (beginListing). */
  replaceNode(nodeId: string, listed: readonly VolumeRecord[], since: number): ReplaceResult {
    const applied = this.#applyListed(nodeId, listed, since);
    const dropped = this.#dropUnlisted(nodeId, applied.ids, since);
    // Uncertain creates older than the listing are settled by it (listed → indexed, absent →
    // never made). Tombstones go when the last running listing of the node ends (endListing).
    for (const [id, stamp] of this.#uncertain)
      if (stamp.nodeId === nodeId && stamp.seq <= since) this.#uncertain.delete(id);
    return {
      added: applied.added,
      removed: dropped.removed,
      unchanged: applied.unchanged,
      keptNewer: applied.keptNewer + dropped.keptNewer,
      conflicts: applied.conflicts,
    };
  }

  /** All volumes, sorted by id (the ListVolumes order). */
  list(): VolumeRecord[] {
    return [...this.#byId.keys()].sort().map((id) => this.#byId.get(id)?.record as VolumeRecord);
  }

  /** Number of volumes per node. */
  countByNode(): Map<string, number> {
    return new Map(this.#perNode);
  }

  get size(): number {
    return this.#byId.size;
  }

  #applyListed(
    nodeId: string,
    listed: readonly VolumeRecord[],
    since: number,
  ): { ids: Set<string>; added: number; unchanged: number; keptNewer: number; conflicts: string[] } {
    const result = { ids: new Set<string>(), added: 0, unchanged: 0, keptNewer: 0, conflicts: [] as string[] };
    for (const record of listed) {
      const outcome = this.#applyOne(nodeId, record, since);
      if (outcome === 'deleted') continue;
      if (outcome === 'conflict') {
        result.conflicts.push(record.volumeId);
        continue;
      }
      result.ids.add(record.volumeId);
      result[outcome]++;
    }
    return result;
  }

  /** Take one listed volume of `nodeId` into the index, unless a change of ours since `since` is newer. */
  #applyOne(
    nodeId: string,
    record: VolumeRecord,
    since: number,
  ): 'deleted' | 'conflict' | 'keptNewer' | 'added' | 'unchanged' {
    if (this.#deletedSince(record.volumeId, nodeId, since)) return 'deleted';
    const existing = this.#byId.get(record.volumeId);
    if (existing === undefined) {
      this.#put(record, ++this.#seq);
      this.#uncertain.delete(record.volumeId);
      return 'added';
    }
    if (existing.record.nodeId !== nodeId) return 'conflict';
    // Created or grown by us after the listing began: what we recorded is newer than what it shows.
    if (existing.seq > since) return 'keptNewer';
    this.#put({ ...record, name: record.name || existing.record.name }, existing.seq);
    this.#uncertain.delete(record.volumeId);
    return 'unchanged';
  }

  /** Whether we deleted the volume on `nodeId` after sequence mark `since` (a listing may still show it). */
  #deletedSince(volumeId: string, nodeId: string, since: number): boolean {
    const tomb = this.#tombstones.get(volumeId);
    return tomb !== undefined && tomb.nodeId === nodeId && tomb.seq > since;
  }

  #dropUnlisted(nodeId: string, listedIds: ReadonlySet<string>, since: number): { removed: number; keptNewer: number } {
    let removed = 0;
    let keptNewer = 0;
    for (const [id, entry] of this.#byId) {
      if (entry.record.nodeId !== nodeId || listedIds.has(id)) continue;
      if (entry.seq > since) {
        keptNewer++;
      } else {
        this.#drop(id);
        removed++;
      }
    }
    return { removed, keptNewer };
  }

  /** Set the entry of `record.volumeId`, keeping the name and per-node maps in step. */
  #put(record: VolumeRecord, seq: number): void {
    const old = this.#byId.get(record.volumeId);
    if (old !== undefined) this.#unlink(old.record);
    this.#byId.set(record.volumeId, { record, seq });
    this.#perNode.set(record.nodeId, (this.#perNode.get(record.nodeId) ?? 0) + 1);
    if (record.name === '') return;
    const ids = this.#byName.get(record.name);
    if (ids === undefined) this.#byName.set(record.name, new Set([record.volumeId]));
    else ids.add(record.volumeId);
  }

  #drop(volumeId: string): void {
    const entry = this.#byId.get(volumeId);
    if (entry === undefined) return;
    this.#byId.delete(volumeId);
    this.#unlink(entry.record);
  }

  #unlink(record: VolumeRecord): void {
    const count = (this.#perNode.get(record.nodeId) ?? 1) - 1;
    if (count > 0) this.#perNode.set(record.nodeId, count);
    else this.#perNode.delete(record.nodeId);
    const ids = this.#byName.get(record.name);
    if (ids === undefined) return;
    ids.delete(record.volumeId);
    if (ids.size === 0) this.#byName.delete(record.name);
  }
}

/** The start-up settle period: until it passes, the index may still be missing volumes. */
export class SettleClock {
  readonly #startedAt: number;
  readonly #now: () => number;
  readonly settleMs: number;

  constructor(settleMs: number, now: () => number = Date.now) {
    this.#now = now;
    this.#startedAt = now();
    this.settleMs = settleMs;
  }

  settled(): boolean {
    return this.#now() - this.#startedAt >= this.settleMs;
  }

  /** Whole seconds since the controller started. */
  elapsedSeconds(): number {
    return Math.floor((this.#now() - this.#startedAt) / 1000);
  }

  get startedAt(): Date {
    return new Date(this.#startedAt);
  }
}

/** Nodes named in one message; a registration storm must not turn into a 5,000-node message. */
export const MAX_NODES_NAMED = 20;

function describeNodes(nodes: readonly NodeView[]): string {
  const named = nodes
    .slice(0, MAX_NODES_NAMED)
    .map((n) => `node ${JSON.stringify(n.nodeId)} (${n.reason ?? n.state})`)
    .join(', ');
  return nodes.length > MAX_NODES_NAMED ? `${named} and ${nodes.length - MAX_NODES_NAMED} more nodes` : named;
}

function settleDoubt(settle: SettleClock): string | undefined {
  if (settle.settled()) return undefined;
  return `controller started ${settle.elapsedSeconds()}s ago and is still collecting volumes from nodes; retry`;
}

/**
 * Why a volume unknown to the index might still exist somewhere, so that creating it is unsafe.
 * `nodes`: the known nodes, or only those whose volumes are not known (registry.nodesWithUnknownVolumes()).
 */
export function creationDoubt(settle: SettleClock, nodes: readonly NodeView[]): string | undefined {
  const unsettled = settleDoubt(settle);
  if (unsettled !== undefined) return unsettled;
  const unknown = nodes.filter((n) => !n.volumesKnown);
  if (unknown.length === 0) return undefined;
  return `the volumes of ${describeNodes(unknown)} are not known yet; retry`;
}

/**
 * Why a volume unknown to the index can not be proven gone, or undefined when it can.
 * `nodes`: the known nodes, or only those not available (registry.nodesNotAvailable()).
 */
export function absenceDoubt(settle: SettleClock, nodes: readonly NodeView[]): string | undefined {
  const unsettled = settleDoubt(settle);
  if (unsettled !== undefined) return unsettled;
  const down = nodes.filter((n) => n.state !== 'available');
  if (down.length === 0) return undefined;
  return `${describeNodes(down)} ${down.length === 1 ? 'is' : 'are'} not available and could hold it; retry`;
}
