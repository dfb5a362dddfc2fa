// One gRPC client per node for its node-controller service (the CSI Controller service that
// manages the volumes of that node). Credentials come from an injected factory, so mutual TLS
// (and certificates reloaded from disk) plug in without changing this file. A client is replaced,
// and the old one closed, when the node registers with a new endpoint. Every forwarded call has a
// deadline and follows the incoming call's AbortSignal: a forwarded call never hangs.
import * as grpc from '@grpc/grpc-js';
import { isServiceError, loadCsi, nullLogger, unary, type ControllerClient, type csi, type Logger } from '@pmem-csi/runtime';
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
  readonly log?: Logger;
}

// A lost node should be retried soon after it comes back, not after grpc-js's default 120 s backoff.
const DEFAULT_CHANNEL_OPTIONS: grpc.ChannelOptions = { 'grpc.max_reconnect_backoff_ms': 5000, 'grpc.initial_reconnect_backoff_ms': 500 };
const MAX_LIST_PAGES = 100_000;

interface Connection {
  readonly endpoint: string;
  readonly client: ControllerClient;
}

export class NodeConnections {
  readonly #conns = new Map<string, Connection>();
  readonly #opts: NodeConnectionOptions;
  readonly #log: Logger;
  readonly #mutateMs: number;
  readonly #queryMs: number;

  constructor(options: NodeConnectionOptions) {
    this.#opts = options;
    this.#log = options.log ?? nullLogger;
    this.#mutateMs = options.mutateTimeoutMs ?? 60_000;
    this.#queryMs = options.queryTimeoutMs ?? 10_000;
  }

  /** Make sure there is a client for `nodeId` at `endpoint`; replaces (and closes) one for another endpoint. */
  connect(nodeId: string, endpoint: string): void {
    const old = this.#conns.get(nodeId);
    if (old?.endpoint === endpoint) return;
    const Controller = loadCsi().csi.v1.Controller;
    const client = new Controller(endpoint, this.#opts.credentials(endpoint), { ...DEFAULT_CHANNEL_OPTIONS, ...this.#opts.channelOptions });
    this.#conns.set(nodeId, { endpoint, client });
    if (old !== undefined) {
      old.client.close();
      this.#log.info('node endpoint changed; connection replaced', { node: nodeId, from: old.endpoint, to: endpoint });
    }
  }

  /** The endpoint the node's client talks to, if connected. */
  endpointOf(nodeId: string): string | undefined {
    return this.#conns.get(nodeId)?.endpoint;
  }

  /** Forward CreateVolume. @throws domain errors naming the node (see node-errors.ts) */
  async createVolume(nodeId: string, req: csi.CreateVolumeRequest, signal?: AbortSignal): Promise<csi.Volume__Output> {
    const client = this.#client(nodeId);
    const res = await this.#call(nodeId, 'CreateVolume', () => unary<csi.CreateVolumeRequest, csi.CreateVolumeResponse__Output>(client, client.CreateVolume, req, { timeoutMs: this.#mutateMs, signal }));
    if (res.volume === null) throw fromNodeError(nodeId, 'CreateVolume', new Error('the node answered without a volume'));
    return res.volume;
  }

  /** Forward DeleteVolume; resolves 'notFound' when the node says the volume does not exist. */
  async deleteVolume(nodeId: string, volumeId: string, signal?: AbortSignal): Promise<'deleted' | 'notFound'> {
    const client = this.#client(nodeId);
    try {
      await unary(client, client.DeleteVolume, { volume_id: volumeId }, { timeoutMs: this.#mutateMs, signal });
      return 'deleted';
    } catch (err) {
      if (isNotFound(err)) return 'notFound';
      throw fromNodeError(nodeId, 'DeleteVolume', err);
    }
  }

  /** The node's GetCapacity: free bytes and the largest volume it can create now. */
  async getCapacity(nodeId: string, signal?: AbortSignal): Promise<{ available: number; maxVolumeSize: number }> {
    const client = this.#client(nodeId);
    const res = await this.#call(nodeId, 'GetCapacity', () => unary<csi.GetCapacityRequest, csi.GetCapacityResponse__Output>(client, client.GetCapacity, {}, { timeoutMs: this.#queryMs, signal }));
    return { available: Number(res.available_capacity), maxVolumeSize: Number(res.maximum_volume_size?.value ?? res.available_capacity) };
  }

  /** Every volume of the node, all pages; each page has its own deadline. */
  async listVolumes(nodeId: string, signal?: AbortSignal): Promise<csi.Volume__Output[]> {
    const client = this.#client(nodeId);
    const volumes: csi.Volume__Output[] = [];
    const seen = new Set<string>();
    let token = '';
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const req = { max_entries: this.#opts.listPageSize ?? 500, starting_token: token };
      const res = await this.#call(nodeId, 'ListVolumes', () => unary<csi.ListVolumesRequest, csi.ListVolumesResponse__Output>(client, client.ListVolumes, req, { timeoutMs: this.#queryMs, signal }));
      for (const entry of res.entries) if (entry.volume !== null) volumes.push(entry.volume);
      token = res.next_token;
      if (token === '') return volumes;
      if (seen.has(token)) throw fromNodeError(nodeId, 'ListVolumes', new Error(`the node repeated page token ${JSON.stringify(token)}`));
      seen.add(token);
    }
    throw fromNodeError(nodeId, 'ListVolumes', new Error(`more than ${MAX_LIST_PAGES} pages`));
  }

  /** Close the client of one node (e.g. before forgetting its endpoint). */
  close(nodeId: string): void {
    this.#conns.get(nodeId)?.client.close();
    this.#conns.delete(nodeId);
  }

  closeAll(): void {
    for (const nodeId of [...this.#conns.keys()]) this.close(nodeId);
  }

  #client(nodeId: string): ControllerClient {
    const conn = this.#conns.get(nodeId);
    if (conn === undefined) throw new NodeUnreachableError(nodeId, 'no connection to its endpoint');
    return conn.client;
  }

  async #call<T>(nodeId: string, method: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw fromNodeError(nodeId, method, err);
    }
  }
}

function isNotFound(err: unknown): boolean {
  return isServiceError(err) && err.code === grpc.status.NOT_FOUND;
}
