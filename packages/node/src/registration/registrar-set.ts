// Registration with every controller replica (issue 17). The configured registry endpoints are
// resolved to all their addresses (a headless Service: one per controller pod; resolver.ts), and
// one Registrar runs per address, so every replica holds the whole node registry and volume index
// and a standby can take over at once when external-provisioner's leader election moves. The
// addresses are resolved again every `resolveIntervalMs` (with jitter, so a big cluster does not
// ask DNS in step) and soon after a registrar's first failure (a replica that went away, or a
// new pod behind the name): registrars of new addresses start, those of vanished addresses stop
// (and unregister, which fails harmlessly when the pod is gone). A name that cannot be resolved
// keeps the registrars it had: a DNS hiccup must not make the node unregister from live replicas.
// TLS is unchanged: the address is dialled, but the configured host name stays the TLS target
// name and the :authority (the certificate check itself is on the registry SAN, channel-credentials).
// pushInventory() goes to every replica: a create or delete made through one is known to all.
import type * as grpc from '@grpc/grpc-js';
import { setTimeout as sleep } from 'node:timers/promises';
import { isIP } from 'node:net';
import type { Logger } from '@pmem-csi/runtime';
import { DeadlineExceededError, errorMessage } from '@pmem-csi/csi';
import type { RegistryFailure } from './classify.js';
import { Registrar, type RegistrarOptions, type RegistrarStatus } from './registrar.js';
import { resolveEndpoint, systemResolver, type RegistryResolver, type RegistryTarget } from './resolver.js';

export interface RegistrarSetOptions extends Omit<RegistrarOptions, 'registryAddress' | 'onFailure'> {
  /** host:port of the controller's registry, one or more; each host is resolved to all its addresses. */
  readonly registryEndpoints: readonly string[];
  /** Default: the system resolver (getaddrinfo). */
  readonly resolver?: RegistryResolver;
  /** Resolve again this often (default 20 s, ±20 % jitter). */
  readonly resolveIntervalMs?: number;
  /** At least this long between two resolutions triggered by failures (default 1 s). */
  readonly minResolveIntervalMs?: number;
}

/** One controller replica: where it came from, and its registrar's status. */
export interface ReplicaStatus extends RegistrarStatus {
  /** The configured endpoint (host:port) that resolved to it. */
  readonly endpoint: string;
  /** The address dialled. */
  readonly address: string;
}

export interface RegistrarSetStatus {
  /** Registered with at least one controller replica. */
  readonly registered: boolean;
  /** Replicas this node is registered with now, of `replicas` (addresses resolved). */
  readonly registeredReplicas: number;
  readonly replicas: number;
  /** Successful registrations so far over all replicas, past ones included (re-registrations too). */
  readonly registrations: number;
  /** Accepted renewals that carried the volume inventory, over all replicas. */
  readonly inventoryPushes: number;
  /** The last failure of a replica that is not registered now (the first such by address). */
  readonly lastFailure?: RegistryFailure;
  /** Per replica, by address. */
  readonly replicaStatus: readonly ReplicaStatus[];
  /** Endpoints whose last resolution failed, with the error (their old replicas are kept). */
  readonly resolveErrors?: Readonly<Record<string, string>>;
}

export const DEFAULT_RESOLVE_INTERVAL_MS = 20_000;
export const DEFAULT_MIN_RESOLVE_INTERVAL_MS = 1000;

interface Member {
  readonly target: RegistryTarget;
  readonly registrar: Registrar;
}

/** The TLS target name and :authority of the configured host, when an address of it is dialled. */
function targetNameOptions(target: RegistryTarget): grpc.ChannelOptions {
  if (isIP(target.host) !== 0) return {};
  return { 'grpc.ssl_target_name_override': target.host, 'grpc.default_authority': target.endpoint };
}

