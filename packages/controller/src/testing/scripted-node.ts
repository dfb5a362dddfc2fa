// A node for the controller's tests: the REAL node-controller service of the node package on fake
// devices (@pmem-csi/node/testing createFakeDeviceNode: the node's validation, idempotency,
// rounding, capacity accounting and error codes), served on 127.0.0.1 like a node's
// node-controller port, with what tests script in front of it — failures and latency per method,
// stale capacity reports — and the node's side of the registry protocol driven by the test
// (register, renew, re-register on NOT_FOUND, unregister; optionally with the volume inventory).
// Nothing here decides what a volume operation does: with nothing scripted, the contract suite
// (node-port-contract.ts) holds it to exactly the node's behaviour. Volumes survive stop()/start(),
// like a node's state across restarts.
import * as grpc from '@grpc/grpc-js';
import type { Capacity } from '@pmem-csi/csi';
import { type csi, GiB, type registry } from '@pmem-csi/csi';
import { createFakeDeviceNode, type FakeDeviceNode, type ServedNodeController } from '@pmem-csi/node/testing';
import {
  bindServer,
  type CallContext,
  type ControllerHandlers,
  isServiceError,
  loadCsi,
  loadRegistry,
  type Logger,
  type RegistryClient,
  shutdownServer,
  unary,
} from '@pmem-csi/runtime';
import { InProcessNodePort, type InProcessNodeCalls } from '../nodes/in-process-node-port.js';

export interface ScriptedNodeOptions {
  readonly nodeId: string;
  /** Free bytes at start (default 10 GiB): the size of the node's fake pool. */
  readonly freeBytes?: number;
  /** Allocation unit of the fake devices (default the fake device manager's, 4 MiB). */
  readonly granularity?: number;
  /** What the registration says (the node's device manager is always the fake one). */
  readonly deviceMode?: string;
  readonly version?: string;
  /**
   * What register() sends about the volumes: nothing (default, like a node from before the
   * inventory), every volume ('full'), or only their number ('count').
   */
  readonly inventory?: 'none' | 'full' | 'count';
  readonly log?: Logger;
}

export type ScriptedMethod = 'CreateVolume' | 'DeleteVolume' | 'ListVolumes' | 'GetCapacity' | 'ControllerExpandVolume';

interface Failure {
  readonly code: grpc.status;
  readonly message: string;
  remaining: number;
}

/** A gRPC status as the node's server would send it (code + details). */
class ScriptedStatusError extends Error implements grpc.StatusObject {
  readonly metadata = new grpc.Metadata();
  constructor(
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(details);
  }
}

export class ScriptedNode {
  readonly nodeId: string;
  /** The real node behind the script. */
  readonly node: FakeDeviceNode;
  /** Calls received per method (through gRPC or the in-process calls; not those of addVolume/removeVolumes). */
  readonly calls: Record<ScriptedMethod, number> = {
    CreateVolume: 0,
    DeleteVolume: 0,
    ListVolumes: 0,
    GetCapacity: 0,
    ControllerExpandVolume: 0,
  };
  /** Registration ids this node obtained, in order. */
  readonly registrations: string[] = [];
  /** The node-controller calls with the script in front, for an InProcessNodePort. */
  readonly inProcessCalls: InProcessNodeCalls;
  readonly #opts: ScriptedNodeOptions;
  readonly #failures = new Map<ScriptedMethod, Failure>();
  readonly #delays = new Map<ScriptedMethod, number>();
  /** The node itself, without the script (addVolume, removeVolumes). */
  readonly #direct: InProcessNodePort;
  #reported: Partial<Capacity> | undefined;
  #served: ServedNodeController | undefined;
  #registry: RegistryClient | undefined;
  #registrationId = '';
  #renewTimer: NodeJS.Timeout | undefined;
  #leaseSeconds = 30;

  private constructor(node: FakeDeviceNode, options: ScriptedNodeOptions) {
    this.nodeId = options.nodeId;
    this.node = node;
    this.#opts = options;
    this.#direct = new InProcessNodePort(new Map([['direct', node.calls]]));
    this.#direct.connect(this.nodeId, 'direct');
    this.inProcessCalls = this.#scriptedCalls();
  }

  /** A node with an empty pool of `freeBytes`, not serving yet (start()). */
  static async create(options: ScriptedNodeOptions): Promise<ScriptedNode> {
    const node = await createFakeDeviceNode({
      nodeId: options.nodeId,
      totalSize: options.freeBytes ?? 10 * GiB,
      granularity: options.granularity,
      log: options.log,
    });
    return new ScriptedNode(node, options);
  }

