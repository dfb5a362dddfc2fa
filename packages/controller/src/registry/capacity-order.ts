// The placement order of the registry's nodes: largest maximum volume size first, ties by node id in
// code-unit order (deterministic, no locale). A CreateVolume walks it from the top and stops at the
// first node too small: no list of every node and no sort per call. Kept sorted as capacities change,
// copy-on-write: an order once read never changes, so a walk that spans an await keeps the order it
// started with.

/** A node's place in the order; immutable, replaced when the node's maximum volume size changes. */
export interface OrderEntry {
  readonly maxVolumeSize: number;
  readonly nodeId: string;
}

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

export class CapacityOrder {
  /** One entry per node; replaced (never mutated) on change. */
  #entries: readonly OrderEntry[] = [];

  /** The order now, largest first; it never changes afterwards (later changes make a new one). */
  get entries(): readonly OrderEntry[] {
    return this.#entries;
  }

  /** Place a node that is not in the order yet; returns its entry. */
  add(nodeId: string, maxVolumeSize: number): OrderEntry {
    const entry: OrderEntry = { maxVolumeSize, nodeId };
    const entries = this.#entries.slice();
    entries.splice(lowerBound(entries, entry), 0, entry);
    this.#entries = entries;
    return entry;
  }

  /** Move the node of `entry` (its current entry) to where `maxVolumeSize` sorts; returns its new entry. */
  move(entry: OrderEntry, maxVolumeSize: number): OrderEntry {
    if (entry.maxVolumeSize === maxVolumeSize) return entry;
    const entries = this.#entries.slice();
    entries.splice(lowerBound(entries, entry), 1);
    const moved: OrderEntry = { maxVolumeSize, nodeId: entry.nodeId };
    entries.splice(lowerBound(entries, moved), 0, moved);
    this.#entries = entries;
    return moved;
  }
}
