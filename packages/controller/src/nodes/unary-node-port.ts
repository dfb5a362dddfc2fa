// The part of a NodePort that does not depend on how a call reaches the node: which request each
// method sends, deadlines (mutations get longer ones than queries), ListVolumes paging, reading
// the answers, and counting the mutating calls per node — whether the controller may have changed
// a node's volumes decides if the inventory the node sends when it registers can replace a listing
// (volumes/volume-reconciler.ts). An adapter supplies only the connection bookkeeping and one
// call: run the node's RPCs and turn their errors into domain errors naming the node.
import { type csi, NotFoundError } from '@pmem-csi/csi';
import type { UnaryCallOptions } from '@pmem-csi/runtime';
import { fromNodeError } from './node-errors.js';
import type { NodeCapacityAnswer, NodeExpansionAnswer, NodeMutations, NodePort } from './node-port.js';

/** The node-controller RPCs the controller uses, answers as they come off the wire. */
export interface NodeRpcs {
  CreateVolume(req: csi.CreateVolumeRequest, o: UnaryCallOptions): Promise<csi.CreateVolumeResponse__Output>;
  DeleteVolume(req: csi.DeleteVolumeRequest, o: UnaryCallOptions): Promise<csi.DeleteVolumeResponse__Output>;
  ListVolumes(req: csi.ListVolumesRequest, o: UnaryCallOptions): Promise<csi.ListVolumesResponse__Output>;
  GetCapacity(req: csi.GetCapacityRequest, o: UnaryCallOptions): Promise<csi.GetCapacityResponse__Output>;
  ControllerExpandVolume(
    req: csi.ControllerExpandVolumeRequest,
    o: UnaryCallOptions,
  ): Promise<csi.ControllerExpandVolumeResponse__Output>;
}

export interface NodeCallOptions {
  /** Deadline of CreateVolume/DeleteVolume/ControllerExpandVolume on a node (default 60 s). */
  readonly mutateTimeoutMs?: number;
  /** Deadline of ListVolumes pages and other queries (default 10 s). */
  readonly queryTimeoutMs?: number;
  /** Entries per ListVolumes page when collecting a node's volumes (default 500). */
  readonly listPageSize?: number;
}

const MAX_LIST_PAGES = 100_000;

export abstract class UnaryNodePort implements NodePort {
  readonly #mutations = new Map<string, { started: number; running: number }>();
  readonly #mutateMs: number;
  readonly #queryMs: number;
  readonly #pageSize: number;

  constructor(options: NodeCallOptions) {
    this.#mutateMs = options.mutateTimeoutMs ?? 60_000;
    this.#queryMs = options.queryTimeoutMs ?? 10_000;
    this.#pageSize = options.listPageSize ?? 500;
  }

  abstract connect(nodeId: string, endpoint: string): void;
  abstract close(nodeId: string): void;
  abstract closeAll(): void;

  /**
   * Run `fn` with the RPCs of node `nodeId`; its errors become domain errors naming the node
   * (fromNodeError). @throws NodeUnreachableError when the node has no endpoint or cannot be reached
   */
  protected abstract call<T>(nodeId: string, method: string, fn: (rpcs: NodeRpcs) => Promise<T>): Promise<T>;

  mutations(nodeId: string): NodeMutations {
    return this.#mutations.get(nodeId) ?? { started: 0, running: 0 };
  }

  async createVolume(nodeId: string, req: csi.CreateVolumeRequest, signal?: AbortSignal): Promise<csi.Volume__Output> {
    const res = await this.#mutate(nodeId, 'CreateVolume', (rpcs) =>
      rpcs.CreateVolume(req, { timeoutMs: this.#mutateMs, signal }),
    );
    if (res.volume === null)
      throw fromNodeError(nodeId, 'CreateVolume', new Error('the node answered without a volume'));
    return res.volume;
  }

  async deleteVolume(nodeId: string, volumeId: string, signal?: AbortSignal): Promise<'deleted' | 'notFound'> {
    try {
      await this.#mutate(nodeId, 'DeleteVolume', (rpcs) =>
        rpcs.DeleteVolume({ volume_id: volumeId }, { timeoutMs: this.#mutateMs, signal }),
      );
      return 'deleted';
    } catch (err) {
      if (err instanceof NotFoundError) return 'notFound';
      throw err;
    }
  }

  async expandVolume(
    nodeId: string,
    req: csi.ControllerExpandVolumeRequest,
    signal?: AbortSignal,
  ): Promise<NodeExpansionAnswer> {
    const res = await this.#mutate(nodeId, 'ControllerExpandVolume', (rpcs) =>
      rpcs.ControllerExpandVolume(req, { timeoutMs: this.#mutateMs, signal }),
    );
    const capacityBytes = Number(res.capacity_bytes);
    // A grown volume has a size; 0 would make the controller book a shrink that never happened.
    if (!Number.isSafeInteger(capacityBytes) || capacityBytes <= 0) {
      throw fromNodeError(
        nodeId,
        'ControllerExpandVolume',
        new Error(`the node answered capacity_bytes ${JSON.stringify(res.capacity_bytes)}`),
      );
    }
    return { capacityBytes, nodeExpansionRequired: res.node_expansion_required };
  }

  async getCapacity(nodeId: string, signal?: AbortSignal): Promise<NodeCapacityAnswer> {
    const res = await this.call(nodeId, 'GetCapacity', (rpcs) =>
      rpcs.GetCapacity({}, { timeoutMs: this.#queryMs, signal }),
    );
    return {
      available: Number(res.available_capacity),
      maxVolumeSize: Number(res.maximum_volume_size?.value ?? res.available_capacity),
    };
  }

  async listVolumes(nodeId: string, signal?: AbortSignal): Promise<csi.Volume__Output[]> {
    const volumes: csi.Volume__Output[] = [];
    const seen = new Set<string>();
    let token = '';
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const req = { max_entries: this.#pageSize, starting_token: token };
      const res = await this.call(nodeId, 'ListVolumes', (rpcs) =>
        rpcs.ListVolumes(req, { timeoutMs: this.#queryMs, signal }),
      );
      for (const entry of res.entries) if (entry.volume !== null) volumes.push(entry.volume);
      token = res.next_token;
      if (token === '') return volumes;
      if (seen.has(token))
        throw fromNodeError(nodeId, 'ListVolumes', new Error(`the node repeated page token ${JSON.stringify(token)}`));
      seen.add(token);
    }
    throw fromNodeError(nodeId, 'ListVolumes', new Error(`more than ${MAX_LIST_PAGES} pages`));
  }

  async #mutate<T>(nodeId: string, method: string, fn: (rpcs: NodeRpcs) => Promise<T>): Promise<T> {
    const m = this.#mutations.get(nodeId) ?? { started: 0, running: 0 };
    this.#mutations.set(nodeId, m);
    m.started++;
    m.running++;
    try {
      return await this.call(nodeId, method, fn);
    } finally {
      m.running--;
    }
  }
}