  /** host:port of the running node-controller server ('' when stopped). */
  get endpoint(): string {
    return this.#served?.endpoint ?? '';
  }

  get registrationId(): string {
    return this.#registrationId;
  }

  /** The node's devices now: volume id → bytes. */
  get volumes(): ReadonlyMap<string, number> {
    return this.node.dm.store.volumes;
  }

  /** Serve the node-controller service on 127.0.0.1 (`port` 0 = any free port); returns the endpoint. */
  async start(port = 0): Promise<string> {
    const served = await serve(this.#scriptedHandlers(), `127.0.0.1:${port}`);
    this.#served = served;
    return served.endpoint;
  }

  /** Stop serving (volumes are kept) and stop renewing. */
  async stop(): Promise<void> {
    this.stopRenewing();
    const served = this.#served;
    this.#served = undefined;
    await served?.stop();
  }

  /** Stop everything, including the registry client, and remove the node's state. */
  async close(): Promise<void> {
    await this.stop();
    this.#registry?.close();
    this.#registry = undefined;
    await this.node.close();
  }

  /** The capacity this node reports: the node's own, or what reportCapacity set instead. */
  async capacity(): Promise<Capacity> {
    return { ...(await this.node.dm.getCapacity()), ...this.#reported };
  }

  /** Report these values instead of the real ones, in registrations and GetCapacity (undefined = the truth again). */
  reportCapacity(reported: Partial<Capacity> | undefined): void {
    this.#reported = reported;
  }

  /** Make the next `times` calls of `method` fail with `code` before they reach the node. */
  failNext(method: ScriptedMethod, code: grpc.status, message: string, times = 1): void {
    this.#failures.set(method, { code, message, remaining: times });
  }

  /** Delay every call of `method` by `ms` before it reaches the node (0 removes the delay). */
  delay(method: ScriptedMethod, ms: number): void {
    this.#delays.set(method, ms);
  }

  /** Create a volume on the node behind the controller's back (e.g. made before a controller restart). */
  async addVolume(name: string, size: number): Promise<csi.Volume__Output> {
    return this.#direct.createVolume(this.nodeId, {
      name,
      capacity_range: { required_bytes: String(size) },
      volume_capabilities: [{ mount: {}, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    });
  }

  /** Delete every volume on the node behind the controller's back. */
  async removeVolumes(): Promise<void> {
    for (const volumeId of [...this.volumes.keys()]) await this.#direct.deleteVolume(this.nodeId, volumeId);
  }

  /** Use the registry at `address` for register/renew/unregister. */
  useRegistry(address: string, credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure()): void {
    this.#registry?.close();
    const Registry = loadRegistry().pmemcsi.registry.v1.Registry;
    this.#registry = new Registry(address, credentials, {
      'grpc.max_reconnect_backoff_ms': 500,
      'grpc.initial_reconnect_backoff_ms': 100,
    });
  }

  /** Register the current endpoint (or `endpoint`) and capacity; returns the registration id. */
  async register(endpoint = this.endpoint): Promise<string> {
    const client = this.#registryClient();
    const res = await unary<registry.RegisterControllerRequest, registry.RegisterControllerReply__Output>(
      client,
      client.RegisterController,
      {
        node_id: this.nodeId,
        endpoint,
        capacity: await this.#wireCapacity(),
        device_mode: this.#opts.deviceMode ?? 'fake',
        version: this.#opts.version ?? 'test',
        inventory: await this.#inventory(),
      },
      { timeoutMs: 5000 },
    );
    this.#registrationId = res.registration_id;
    this.#leaseSeconds = Number(res.lease_seconds);
    this.registrations.push(res.registration_id);
    return res.registration_id;
  }

