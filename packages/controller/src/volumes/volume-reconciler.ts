// Rebuilds what the controller knows about a node's volumes each time the node (re)registers and
// replaces the node's part of the volume index; only then does the node become available for
// placement. Two ways:
// - The node's inventory (sent with the registration, registry.proto): used at once, no dial —
//   when it is complete and provably current. The node took it before its RegisterController
//   call; a create, delete or expansion this controller forwarded to the node may have landed in
//   between, so the inventory is used only when no such call is running and either this
//   controller never sent the node one (after a controller restart, or on a new node: what a
//   registration storm is made of), or the node reports no volumes and the index holds none of it
//   and no create on it has an unknown outcome (nothing the inventory could wrongly drop or bring
//   back).
// - Otherwise a listing: list all the node's volumes over its node-controller connection
//   (paginated, with deadlines). At most `maxConcurrentListings` run at once (each is a new mTLS
//   connection, a few ms of RSA on this event loop); the other nodes wait in order and stay
//   "syncing". If the listing fails the registration is revoked: the node's next renewal gets
//   NOT_FOUND and it registers again, which retries the listing (self-healing, no stuck node).
// With several controller replicas (issue 17) a node also pushes its inventory with a renewal
// after each create, delete or expansion, made through whichever replica leads (inventoryPushed):
// the same as the index → nothing; usable by the rules above → applied at once; otherwise (this
// replica changed the node's volumes itself, a change of it may be missing from the inventory)
// → one more listing, with the node staying available. So a standby knows every volume within
// moments and, once it leads, never places a name again on another node.
import { PARAMETER_KEYS } from '@pmem-csi/api';
import type { Logger } from '@pmem-csi/runtime';
import type { NodePort } from '../nodes/node-port.js';
import type { NodeRegistry, Registration } from '../registry/node-registry.js';
import { type csi, errorMessage, parseBytes } from '@pmem-csi/csi';
import type { VolumeIndex, VolumeRecord } from './volume-index.js';

export interface VolumeReconcilerDeps {
  readonly registry: NodeRegistry;
  readonly index: VolumeIndex;
  readonly nodePort: Pick<NodePort, 'connect' | 'listVolumes' | 'mutations'>;
  readonly log: Logger;
  /** Node volume listings running at once (default 16). */
  readonly maxConcurrentListings?: number;
}

export const DEFAULT_MAX_CONCURRENT_LISTINGS = 16;

/** The volumes a node sent with its registration (validated at the edge, registration/registration-service.ts). */
export interface Inventory {
  /** How many volumes the node holds. */
  readonly count: number;
  /** The volumes sent: all of them when there are `count`. */
  readonly records: readonly VolumeRecord[];
}

/** How the node's volumes become known: from its inventory (done), or by a listing (queued). */
export type VolumeSource = { readonly via: 'inventory' } | { readonly via: 'listing'; readonly why: string };

/** What a pushed inventory did: nothing new, applied, a listing queued, or ignored (registration not current). */
export type PushOutcome =
  { readonly via: 'unchanged' | 'inventory' | 'ignored' } | { readonly via: 'listing'; readonly why: string };

/** The fields of a reported volume that the index keeps. */
export type ReportedVolume = Pick<csi.Volume__Output, 'volume_id' | 'capacity_bytes' | 'volume_context'>;

/** The index record of a volume a node reported; throws on malformed sizes. */
export function recordFromVolume(nodeId: string, volume: ReportedVolume, field = 'capacity_bytes'): VolumeRecord {
  const context = volume.volume_context ?? {};
  return {
    volumeId: volume.volume_id,
    nodeId,
    name: context[PARAMETER_KEYS.name] ?? '',
    capacityBytes: parseBytes(volume.capacity_bytes, field),
    volumeContext: { ...context },
  };
}

