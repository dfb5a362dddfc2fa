// The node's side of the controller registry: register this node's node-controller endpoint (with
// capacity, device mode and version), renew the lease at a third of its length with fresh
// capacity, and register again whenever something goes wrong — NOT_FOUND on renewal (the
// controller restarted and lost us) right away, anything else after an exponential backoff with
// jitter. Every call has a deadline; every failure is logged with its class and a hint, so a stuck
// registration explains itself. Connection-level failures rebuild the channel, so a channel stuck
// in TRANSIENT_FAILURE can never keep the node unregistered. stop() unregisters.
// Each registration can carry the node's volume inventory (registry.proto): the controller then
// need not dial back to list the volumes, which is what makes thousands of nodes registering at
// once (a controller restart) settle fast. Without it the controller lists them, as before.
// pushInventory() renews at once with the inventory (registry.proto RenewControllerRequest.
// inventory): the node calls it after every create and delete, so that every controller replica
// (one registrar each, registrar-set.ts) knows the node's volumes within moments, not only the
// replica that made the change. Pushes are coalesced (one renewal carries the latest state) and
// sent in order on the one loop, so an older inventory never overtakes a newer one.
// The controller may hold the lease by this node's connection and then grant a long one
// (packages/controller/src/registry/lease-policy.ts); so when the channel's connection is lost (a
// controller restart closes every connection) the registrar renews at once instead of waiting for
// its renewal time: a restarted controller hears from every node within its settle period.
import * as grpc from '@grpc/grpc-js';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadRegistry, unary, type Logger, type RegistryClient } from '@pmem-csi/runtime';
import { type Capacity, DeadlineExceededError, errorMessage, type registry } from '@pmem-csi/csi';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { classifyRegistryError, needsNewChannel, type RegistryFailure } from './classify.js';

export interface RegistrarOptions {
  /** host:port of the controller's registry service. */
  readonly registryAddress: string;
  /** mTLS in production; insecure in tests. */
  readonly credentials: grpc.ChannelCredentials;
  readonly channelOptions?: grpc.ChannelOptions;
  readonly nodeId: string;
  /** host:port under which the controller reaches this node's node-controller service. */
  readonly endpoint: string;
  readonly deviceMode: string;
  readonly version: string;
  /** Current capacity, sent with every registration and renewal. */
  readonly capacity: (signal: AbortSignal) => Promise<Capacity>;
  /**
   * The node's volumes as its node-controller ListVolumes reports them, read right before every
   * registration and sent along (above MAX_INVENTORY_VOLUMES only their number). Omitted, or
   * failing: the registration goes without, and the controller lists the volumes itself.
   */
  readonly volumes?: (signal: AbortSignal) => Promise<readonly registry.InventoryVolume[]>;
  readonly log: Logger;
  /** Deadline of each registry call (default 10 s). */
  readonly callTimeoutMs?: number;
  readonly backoff?: BackoffPolicy;
  readonly random?: () => number;
  /** Lease assumed when the controller sends none (default 30 s). */
  readonly defaultLeaseSeconds?: number;
  /** Told about every failed call, with the number of failures in a row (1 = the first since a success). */
  readonly onFailure?: (failure: RegistryFailure, inARow: number) => void;
}

export interface RegistrarStatus {
  readonly registered: boolean;
  readonly registrationId?: string;
  /** Successful registrations so far (re-registrations included). */
  readonly registrations: number;
  /** Renewals that carried the inventory (pushInventory) and were accepted. */
  readonly inventoryPushes: number;
  /** Times the channel lost its connection while registered, which made the next renewal go at once. */
  readonly connectionLosses: number;
  readonly lastFailure?: RegistryFailure;
}

interface Registration {
  readonly id: string;
  leaseMs: number;
}

// Reconnect quickly after a controller restart instead of grpc-js's default (up to 120 s).
const CHANNEL_DEFAULTS: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 500,
  'grpc.max_reconnect_backoff_ms': 5000,
};
const UNREGISTER_TIMEOUT_MS = 3000;
/** Volumes sent in one registration (~200 bytes each); with more, only the count goes and the controller lists. */
export const MAX_INVENTORY_VOLUMES = 1000;

function toWire(c: Capacity): registry.Capacity {
  return {
    max_volume_size: String(c.maxVolumeSize),
    available: String(c.available),
    managed: String(c.managed),
    total: String(c.total),
  };
}

function leaseMs(seconds: string | number | undefined, fallbackSeconds: number): number {
  const n = Number(seconds ?? 0);
  return (Number.isFinite(n) && n > 0 ? n : fallbackSeconds) * 1000;
}

