// Which node leases are held by an open connection (lease-policy.ts, node-registry.ts): at most one
// connection per node; binding a node to another connection releases the old binding. Pure
// bookkeeping over a ConnectionWatch (the registry listener's runtime ConnectionTracker).
import type { ConnectionWatch } from '@pmem-csi/runtime';

interface Hold {
  readonly peer: string;
  readonly release: () => void;
}

export class LeaseHolds {
  readonly #connections: ConnectionWatch | undefined;
  readonly #holds = new Map<string, Hold>();

  constructor(connections: ConnectionWatch | undefined) {
    this.#connections = connections;
  }

  /** Number of nodes whose lease an open connection holds. */
  get size(): number {
    return this.#holds.size;
  }

  /**
   * Bind the node to the open connection `peer`; `closed` runs once if that connection closes while
   * the binding lasts. False, and no binding (an earlier one is released), when `peer` is not an open
   * tracked connection.
   */
  hold(nodeId: string, peer: string, closed: () => void): boolean {
    const current = this.#holds.get(nodeId);
    if (current !== undefined && current.peer === peer) return true;
    this.release(nodeId);
    if (this.#connections === undefined) return false;
    const release = this.#connections.onClose(peer, () => {
      if (this.#holds.get(nodeId)?.peer !== peer) return;
      this.#holds.delete(nodeId);
      closed();
    });
    if (release === undefined) return false;
    this.#holds.set(nodeId, { peer, release });
    return true;
  }

  /** End the node's binding, if any (its connection's close no longer matters). */
  release(nodeId: string): void {
    this.#holds.get(nodeId)?.release();
    this.#holds.delete(nodeId);
  }
}