export class VolumeReconciler {
  readonly #deps: VolumeReconcilerDeps;
  readonly #inflight = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  readonly #maxListings: number;
  /** Registrations waiting for a listing slot, oldest first (from #head on). */
  #queue: Registration[] = [];
  #head = 0;
  /** Nodes with a listing for a pushed inventory waiting in the queue (one is enough). */
  readonly #refreshQueued = new Set<string>();
  /** Nodes being listed now: one listing per node at a time. */
  readonly #listing = new Set<string>();
  /** Listings that came up while their node was being listed; they run after it, one per node. */
  readonly #deferred = new Map<string, Registration>();

  constructor(deps: VolumeReconcilerDeps) {
    this.#deps = deps;
    this.#maxListings = Math.max(1, deps.maxConcurrentListings ?? DEFAULT_MAX_CONCURRENT_LISTINGS);
  }

  /** Listings waiting for a slot. */
  get queued(): number {
    return this.#queue.length - this.#head;
  }

  /** Make the volumes of a freshly registered node known: from its inventory now, or by a listing in the background. */
  nodeRegistered(reg: Registration, inventory?: Inventory): VolumeSource {
    this.#deps.nodePort.connect(reg.nodeId, reg.endpoint);
    let why = 'the node sent no inventory';
    if (inventory !== undefined) {
      const problem = this.#inventoryProblem(reg.nodeId, inventory);
      if (problem === undefined) {
        this.#applyInventory(reg, inventory);
        return { via: 'inventory' };
      }
      why = problem;
    }
    if (this.#abort.signal.aborted) return { via: 'listing', why: 'the controller is stopping' };
    this.#queue.push(reg);
    this.#pump();
    return { via: 'listing', why };
  }

  /**
   * A node pushed its inventory with a renewal of its live registration (see the header). The node
   * stays available whatever happens; a listing it needs runs in the background.
   */
  inventoryPushed(nodeId: string, registrationId: string, inventory: Inventory): PushOutcome {
    const { registry } = this.#deps;
    const view = registry.view(nodeId);
    if (view === undefined || !registry.isCurrent(nodeId, registrationId)) return { via: 'ignored' };
    const reg: Registration = {
      nodeId,
      registrationId,
      endpoint: view.endpoint,
      previousEndpoint: undefined,
      leaseSeconds: 0, // not read by listings
      held: false,
    };
    // Syncing: the listing of its registration may have started before this change; list once more after it.
    if (view.state !== 'available') return this.#refresh(reg, 'the node is being listed; the push may postdate that');
    if (this.#sameAsIndex(nodeId, inventory)) return { via: 'unchanged' };
    const problem = this.#inventoryProblem(nodeId, inventory);
    if (problem !== undefined) return this.#refresh(reg, problem);
    this.#applyInventory(reg, inventory);
    return { via: 'inventory' };
  }

  /** Resolves when no listing is running or waiting (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
  }

  /** Abort running listings, drop waiting ones, and wait. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error('controller stopping'));
    this.#queue = [];
    this.#head = 0;
    this.#refreshQueued.clear();
    this.#deferred.clear();
    await this.idle();
  }

  /** Why the inventory cannot replace a listing, or undefined when it can (see the header). */
  #inventoryProblem(nodeId: string, inventory: Inventory): string | undefined {
    if (inventory.records.length !== inventory.count)
      return `the inventory names ${inventory.records.length} of ${inventory.count} volumes`;
    const { index, nodePort } = this.#deps;
    const mutations = nodePort.mutations(nodeId);
    if (mutations.running > 0) return 'a create, delete or expansion on the node is in progress';
    if (mutations.started === 0) return undefined;
    if (inventory.count === 0 && index.countOn(nodeId) === 0 && !index.hasUncertainOn(nodeId)) return undefined;
    return "this controller has changed the node's volumes; the inventory may predate that";
  }

  /** Whether the index holds exactly the inventory's volumes on the node, with their sizes. */
  #sameAsIndex(nodeId: string, inventory: Inventory): boolean {
    const { index } = this.#deps;
    if (inventory.records.length !== inventory.count || index.countOn(nodeId) !== inventory.count) return false;
    return inventory.records.every((r) => {
      const known = index.get(r.volumeId);
      return known?.nodeId === nodeId && known.capacityBytes === r.capacityBytes;
    });
  }