  /** Renew the lease; re-registers when the controller does not know the registration. */
  async renew(): Promise<void> {
    const client = this.#registryClient();
    try {
      await unary(
        client,
        client.RenewController,
        { node_id: this.nodeId, registration_id: this.#registrationId, capacity: await this.#wireCapacity() },
        { timeoutMs: 5000 },
      );
    } catch (err) {
      if (!isServiceError(err) || err.code !== grpc.status.NOT_FOUND) throw err;
      await this.register();
    }
  }

  /** Renew every `intervalMs` (default a third of the lease) until stopRenewing/stop. */
  startRenewing(intervalMs?: number): void {
    this.stopRenewing();
    const tick = (): void => {
      this.#renewTimer = setTimeout(
        () => {
          this.renew().then(tick, tick);
        },
        intervalMs ?? (this.#leaseSeconds * 1000) / 3,
      );
    };
    tick();
  }

  stopRenewing(): void {
    if (this.#renewTimer !== undefined) clearTimeout(this.#renewTimer);
    this.#renewTimer = undefined;
  }

  async unregister(): Promise<void> {
    const client = this.#registryClient();
    await unary(
      client,
      client.UnregisterController,
      { node_id: this.nodeId, registration_id: this.#registrationId },
      { timeoutMs: 5000 },
    );
  }

  #registryClient(): RegistryClient {
    if (this.#registry === undefined) throw new Error('ScriptedNode: call useRegistry(address) first');
    return this.#registry;
  }

  async #inventory(): Promise<registry.VolumeInventory | null> {
    const mode = this.#opts.inventory ?? 'none';
    if (mode === 'none') return null;
    const volumes = await this.node.inventory();
    return { count: String(volumes.length), volumes: mode === 'full' ? volumes : [] };
  }

  async #wireCapacity(): Promise<registry.Capacity> {
    const c = await this.capacity();
    return {
      max_volume_size: String(c.maxVolumeSize),
      available: String(c.available),
      managed: String(c.managed),
      total: String(c.total),
    };
  }

  /** Count the call, wait its scripted delay, throw its scripted failure. */
  async #enter(method: ScriptedMethod): Promise<void> {
    this.calls[method]++;
    const ms = this.#delays.get(method) ?? 0;
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    const failure = this.#failures.get(method);
    if (failure !== undefined && failure.remaining > 0) {
      failure.remaining--;
      throw new ScriptedStatusError(failure.code, failure.message);
    }
  }

  /** A GetCapacity answer with the reported values in place of the node's. */
  #reportedAnswer(res: csi.GetCapacityResponse): csi.GetCapacityResponse {
    const r = this.#reported;
    if (r === undefined) return res;
    return {
      ...res,
      ...(r.available === undefined ? {} : { available_capacity: String(r.available) }),
      ...(r.maxVolumeSize === undefined ? {} : { maximum_volume_size: { value: String(r.maxVolumeSize) } }),
    };
  }

  #scriptedCalls(): InProcessNodeCalls {
    const real = this.node.calls;
    const script =
      <Req, Res>(method: ScriptedMethod, fn: (req: Req, ctx: CallContext) => Promise<Res>) =>
      async (req: Req, ctx: CallContext): Promise<Res> => {
        await this.#enter(method);
        return fn(req, ctx);
      };
    return {
      CreateVolume: script('CreateVolume', real.CreateVolume),
      DeleteVolume: script('DeleteVolume', real.DeleteVolume),
      ListVolumes: script('ListVolumes', real.ListVolumes),
      GetCapacity: script('GetCapacity', async (req, ctx) => this.#reportedAnswer(await real.GetCapacity(req, ctx))),
      ControllerExpandVolume: script('ControllerExpandVolume', real.ControllerExpandVolume),
    };
  }

  /** The node's grpc-js handlers (what the node driver serves) with the script in front. */
  #scriptedHandlers(): ControllerHandlers {
    const real = this.node.handlers;
    return {
      ...real,
      CreateVolume: scripted(real.CreateVolume, () => this.#enter('CreateVolume')),
      DeleteVolume: scripted(real.DeleteVolume, () => this.#enter('DeleteVolume')),
      ListVolumes: scripted(real.ListVolumes, () => this.#enter('ListVolumes')),
      GetCapacity: scripted(
        real.GetCapacity,
        () => this.#enter('GetCapacity'),
        (res) => this.#reportedAnswer(res),
      ),
      ControllerExpandVolume: scripted(real.ControllerExpandVolume, () => this.#enter('ControllerExpandVolume')),
    };
  }
}

/** `handler` after `before` (whose failure is the answer), its answer passed through `adjust`. */
function scripted<Req, Res>(
  handler: grpc.handleUnaryCall<Req, Res>,
  before: () => Promise<void>,
  adjust: (res: Res) => Res = (res) => res,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    before().then(
      () =>
        handler(call, (err, res) =>
          callback(err, err === null && res !== null && res !== undefined ? adjust(res) : res),
        ),
      (err: ScriptedStatusError) => callback(err, null),
    );
  };
}

async function serve(handlers: ControllerHandlers, address: string): Promise<ServedNodeController> {
  const server = new grpc.Server();
  server.addService(loadCsi().csi.v1.Controller.service, handlers);
  const port = await bindServer(server, address, grpc.ServerCredentials.createInsecure());
  return { endpoint: `127.0.0.1:${port}`, stop: () => shutdownServer(server, 0) };
}
