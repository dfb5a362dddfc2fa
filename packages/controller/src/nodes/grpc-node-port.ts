// The gRPC adapter of the NodePort (node-port.ts): one client per node for its node-controller
// service (the CSI Controller service that manages the volumes of that node). Credentials come
// from an injected factory, so mutual TLS (and certificates reloaded from disk) plug in without
// changing this file. Every forwarded call has a deadline and follows the incoming call's
// AbortSignal (unary-node-port.ts): a forwarded call never hangs.
//
// Connections are made on demand and closed when idle: a registration only records the node's
// endpoint; the client (and its mTLS connection) is created by the first call and closed once no
// call has used it for `idleMs` (default 30 s) — 5,000 registered nodes do not hold 5,000
// outbound connections (each with its TLS and HTTP/2 buffers: e2e/bench/README.md) when the
// controller talks to a few of them. A node
// that registers with a new endpoint gets a new client; the old one is closed.
import type * as grpc from '@grpc/grpc-js';
import { GRPC_OPTIONS, loadCsi, nullLogger, unary, type ControllerClient, type Logger } from '@pmem-csi/runtime';
import { fromNodeError, NodeUnreachableError } from './node-errors.js';
import { UnaryNodePort, type NodeCallOptions, type NodeRpcs } from './unary-node-port.js';

/** Channel credentials for a node endpoint ("host:port"); mTLS in production, insecure in tests. */
export type NodeCredentialsFactory = (endpoint: string) => grpc.ChannelCredentials;

export interface NodeConnectionOptions extends NodeCallOptions {
  readonly credentials: NodeCredentialsFactory;
  /** Extra channel options (e.g. ssl_target_name_override for the node-controller SAN). */
  readonly channelOptions?: grpc.ChannelOptions;
  /** Close a node's client after this long without calls (default 30 s). */
  readonly idleMs?: number;
  readonly now?: () => number;
  readonly log?: Logger;
}

export const DEFAULT_NODE_IDLE_MS = 30_000;

// A lost node should be retried soon after it comes back, not after grpc-js's default 120 s backoff.
const DEFAULT_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  ...GRPC_OPTIONS,
  'grpc.max_reconnect_backoff_ms': 5000,
  'grpc.initial_reconnect_backoff_ms': 500,
};

interface Connection {
  readonly endpoint: string;
  /** Made by the first call, closed when idle. */
  client: ControllerClient | undefined;
  rpcs: NodeRpcs | undefined;
  /** Calls in flight on `client`. */
  calls: number;
  lastUsed: number;
}

function rpcsOf(client: ControllerClient): NodeRpcs {
  return {
    CreateVolume: (req, o) => unary(client, client.CreateVolume, req, o),
    DeleteVolume: (req, o) => unary(client, client.DeleteVolume, req, o),
    ListVolumes: (req, o) => unary(client, client.ListVolumes, req, o),
    GetCapacity: (req, o) => unary(client, client.GetCapacity, req, o),
    ControllerExpandVolume: (req, o) => unary(client, client.ControllerExpandVolume, req, o),
  };
}

export class GrpcNodePort extends UnaryNodePort {
  readonly #conns = new Map<string, Connection>();
  readonly #opts: NodeConnectionOptions;
  readonly #log: Logger;
  readonly #idleMs: number;
  readonly #now: () => number;
  #open = 0;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(options: NodeConnectionOptions) {
    super(options);
    this.#opts = options;
    this.#log = options.log ?? nullLogger;
    this.#idleMs = options.idleMs ?? DEFAULT_NODE_IDLE_MS;
    this.#now = options.now ?? Date.now;
  }

  /** Remember the endpoint of `nodeId` (no connection is made); a client for another endpoint is closed. */
  connect(nodeId: string, endpoint: string): void {
    const old = this.#conns.get(nodeId);
    if (old?.endpoint === endpoint) return;
    this.#conns.set(nodeId, { endpoint, client: undefined, rpcs: undefined, calls: 0, lastUsed: this.#now() });
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

  /** Run one call on the node's client (made now if needed), converting its errors. */
  protected async call<T>(nodeId: string, method: string, fn: (rpcs: NodeRpcs) => Promise<T>): Promise<T> {
    const conn = this.#conns.get(nodeId);
    if (conn === undefined) throw new NodeUnreachableError(nodeId, 'no connection to its endpoint');
    const rpcs = this.#rpcsOf(conn);
    conn.calls++;
    try {
      return await fn(rpcs);
    } catch (err) {
      throw fromNodeError(nodeId, method, err);
    } finally {
      conn.calls--;
      conn.lastUsed = this.#now();
    }
  }

  #rpcsOf(conn: Connection): NodeRpcs {
    if (conn.rpcs !== undefined) return conn.rpcs;
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
    conn.rpcs = rpcsOf(conn.client);
    return conn.rpcs;
  }

  #closeClient(conn: Connection): void {
    if (conn.client === undefined) return;
    conn.client.close();
    conn.client = undefined;
    conn.rpcs = undefined;
    this.#open--;
  }
}
