// A fake node driver for controller tests and later integration tests: a real in-process gRPC
// server implementing the node-controller service (csi.v1.Controller) over an in-memory volume
// map with configurable free space, plus the node's side of the registry protocol (register,
// renew every lease/3, re-register on NOT_FOUND, unregister), optionally sending its volume
// inventory with the registration like a current node. Failures and latency can be injected per
// method. Volumes survive stop()/start(), like a real node's state directory.
import * as grpc from '@grpc/grpc-js';
import { formatVolumeContext, parseVolumeParameters, volumeIdForName } from '@pmem-csi/api';
import {
  AbortedError,
  AlreadyExistsError,
  adaptService,
  bindServer,
  InvalidArgumentError,
  isServiceError,
  loadCsi,
  loadRegistry,
  nullLogger,
  OutOfRangeError,
  ResourceExhaustedError,
  shutdownServer,
  unary,
  type AsyncService,
  type ControllerHandlers,
  type csi,
  type Logger,
  type registry,
  type RegistryClient,
} from '@pmem-csi/runtime';

export interface FakeVolume {
  readonly volumeId: string;
  readonly name: string;
  readonly size: number;
  readonly context: Readonly<Record<string, string>>;
}

export interface FakeCapacity {
  readonly maxVolumeSize: number;
  readonly available: number;
  readonly managed: number;
  readonly total: number;
}

export interface FakeNodeOptions {
  readonly nodeId: string;
  /** Free bytes at start (default 10 GiB); the largest volume is all of it (no fragmentation). */
  readonly freeBytes?: number;
  /** Sizes round up to this (default 1 MiB). */
  readonly alignment?: number;
  /** DeleteVolume of an unknown id: 'ok' (idempotent, default) or 'notFound'. */
  readonly deleteUnknown?: 'ok' | 'notFound';
  readonly deviceMode?: string;
  readonly version?: string;
  /**
   * What register() sends about the volumes: nothing (default, like a node from before the
   * inventory), every volume ('full'), or only their number ('count').
   */
  readonly inventory?: 'none' | 'full' | 'count';
  readonly log?: Logger;
}

type Method = 'CreateVolume' | 'DeleteVolume' | 'ListVolumes' | 'GetCapacity';

interface Failure {
  readonly code: grpc.status;
  readonly message: string;
  remaining: number;
}

/** A gRPC error as a node would send it (code + details). */
class NodeStatusError extends Error implements Partial<grpc.StatusObject> {
  constructor(
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(details);
  }
}

const GiB = 1024 ** 3;

export class FakeNode {
  readonly nodeId: string;
  /** Volumes by id. */
  readonly volumes = new Map<string, FakeVolume>();
  /** Calls received per method. */
  readonly calls: Record<Method, number> = { CreateVolume: 0, DeleteVolume: 0, ListVolumes: 0, GetCapacity: 0 };
  /** Registration ids this node obtained, in order. */
  readonly registrations: string[] = [];
  #free: number;
  readonly #total: number;
  readonly #opts: FakeNodeOptions;
  readonly #failures = new Map<Method, Failure>();
  readonly #delays = new Map<Method, number>();
  #reported: Partial<FakeCapacity> | undefined;
  #server: grpc.Server | undefined;
  #endpoint = '';
  #registry: RegistryClient | undefined;
  #registrationId = '';
  #renewTimer: NodeJS.Timeout | undefined;
  #leaseSeconds = 30;

  constructor(options: FakeNodeOptions) {
    this.nodeId = options.nodeId;
    this.#opts = options;
    this.#free = options.freeBytes ?? 10 * GiB;
    this.#total = this.#free;
  }

  /** host:port of the running node-controller server ('' when stopped). */
  get endpoint(): string {
    return this.#endpoint;
  }

  get registrationId(): string {
    return this.#registrationId;
  }

