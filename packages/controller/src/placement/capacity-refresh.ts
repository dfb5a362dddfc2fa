// After a create or delete the controller adjusts the node's capacity estimate at once
// (NodeRegistry.adjustCapacity: subtract or add the volume's size, clamped), so the next placement
// sees the space the operation took or freed without asking the node. The node's own figure then
// follows in the background: one GetCapacity per node at most in flight, started `delayMs` after
// the first create/delete that asked for it, so a burst of creates on one node costs one refresh
// and no CreateVolume/DeleteVolume waits for it (it runs outside the volume locks). Best effort: a
// failure keeps the estimate, which the node's next renewal corrects; a node that answers
// RESOURCE_EXHAUSTED to a create still makes placement try the next candidate.
//
// An answer is dropped when a local adjustment happened while it was on its way (the node may
// have computed it before that create/delete took effect); the adjustment scheduled another
// refresh, which brings the figure that includes it.
import { errorMessage } from '@pmem-csi/csi';
import type { Logger } from '@pmem-csi/runtime';
import type { NodePort } from '../nodes/node-port.js';
import type { NodeRegistry } from '../registry/node-registry.js';

export interface CapacityRefresherOptions {
  readonly registry: NodeRegistry;
  readonly nodePort: Pick<NodePort, 'getCapacity'>;
  /** Wait after the first request before asking the node (default 500 ms). */
  readonly delayMs?: number;
  readonly log: Logger;
}

export const DEFAULT_CAPACITY_REFRESH_DELAY_MS = 500;

interface Pending {
  timer: NodeJS.Timeout | undefined;
  running: boolean;
  /** Asked for again while running: refresh once more when it ends. */
  again: boolean;
}

export class CapacityRefresher {
  readonly #o: CapacityRefresherOptions;
  readonly #delayMs: number;
  readonly #pending = new Map<string, Pending>();
  readonly #running = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  #refreshes = 0;

  constructor(options: CapacityRefresherOptions) {
    this.#o = options;
    this.#delayMs = options.delayMs ?? DEFAULT_CAPACITY_REFRESH_DELAY_MS;
  }

  /** GetCapacity calls made so far (tests, benchmarks). */
  get refreshes(): number {
    return this.#refreshes;
  }

  /** Ask for a refresh of `nodeId`; coalesces with one already waiting or running. */
  schedule(nodeId: string): void {
    if (this.#abort.signal.aborted) return;
    const pending = this.#pending.get(nodeId);
    if (pending === undefined) {
      this.#pending.set(nodeId, { timer: this.#timer(nodeId), running: false, again: false });
    } else if (pending.running) {
      pending.again = true;
    }
  }

  /** Resolves when nothing is waiting or running (tests). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) {
      if (this.#running.size > 0) await Promise.allSettled([...this.#running]);
      else await new Promise((r) => setTimeout(r, Math.max(1, this.#delayMs)));
    }
  }

  /** Cancel waiting refreshes and abort running ones. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error('controller stopping'));
    for (const p of this.#pending.values()) clearTimeout(p.timer);
    await Promise.allSettled([...this.#running]);
    this.#pending.clear();
  }

  #timer(nodeId: string): NodeJS.Timeout {
    const timer = setTimeout(() => this.#start(nodeId), this.#delayMs);
    timer.unref();
    return timer;
  }

  #start(nodeId: string): void {
    const pending = this.#pending.get(nodeId);
    if (pending === undefined || this.#abort.signal.aborted) return;
    pending.timer = undefined;
    pending.running = true;
    const run = this.#refresh(nodeId).finally(() => {
      this.#running.delete(run);
      pending.running = false;
      if (pending.again && !this.#abort.signal.aborted) {
        pending.again = false;
        pending.timer = this.#timer(nodeId);
      } else {
        this.#pending.delete(nodeId);
      }
    });
    this.#running.add(run);
  }

  async #refresh(nodeId: string): Promise<void> {
    const { registry, nodePort, log } = this.#o;
    const stamp = registry.capacityStamp(nodeId);
    try {
      this.#refreshes++;
      const fresh = await nodePort.getCapacity(nodeId, this.#abort.signal);
      const view = registry.view(nodeId);
      if (view === undefined || registry.capacityStamp(nodeId) !== stamp) return;
      registry.updateCapacity(nodeId, { ...view.capacity, ...fresh });
    } catch (err) {
      log.debug('capacity refresh failed; the next renewal will bring it', { node: nodeId, error: errorMessage(err) });
    }
  }
}
