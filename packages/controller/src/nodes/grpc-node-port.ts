// One gRPC client per node for its node-controller service (the CSI Controller service that
// manages the volumes of that node). Credentials come from an injected factory, so mutual TLS
// (and certificates reloaded from disk) plug in without changing this file. Every forwarded call
// has a deadline and follows the incoming call's AbortSignal: a forwarded call never hangs.
//
// Connections are made on demand and closed when idle: a registration only records the node's
// endpoint; the client (and its mTLS connection) is created by the first call and closed once no
// call has used it for `idleMs` (default 30 s) — 5,000 registered nodes do not hold 5,000
// outbound connections (~100-150 KiB each) when the controller talks to a few of them. A node
// that registers with a new endpoint gets a new client; the old one is closed.
//
// The mutating calls (CreateVolume, DeleteVolume) are counted per node: whether the controller
// may have changed a node's volumes decides if the inventory the node sends when it registers can
// replace a listing (volumes/volume-reconciler.ts).
import type * as grpc from '@grpc/grpc-js';
import {
  GRPC_OPTIONS,
  loadCsi,
  NotFoundError,
  nullLogger,
  unary,
  type ControllerClient,
  type csi,
  type Logger,
} from '@pmem-csi/runtime';
import { fromNodeError, NodeUnreachableError } from './node-errors.js';

/** Channel credentials for a node endpoint ("host:port"); mTLS in production, insecure in tests. */
export type NodeCredentialsFactory = (endpoint: string) => grpc.ChannelCredentials;

export interface NodeConnectionOptions {
  readonly credentials: NodeCredentialsFactory;
  /** Extra channel options (e.g. ssl_target_name_override for the node-controller SAN). */
  readonly channelOptions?: grpc.ChannelOptions;
  /** Deadline of CreateVolume/DeleteVolume on a node (default 60 s). */
  readonly mutateTimeoutMs?: number;
  /** Deadline of ListVolumes pages and other queries (default 10 s). */
  readonly queryTimeoutMs?: number;
  /** Entries per ListVolumes page when collecting a node's volumes (default 500). */
  readonly listPageSize?: number;
  /** Close a node's client after this long without calls (default 30 s). */
  readonly idleMs?: number;
  readonly now?: () => number;
  readonly log?: Logger;
}

/** What this controller sent to a node that may have changed its volumes. */
export interface NodeMutations {
  /** CreateVolume/DeleteVolume calls started since this controller started. */
  readonly started: number;
  /** Of those, the ones still running. */
  readonly running: number;
}

export const DEFAULT_NODE_IDLE_MS = 30_000;

// A lost node should be retried soon after it comes back, not after grpc-js's default 120 s backoff.
const DEFAULT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  ...GRPC_OPTIONS,
  'grpc.max_reconnect_backoff_ms': 5000,
  'grpc.initial_reconnect_backoff_ms': 500,
};
const MAX_LIST_PAGES = 100_000;

interface Connection {
  readonly endpoint: string;
  /** Made by the first call, closed when idle. */
  client: ControllerClient | undefined;
  /** Calls in flight on `client`. */
  calls: number;
  lastUsed: number;
}