export class Registrar {
  readonly #o: RegistrarOptions;
  readonly #log: Logger;
  readonly #abort = new AbortController();
  #client: RegistryClient | undefined;
  #registration: Registration | undefined;
  #registrations = 0;
  #lastFailure: RegistryFailure | undefined;
  #failuresInARow = 0;
  #loop: Promise<void> | undefined;
  /** A push is wanted: the next renewal goes now and carries the inventory. */
  #pushPending = false;
  #pushes = 0;
  /** Ends the wait for the next renewal early (pushInventory, a lost connection). */
  #wake: AbortController | undefined;
  /** The channel lost its connection while registered: renew now. */
  #renewNow = false;
  /** Connection losses that woke a renewal. */
  #connectionLosses = 0;

  constructor(options: RegistrarOptions) {
    this.#o = options;
    this.#log = options.log.child({ component: 'registrar', registry: options.registryAddress });
  }

  /** Start registering in the background. */
  start(): void {
    this.#loop ??= this.#run();
  }

  get status(): RegistrarStatus {
    return {
      registered: this.#registration !== undefined,
      ...(this.#registration ? { registrationId: this.#registration.id } : {}),
      registrations: this.#registrations,
      inventoryPushes: this.#pushes,
      connectionLosses: this.#connectionLosses,
      ...(this.#lastFailure ? { lastFailure: this.#lastFailure } : {}),
    };
  }

  /**
   * The node's volumes changed: renew now with the inventory (coalesced with other pushes). Not
   * registered: nothing extra, the next registration carries the inventory anyway.
   */
  pushInventory(): void {
    if (this.#o.volumes === undefined) return;
    this.#pushPending = true;
    this.#wake?.abort();
  }

  /** Resolves once registered at least `count` times in total (default 1). */
  async waitForRegistrations(count = 1, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.#registrations < count) {
      if (Date.now() > deadline)
        throw new DeadlineExceededError(
          `not registered ${count} time(s) within ${timeoutMs} ms; last failure: ${this.#lastFailure?.detail ?? 'none'}`,
        );
      await sleep(20);
    }
  }

  /** Stop renewing and unregister (best effort, with a deadline). */
  async stop(): Promise<void> {
    this.#abort.abort(new Error('registrar stopping'));
    await this.#loop;
    const reg = this.#registration;
    this.#registration = undefined;
    if (reg !== undefined && this.#client !== undefined) {
      const client = this.#client;
      try {
        await unary(
          client,
          client.UnregisterController,
          { node_id: this.#o.nodeId, registration_id: reg.id },
          { timeoutMs: UNREGISTER_TIMEOUT_MS },
        );
        this.#log.info('unregistered from the controller', { node: this.#o.nodeId });
      } catch (e) {
        const f = classifyRegistryError(e);
        this.#log.warn('could not unregister; the lease will expire on its own', {
          reason: f.reason,
          code: f.code,
          error: f.detail,
        });
      }
    }
    this.#client?.close();
    this.#client = undefined;
  }

  async #run(): Promise<void> {
    let failures = 0;
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        if (this.#registration === undefined) await this.#register(failures);
        else await this.#renewAfterWait(this.#registration);
        failures = 0;
        this.#failuresInARow = 0;
      } catch (e) {
        if (signal.aborted) return;
        const retryNow = this.#failed(e, failures);
        this.#o.onFailure?.(this.#lastFailure as RegistryFailure, ++this.#failuresInARow);
        if (retryNow) continue;
        const delay = backoffDelay(failures++, this.#o.backoff ?? DEFAULT_BACKOFF, this.#o.random);
        this.#log.warn(
          'registration with the controller failed; retrying',
          this.#failureFields({ attempt: failures, retryInMs: delay }),
        );
        await sleep(delay, undefined, { signal }).catch(() => undefined);
      }
    }
  }

  /** Record a failure; true when the next attempt should follow at once (renewal NOT_FOUND). */
  #failed(e: unknown, failures: number): boolean {
    const failure = classifyRegistryError(e);
    this.#lastFailure = failure;
    const wasRenewal = this.#registration !== undefined;
    this.#registration = undefined;
    if (needsNewChannel(failure)) this.#resetClient();
    if (wasRenewal && failure.reason === 'not-found' && failures === 0) {
      this.#log.info('the controller no longer knows this node (restarted?); registering again', {
        node: this.#o.nodeId,
      });
      return true;
    }
    return false;
  }

  #failureFields(extra: Record<string, unknown>): Record<string, unknown> {
    const f = this.#lastFailure;
    return { node: this.#o.nodeId, reason: f?.reason, code: f?.code, error: f?.detail, hint: f?.hint, ...extra };
  }

  #clientNow(): RegistryClient {
    if (this.#client === undefined) {
      const Registry = loadRegistry().pmemcsi.registry.v1.Registry;
      this.#client = new Registry(this.#o.registryAddress, this.#o.credentials, {
        ...CHANNEL_DEFAULTS,
        ...this.#o.channelOptions,
      });
      this.#watchConnection(this.#client.getChannel());
    }
    return this.#client;
  }

  /** Renew at once whenever the channel leaves READY while registered (see the header). Ends with the channel. */
  #watchConnection(channel: ReturnType<grpc.Client['getChannel']>): void {
    const { READY, SHUTDOWN } = grpc.connectivityState;
    const watch = (state: grpc.connectivityState): void => {
      channel.watchConnectivityState(state, Infinity, () => {
        const next = channel.getConnectivityState(false);
        if (next === SHUTDOWN) return;
        if (state === READY && next !== READY && this.#registration !== undefined && !this.#abort.signal.aborted) {
          this.#connectionLosses++;
          this.#renewNow = true;
          this.#wake?.abort();
        }
        watch(next);
      });
    };
    watch(channel.getConnectivityState(false));
  }

  #resetClient(): void {
    this.#client?.close();
    this.#client = undefined;
  }

  #callOptions(): { timeoutMs: number; signal: AbortSignal } {
    return { timeoutMs: this.#o.callTimeoutMs ?? 10_000, signal: this.#abort.signal };
  }

  /** The inventory to send, or null (the controller lists the volumes itself). */
  async #inventory(): Promise<registry.VolumeInventory | null> {
    if (this.#o.volumes === undefined) return null;
    try {
      const volumes = await this.#o.volumes(this.#abort.signal);
      return { count: String(volumes.length), volumes: volumes.length <= MAX_INVENTORY_VOLUMES ? [...volumes] : [] };
    } catch (e) {
      this.#log.warn('could not read the volumes for the registration; the controller will list them', {
        node: this.#o.nodeId,
        error: errorMessage(e),
      });
      return null;
    }
  }

  async #register(failures: number): Promise<void> {
    const capacity = toWire(await this.#o.capacity(this.#abort.signal));
    this.#pushPending = false; // the inventory read next includes every change pushed so far
    const inventory = await this.#inventory();
    const client = this.#clientNow();
    const req: registry.RegisterControllerRequest = {
      node_id: this.#o.nodeId,
      endpoint: this.#o.endpoint,
      capacity,
      device_mode: this.#o.deviceMode,
      version: this.#o.version,
      inventory,
    };
    const reply = await unary<registry.RegisterControllerRequest, registry.RegisterControllerReply__Output>(
      client,
      client.RegisterController,
      req,
      this.#callOptions(),
    );
    this.#registration = {
      id: reply.registration_id,
      leaseMs: leaseMs(reply.lease_seconds, this.#o.defaultLeaseSeconds ?? 30),
    };
    this.#registrations++;
    this.#log.info('registered with the controller', {
      node: this.#o.nodeId,
      endpoint: this.#o.endpoint,
      registrationId: reply.registration_id,
      leaseMs: this.#registration.leaseMs,
      failedAttempts: failures,
      volumesSent: inventory === null ? undefined : inventory.count,
    });
  }

  /** Wait a third of the lease, or less when a push comes. */
  async #waitForRenewal(reg: Registration): Promise<void> {
    if (this.#pushPending || this.#renewNow) {
      this.#renewNow = false;
      return;
    }
    const wake = new AbortController();
    this.#wake = wake;
    try {
      await sleep(Math.max(100, Math.floor(reg.leaseMs / 3)), undefined, {
        signal: AbortSignal.any([this.#abort.signal, wake.signal]),
      });
    } catch (e) {
      if (!wake.signal.aborted) throw e; // stopping
    } finally {
      this.#wake = undefined;
    }
    this.#renewNow = false;
  }

  async #renewAfterWait(reg: Registration): Promise<void> {
    await this.#waitForRenewal(reg);
    const capacity = toWire(await this.#o.capacity(this.#abort.signal));
    const push = this.#pushPending;
    this.#pushPending = false; // a push during this renewal makes another one
    const inventory = push ? await this.#inventory() : null;
    const client = this.#clientNow();
    const req: registry.RenewControllerRequest = {
      node_id: this.#o.nodeId,
      registration_id: reg.id,
      capacity,
      ...(inventory === null ? {} : { inventory }),
    };
    let reply: registry.RenewControllerReply__Output;
    try {
      reply = await unary<registry.RenewControllerRequest, registry.RenewControllerReply__Output>(
        client,
        client.RenewController,
        req,
        this.#callOptions(),
      );
    } catch (e) {
      if (push) this.#pushPending = true; // not delivered: the registration that follows carries it
      throw e;
    }
    reg.leaseMs = leaseMs(reply.lease_seconds, this.#o.defaultLeaseSeconds ?? 30);
    if (inventory !== null) this.#pushes++;
    this.#log.debug(inventory === null ? 'registration renewed' : 'registration renewed with the volume inventory', {
      node: this.#o.nodeId,
      leaseMs: reg.leaseMs,
      ...(inventory === null ? {} : { volumesSent: inventory.count }),
    });
  }
}
