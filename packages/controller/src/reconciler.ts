// Rebuilds what the controller knows about a node's volumes each time the node (re)registers:
// connect (or reconnect) to its endpoint, list all its volumes (paginated, with deadlines) and
// replace the node's part of the volume index. Only then does the node become available for
// placement. If the listing fails the registration is revoked: the node's next renewal gets
// NOT_FOUND and it registers again, which retries the listing (self-healing, no stuck node).
import { PARAMETER_KEYS } from '@pmem-csi/api';
import { errorMessage, type csi, type Logger } from '@pmem-csi/runtime';
import type { NodeConnections } from './node-client.js';
import type { NodeRegistry, Registration } from './node-registry.js';
import { parseBytes } from './sizes.js';
import type { VolumeIndex, VolumeRecord } from './volume-index.js';

export interface ReconcilerDeps {
  readonly registry: NodeRegistry;
  readonly index: VolumeIndex;
  readonly connections: NodeConnections;
  readonly log: Logger;
}

/** The index record of a volume a node reported; throws on malformed sizes. */
export function recordFromVolume(nodeId: string, volume: csi.Volume__Output): VolumeRecord {
  const context = volume.volume_context ?? {};
  return {
    volumeId: volume.volume_id,
    nodeId,
    name: context[PARAMETER_KEYS.name] ?? '',
    capacityBytes: parseBytes(volume.capacity_bytes, 'capacity_bytes'),
    volumeContext: { ...context },
  };
}

export class NodeReconciler {
  readonly #deps: ReconcilerDeps;
  readonly #inflight = new Set<Promise<void>>();
  readonly #abort = new AbortController();

  constructor(deps: ReconcilerDeps) {
    this.#deps = deps;
  }

  /** Start collecting the volumes of a freshly registered node (runs in the background). */
  nodeRegistered(reg: Registration): void {
    this.#deps.connections.connect(reg.nodeId, reg.endpoint);
    const run = this.#reconcile(reg).finally(() => this.#inflight.delete(run));
    this.#inflight.add(run);
  }

  /** Resolves when no listing is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#inflight.size > 0) await Promise.allSettled([...this.#inflight]);
  }

  /** Abort running listings and wait for them. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error('controller stopping'));
    await this.idle();
  }

  async #reconcile(reg: Registration): Promise<void> {
    const { registry, index, connections } = this.#deps;
    const log = this.#deps.log.child({ node: reg.nodeId, endpoint: reg.endpoint });
    const since = index.beginListing(reg.nodeId);
    const started = Date.now();
    try {
      const volumes = await connections.listVolumes(reg.nodeId, this.#abort.signal);
      const records = this.#records(reg.nodeId, volumes);
      if (!registry.isCurrent(reg.nodeId, reg.registrationId)) {
        log.info('volume listing superseded by a newer registration; ignored');
        return;
      }
      const result = index.replaceNode(reg.nodeId, records, since);
      registry.markListed(reg.nodeId, reg.registrationId);
      for (const id of result.conflicts) {
        log.error('volume is reported by two nodes; keeping the first owner', { volume: id, owner: index.get(id)?.nodeId });
      }
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
        log.warn('node volume listing failed; registration revoked, the node will register again', { error: errorMessage(err) });
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