  /** Serve the node-controller service on 127.0.0.1 (`port` 0 = any free port); returns the endpoint. */
  async start(port = 0): Promise<string> {
    const server = new grpc.Server();
    const def = loadCsi().csi.v1.Controller.service;
    server.addService(
      def,
      adaptService<ControllerHandlers>('FakeNodeController', def, this.#handlers(), {
        log: this.#opts.log ?? nullLogger,
      }),
    );
    const bound = await bindServer(server, `127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure());
    this.#server = server;
    this.#endpoint = `127.0.0.1:${bound}`;
    return this.#endpoint;
  }

  /** Stop serving (volumes are kept) and stop renewing. */
  async stop(): Promise<void> {
    this.stopRenewing();
    const server = this.#server;
    this.#server = undefined;
    this.#endpoint = '';
    if (server !== undefined) await shutdownServer(server, 0);
  }

  /** Stop everything, including the registry client. */
  async close(): Promise<void> {
    await this.stop();
    this.#registry?.close();
    this.#registry = undefined;
  }

  /** The capacity this node reports; `reportCapacity` overrides it (stale reports). */
  capacity(): FakeCapacity {
    return {
      maxVolumeSize: this.#free,
      available: this.#free,
      managed: this.#total,
      total: this.#total,
      ...this.#reported,
    };
  }

  /** Report these values instead of the real ones (undefined = report the truth again). */
  reportCapacity(reported: Partial<FakeCapacity> | undefined): void {
    this.#reported = reported;
  }

  /** Make the next `times` calls of `method` fail with `code`. */
  failNext(method: Method, code: grpc.status, message: string, times = 1): void {
    this.#failures.set(method, { code, message, remaining: times });
  }

  /** Delay every call of `method` by `ms` (0 removes the delay). */
  delay(method: Method, ms: number): void {
    this.#delays.set(method, ms);
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

  /** Register the current endpoint and capacity; returns the registration id. */
  async register(): Promise<string> {
    const client = this.#registryClient();
    const res = await unary<registry.RegisterControllerRequest, registry.RegisterControllerReply__Output>(
      client,
      client.RegisterController,
      {
        node_id: this.nodeId,
        endpoint: this.#endpoint,
        capacity: this.#wireCapacity(),
        device_mode: this.#opts.deviceMode ?? 'fake',
        version: this.#opts.version ?? 'test',
        inventory: this.#inventory(),
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
        { node_id: this.nodeId, registration_id: this.#registrationId, capacity: this.#wireCapacity() },
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

  /** Put a volume on the node behind the controller's back (e.g. made before a controller restart). */
  addVolume(name: string, size: number): FakeVolume {
    const volume: FakeVolume = { volumeId: volumeIdForName(name), name, size, context: { name, deviceMode: 'fake' } };
    this.volumes.set(volume.volumeId, volume);
    this.#free -= size;
    return volume;
  }

  #registryClient(): RegistryClient {
    if (this.#registry === undefined) throw new Error('FakeNode: call useRegistry(address) first');
    return this.#registry;
  }

  #inventory(): registry.VolumeInventory | null {
    const mode = this.#opts.inventory ?? 'none';
    if (mode === 'none') return null;
    const volumes = mode === 'full' ? [...this.volumes.values()].map((v) => this.#toCsi(v)) : [];
    return { count: String(this.volumes.size), volumes };
  }

  #wireCapacity(): registry.Capacity {
    const c = this.capacity();
    return {
      max_volume_size: String(c.maxVolumeSize),
      available: String(c.available),
      managed: String(c.managed),
      total: String(c.total),
    };
  }

  async #enter(method: Method): Promise<void> {
    this.calls[method]++;
    const ms = this.#delays.get(method) ?? 0;
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    const failure = this.#failures.get(method);
    if (failure !== undefined && failure.remaining > 0) {
      failure.remaining--;
      throw new NodeStatusError(failure.code, failure.message);
    }
  }

  #toCsi(v: FakeVolume): csi.Volume {
    return { volume_id: v.volumeId, capacity_bytes: String(v.size), volume_context: { ...v.context } };
  }

  #handlers(): AsyncService<ControllerHandlers> {
    return {
      CreateVolume: async (req) => {
        await this.#enter('CreateVolume');
        return { volume: this.#toCsi(this.#create(req)) };
      },
      DeleteVolume: async (req) => {
        await this.#enter('DeleteVolume');
        const v = this.volumes.get(req.volume_id);
        if (v === undefined) {
          if (this.#opts.deleteUnknown === 'notFound')
            throw new NodeStatusError(grpc.status.NOT_FOUND, `volume ${JSON.stringify(req.volume_id)} not found`);
          return {};
        }
        this.volumes.delete(v.volumeId);
        this.#free += v.size;
        return {};
      },
      ListVolumes: async (req) => {
        await this.#enter('ListVolumes');
        return this.#list(req);
      },
      GetCapacity: async () => {
        await this.#enter('GetCapacity');
        const c = this.capacity();
        return { available_capacity: String(c.available), maximum_volume_size: { value: String(c.maxVolumeSize) } };
      },
    };
  }

  #create(req: csi.CreateVolumeRequest__Output): FakeVolume {
    if (req.name === '') throw new InvalidArgumentError('name is required');
    const params = parseVolumeParameters(req.parameters, 'createVolume');
    if (!params.ok) throw new InvalidArgumentError(params.message);
    const required = Number(req.capacity_range?.required_bytes ?? 0);
    const limit = Number(req.capacity_range?.limit_bytes ?? 0);
    const id = volumeIdForName(req.name);
    const existing = this.volumes.get(id);
    if (existing !== undefined) return this.#compatible(existing, required, limit);
    const size = this.#allocate(required, limit);
    const volume: FakeVolume = {
      volumeId: id,
      name: req.name,
      size,
      context: formatVolumeContext({ ...params.value, name: req.name, deviceMode: 'fake' }),
    };
    this.volumes.set(id, volume);
    return volume;
  }

  #compatible(existing: FakeVolume, required: number, limit: number): FakeVolume {
    if (existing.size < required || (limit > 0 && existing.size > limit)) {
      throw new AlreadyExistsError(`volume ${JSON.stringify(existing.name)} exists with another size`);
    }
    return existing;
  }

  #allocate(required: number, limit: number): number {
    const align = this.#opts.alignment ?? 1024 * 1024;
    const size = Math.ceil(Math.max(required, 1) / align) * align;
    if (limit > 0 && size > limit) throw new OutOfRangeError(`aligned size ${size} exceeds limit_bytes ${limit}`);
    if (size > this.#free)
      throw new ResourceExhaustedError(`not enough space for ${size} bytes: largest volume is ${this.#free} bytes`);
    this.#free -= size;
    return size;
  }

  #list(req: csi.ListVolumesRequest__Output): csi.ListVolumesResponse {
    const all = [...this.volumes.values()].sort((a, b) => (a.volumeId < b.volumeId ? -1 : 1));
    const start = req.starting_token === '' ? 0 : Number(req.starting_token);
    if (!Number.isInteger(start) || start < 0 || start > all.length)
      throw new AbortedError(`invalid starting_token ${JSON.stringify(req.starting_token)}`);
    const end = req.max_entries > 0 ? Math.min(all.length, start + req.max_entries) : all.length;
    return {
      entries: all.slice(start, end).map((v) => ({ volume: this.#toCsi(v) })),
      next_token: end < all.length ? String(end) : '',
    };
  }
}