  /** Queue a listing of an available node (at most one waiting per node). */
  #refresh(reg: Registration, why: string): PushOutcome {
    if (this.#abort.signal.aborted) return { via: 'listing', why: 'the controller is stopping' };
    if (!this.#refreshQueued.has(reg.nodeId)) {
      this.#refreshQueued.add(reg.nodeId);
      this.#queue.push(reg);
      this.#pump();
    }
    return { via: 'listing', why };
  }

  #applyInventory(reg: Registration, inventory: Inventory): void {
    const { registry, index } = this.#deps;
    const since = index.beginListing(reg.nodeId);
    try {
      const result = index.replaceNode(reg.nodeId, inventory.records, since);
      registry.markListed(reg.nodeId, reg.registrationId);
      this.#reportConflicts(reg.nodeId, result.conflicts);
    } finally {
      index.endListing(reg.nodeId);
    }
  }

  /** Start queued listings while there are free slots; superseded registrations are dropped. */
  #pump(): void {
    while (this.#inflight.size < this.#maxListings && this.#head < this.#queue.length) {
      const reg = this.#queue[this.#head++] as Registration;
      this.#refreshQueued.delete(reg.nodeId);
      if (!this.#deps.registry.isCurrent(reg.nodeId, reg.registrationId)) continue;
      if (this.#listing.has(reg.nodeId)) {
        this.#deferred.set(reg.nodeId, reg); // a listing that started earlier may miss what this one is for
        continue;
      }
      this.#listing.add(reg.nodeId);
      const run = this.#reconcile(reg).finally(() => {
        this.#inflight.delete(run);
        this.#listing.delete(reg.nodeId);
        const next = this.#deferred.get(reg.nodeId);
        this.#deferred.delete(reg.nodeId);
        if (next !== undefined && !this.#abort.signal.aborted) this.#queue.push(next);
        this.#pump();
      });
      this.#inflight.add(run);
    }
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }

  #reportConflicts(nodeId: string, conflicts: readonly string[]): void {
    for (const id of conflicts) {
      this.#deps.log.error('volume is reported by two nodes; keeping the first owner', {
        node: nodeId,
        volume: id,
        owner: this.#deps.index.get(id)?.nodeId,
      });
    }
  }

  async #reconcile(reg: Registration): Promise<void> {
    const { registry, index, nodePort } = this.#deps;
    const log = this.#deps.log.child({ node: reg.nodeId, endpoint: reg.endpoint });
    const since = index.beginListing(reg.nodeId);
    const started = Date.now();
    try {
      const volumes = await nodePort.listVolumes(reg.nodeId, this.#abort.signal);
      const records = this.#records(reg.nodeId, volumes);
      if (!registry.isCurrent(reg.nodeId, reg.registrationId)) {
        log.info('volume listing superseded by a newer registration; ignored');
        return;
      }
      const result = index.replaceNode(reg.nodeId, records, since);
      registry.markListed(reg.nodeId, reg.registrationId);
      this.#reportConflicts(reg.nodeId, result.conflicts);
      log.info('node volumes reconciled; node available', {
        volumes: records.length,
        added: result.added,
        removed: result.removed,
        unchanged: result.unchanged,
        keptNewer: result.keptNewer,
        ms: Date.now() - started,
      });
    } catch (err) {
      const reason = `listing the node's volumes failed: ${errorMessage(err)}`;
      if (registry.revoke(reg.nodeId, reg.registrationId, reason)) {
        log.warn('node volume listing failed; registration revoked, the node will register again', {
          error: errorMessage(err),
        });
      }
    } finally {
      index.endListing(reg.nodeId);
    }
  }

  // A malformed entry fails the whole listing: silently skipping it would make its volume look gone.
  #records(nodeId: string, volumes: readonly csi.Volume__Output[]): VolumeRecord[] {
    return volumes.map((volume) => {
      if (volume.volume_id === '') throw new Error('the node reported a volume without volume_id');
      return recordFromVolume(nodeId, volume);
    });
  }
}