export class RegistrarSet {
  readonly #o: RegistrarSetOptions;
  readonly #log: Logger;
  readonly #resolver: RegistryResolver;
  readonly #abort = new AbortController();
  readonly #members = new Map<string, Member>();
  readonly #stopping = new Set<Promise<void>>();
  readonly #resolveErrors = new Map<string, string>();
  readonly #retired = { registrations: 0, inventoryPushes: 0 };
  #loop: Promise<void> | undefined;
  #wake: AbortController | undefined;
  #wakeRequested = false;
  #lastResolveAt = 0;
  #resolutions = 0;
  #resolving = false;

  constructor(options: RegistrarSetOptions) {
    if (options.registryEndpoints.length === 0)
      throw new TypeError('RegistrarSet: registryEndpoints must name at least one host:port');
    this.#o = options;
    this.#log = options.log.child({ component: 'registrar-set' });
    this.#resolver = options.resolver ?? systemResolver;
  }

  /** Resolve and start registering in the background. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /** The addresses registered with (or trying to), sorted. */
  get addresses(): string[] {
    return [...this.#members.keys()].sort();
  }

  get status(): RegistrarSetStatus {
    const replicaStatus = [...this.#members.values()]
      .map((m): ReplicaStatus => ({ endpoint: m.target.endpoint, address: m.target.address, ...m.registrar.status }))
      .sort((a, b) => (a.address < b.address ? -1 : 1));
    const registeredReplicas = replicaStatus.filter((r) => r.registered).length;
    const failing = replicaStatus.find((r) => !r.registered && r.lastFailure !== undefined);
    return {
      registered: registeredReplicas > 0,
      registeredReplicas,
      replicas: replicaStatus.length,
      registrations: replicaStatus.reduce((n, r) => n + r.registrations, this.#retired.registrations),
      inventoryPushes: replicaStatus.reduce((n, r) => n + r.inventoryPushes, this.#retired.inventoryPushes),
      ...(failing?.lastFailure ? { lastFailure: failing.lastFailure } : {}),
      replicaStatus,
      ...(this.#resolveErrors.size > 0 ? { resolveErrors: Object.fromEntries(this.#resolveErrors) } : {}),
    };
  }

  /** The node's volumes changed: every replica gets the inventory now (Registrar.pushInventory). */
  pushInventory(): void {
    for (const m of this.#members.values()) m.registrar.pushInventory();
  }

  /** Resolve again now (tests, diagnostics); resolves when a resolution that started after the call is done. */
  async refresh(timeoutMs = 10_000): Promise<void> {
    const want = this.#resolutions + (this.#resolving ? 2 : 1);
    this.#requestResolve(true);
    await this.#until(
      () => this.#resolutions >= want,
      timeoutMs,
      () => `a resolution of the registry endpoints`,
    );
  }

  /** Resolves once registered with every resolved replica (at least one), each at least `count` times. */
  async waitForRegistrations(count = 1, timeoutMs = 30_000): Promise<void> {
    const done = (): boolean =>
      this.#members.size > 0 && [...this.#members.values()].every((m) => m.registrar.status.registrations >= count);
    await this.#until(done, timeoutMs, () => {
      const s = this.status;
      const replicas = s.replicaStatus.map(
        (r) => `${r.address}: ${r.registrations} registrations, last failure ${r.lastFailure?.detail ?? 'none'}`,
      );
      return `registrations with every controller replica (${count} each); ${s.replicas} resolved${replicas.length > 0 ? `: ${replicas.join('; ')}` : ''}${s.resolveErrors ? `; resolution errors: ${JSON.stringify(s.resolveErrors)}` : ''}`;
    });
  }

  /** Stop resolving, and stop (unregister) every registrar. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error('registrar set stopping'));
    await this.#loop;
    const members = [...this.#members.values()];
    this.#members.clear();
    await Promise.all([...members.map((m) => m.registrar.stop()), ...this.#stopping]);
  }

  async #until(done: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new DeadlineExceededError(`not done within ${timeoutMs} ms: ${what()}`);
      await sleep(20);
    }
  }

  async #run(): Promise<void> {
    while (!this.#abort.signal.aborted) {
      this.#resolving = true;
      this.#lastResolveAt = Date.now();
      this.#wakeRequested = false;
      try {
        await this.#resolveOnce();
      } catch (e) {
        this.#log.error('updating the controller replicas failed', { error: errorMessage(e) });
      } finally {
        this.#resolving = false;
        this.#resolutions++;
      }
      await this.#waitForNextResolve();
    }
  }

  /** Ask for a resolution soon (at most one per minResolveIntervalMs unless `now`). */
  #requestResolve(now = false): void {
    if (now) this.#lastResolveAt = 0;
    this.#wakeRequested = true;
    this.#wake?.abort();
  }

  #nextResolveDelay(periodicAt: number): number {
    const now = Date.now();
    if (this.#wakeRequested)
      return Math.max(0, this.#lastResolveAt + (this.#o.minResolveIntervalMs ?? DEFAULT_MIN_RESOLVE_INTERVAL_MS) - now);
    return Math.max(0, periodicAt - now);
  }

  async #waitForNextResolve(): Promise<void> {
    const interval = this.#o.resolveIntervalMs ?? DEFAULT_RESOLVE_INTERVAL_MS;
    const periodicAt = Date.now() + interval * (0.8 + 0.4 * (this.#o.random ?? Math.random)());
    for (let delay = this.#nextResolveDelay(periodicAt); delay > 0; delay = this.#nextResolveDelay(periodicAt)) {
      if (this.#abort.signal.aborted) return;
      const wake = new AbortController();
      this.#wake = wake;
      await sleep(delay, undefined, { signal: AbortSignal.any([this.#abort.signal, wake.signal]) }).catch(
        () => undefined,
      );
      this.#wake = undefined;
    }
  }

  /** Resolve every endpoint; start registrars for new addresses, stop those of vanished ones. */
  async #resolveOnce(): Promise<void> {
    const found = new Map<string, RegistryTarget>();
    const unresolved = new Set<string>();
    for (const endpoint of this.#o.registryEndpoints) {
      try {
        for (const t of await resolveEndpoint(endpoint, this.#resolver))
          if (!found.has(t.address)) found.set(t.address, t);
        this.#resolveErrors.delete(endpoint);
      } catch (e) {
        unresolved.add(endpoint);
        const error = errorMessage(e);
        if (this.#resolveErrors.get(endpoint) !== error)
          this.#log.warn('cannot resolve the registry endpoint; keeping the controller replicas it had', {
            endpoint,
            error,
          });
        this.#resolveErrors.set(endpoint, error);
      }
    }
    if (this.#abort.signal.aborted) return;
    const removed = [...this.#members.values()].filter(
      (m) => !found.has(m.target.address) && !unresolved.has(m.target.endpoint),
    );
    const added = [...found.values()].filter((t) => !this.#members.has(t.address));
    for (const m of removed) this.#retire(m);
    for (const t of added) this.#add(t);
    if (added.length > 0 || removed.length > 0)
      this.#log.info('controller replicas changed', {
        added: added.map((t) => t.address),
        removed: removed.map((m) => m.target.address),
        replicas: this.addresses,
      });
  }

  #add(target: RegistryTarget): void {
    const registrar = new Registrar({
      ...this.#o,
      registryAddress: target.address,
      channelOptions: { ...this.#o.channelOptions, ...targetNameOptions(target) },
      // The first failure after a success: the replica may have gone, or moved; look again soon.
      onFailure: (_failure, inARow) => {
        if (inARow === 1) this.#requestResolve();
      },
    });
    this.#members.set(target.address, { target, registrar });
    registrar.start();
  }

  #retire(member: Member): void {
    this.#members.delete(member.target.address);
    const s = member.registrar.status; // stopping neither registers nor pushes again
    this.#retired.registrations += s.registrations;
    this.#retired.inventoryPushes += s.inventoryPushes;
    const stopping = member.registrar.stop().finally(() => this.#stopping.delete(stopping));
    this.#stopping.add(stopping);
  }
}