export class NodeConnections {
  readonly #conns = new Map<string, Connection>();
  readonly #mutations = new Map<string, { started: number; running: number }>();
  readonly #opts: NodeConnectionOptions;
  readonly #log: Logger;
  readonly #mutateMs: number;
  readonly #queryMs: number;
  readonly #idleMs: number;
  readonly #now: () => number;
  #open = 0;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(options: NodeConnectionOptions) {
    this.#opts = options;
    this.#log = options.log ?? nullLogger;
    this.#mutateMs = options.mutateTimeoutMs ?? 60_000;
    this.#queryMs = options.queryTimeoutMs ?? 10_000;
    this.#idleMs = options.idleMs ?? DEFAULT_NODE_IDLE_MS;
    this.#now = options.now ?? Date.now;
  }

  /** Remember the endpoint of `nodeId` (no connection is made); a client for another endpoint is closed. */
  connect(nodeId: string, endpoint: string): void {
    const old = this.#conns.get(nodeId);
    if (old?.endpoint === endpoint) return;
    this.#conns.set(nodeId, { endpoint, client: undefined, calls: 0, lastUsed: this.#now() });
    if (old === undefined) return;
    this.#closeClient(old);
    this.#log.info('node endpoint changed; connection replaced', { node: nodeId, from: old.endpoint, to: endpoint });
  }

  /** The endpoint the node's client talks to, if known. */
  endpointOf(nodeId: string): string | undefined {
    return this.#conns.get(nodeId)?.endpoint;
  }

  /** Number of node clients open now (each holds at most one connection). */
  get openClients(): number {
    return this.#open;
  }

  /** CreateVolume/DeleteVolume calls this controller sent to the node. */
  mutations(nodeId: string): NodeMutations {
    return this.#mutations.get(nodeId) ?? { started: 0, running: 0 };
  }

  /** Forward CreateVolume. @throws domain errors naming the node (see node-errors.ts) */
  async createVolume(nodeId: string, req: csi.CreateVolumeRequest, signal?: AbortSignal): Promise<csi.Volume__Output> {
    const res = await this.#mutate(nodeId, 'CreateVolume', (client) =>
      unary<csi.CreateVolumeRequest, csi.CreateVolumeResponse__Output>(client, client.CreateVolume, req, {
        timeoutMs: this.#mutateMs,
        signal,
      }),
    );
    if (res.volume === null)
      throw fromNodeError(nodeId, 'CreateVolume', new Error('the node answered without a volume'));
    return res.volume;
  }

  /** Forward DeleteVolume; resolves 'notFound' when the node says the volume does not exist. */
  async deleteVolume(nodeId: string, volumeId: string, signal?: AbortSignal): Promise<'deleted' | 'notFound'> {
    try {
      await this.#mutate(nodeId, 'DeleteVolume', (client) =>
        unary(client, client.DeleteVolume, { volume_id: volumeId }, { timeoutMs: this.#mutateMs, signal }),
      );
      return 'deleted';
    } catch (err) {
      if (err instanceof NotFoundError) return 'notFound';
      throw err;
    }
  }

  /** The node's GetCapacity: free bytes and the largest volume it can create now. */
  async getCapacity(nodeId: string, signal?: AbortSignal): Promise<{ available: number; maxVolumeSize: number }> {
    const res = await this.#call(nodeId, 'GetCapacity', (client) =>
      unary<csi.GetCapacityRequest, csi.GetCapacityResponse__Output>(
        client,
        client.GetCapacity,
        {},
        { timeoutMs: this.#queryMs, signal },
      ),
    );
    return {
      available: Number(res.available_capacity),
      maxVolumeSize: Number(res.maximum_volume_size?.value ?? res.available_capacity),
    };
  }

  /** Every volume of the node, all pages; each page has its own deadline. */
  async listVolumes(nodeId: string, signal?: AbortSignal): Promise<csi.Volume__Output[]> {
    const volumes: csi.Volume__Output[] = [];
    const seen = new Set<string>();
    let token = '';
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const req = { max_entries: this.#opts.listPageSize ?? 500, starting_token: token };
      const res = await this.#call(nodeId, 'ListVolumes', (client) =>
        unary<csi.ListVolumesRequest, csi.ListVolumesResponse__Output>(client, client.ListVolumes, req, {
          timeoutMs: this.#queryMs,
          signal,
        }),
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

  /** Close the client of one node and forget its endpoint. */
  close(nodeId: string): void {
    const conn = this.#conns.get(nodeId);
    if (conn !== undefined) this.#closeClient(conn);
    this.#conns.delete(nodeId);
  }

  closeAll(): void {
    for (const nodeId of [...this.#conns.keys()]) this.close(nodeId);
    if (this.#sweeper !== undefined) clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  /** Close the clients that no call used for the idle time (runs on a timer; public for tests). */
  closeIdle(): void {
    const cutoff = this.#now() - this.#idleMs;
    for (const conn of this.#conns.values()) {
      if (conn.client !== undefined && conn.calls === 0 && conn.lastUsed <= cutoff) this.#closeClient(conn);
    }
    if (this.#open === 0 && this.#sweeper !== undefined) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }

  async #mutate<T>(nodeId: string, method: string, fn: (client: ControllerClient) => Promise<T>): Promise<T> {
    const m = this.#mutations.get(nodeId) ?? { started: 0, running: 0 };
    this.#mutations.set(nodeId, m);
    m.started++;
    m.running++;
    try {
      return await this.#call(nodeId, method, fn);
    } finally {
      m.running--;
    }
  }

  /** Run one call on the node's client (made now if needed), converting its errors. */
  async #call<T>(nodeId: string, method: string, fn: (client: ControllerClient) => Promise<T>): Promise<T> {
    const conn = this.#conns.get(nodeId);
    if (conn === undefined) throw new NodeUnreachableError(nodeId, 'no connection to its endpoint');
    const client = this.#clientOf(conn);
    conn.calls++;
    try {
      return await fn(client);
    } catch (err) {
      throw fromNodeError(nodeId, method, err);
    } finally {
      conn.calls--;
      conn.lastUsed = this.#now();
    }
  }

  #clientOf(conn: Connection): ControllerClient {
    if (conn.client !== undefined) return conn.client;
    const Controller = loadCsi().csi.v1.Controller;
    conn.client = new Controller(conn.endpoint, this.#opts.credentials(conn.endpoint), {
      ...DEFAULT_CHANNEL_OPTIONS,
      ...this.#opts.channelOptions,
    });
    this.#open++;
    if (this.#sweeper === undefined) {
      this.#sweeper = setInterval(() => this.closeIdle(), Math.max(100, Math.floor(this.#idleMs / 2)));
      this.#sweeper.unref();
    }
    return conn.client;
  }

  #closeClient(conn: Connection): void {
    if (conn.client === undefined) return;
    conn.client.close();
    conn.client = undefined;
    this.#open--;
  }
}
