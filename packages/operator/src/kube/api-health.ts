// Whether the operator can still reach and act on the API, for /readyz. Every request the operator
// makes goes through MonitoredKubeApi, which reports its outcome here:
// - an access failure is a request that got no answer (connection refused or reset, DNS, TLS,
//   timeout: KubeApiError status 0) or was refused as 401 Unauthorized / 403 Forbidden — the
//   operator lost its network path, its credentials or its RBAC;
// - any other answer (2xx, and also 404, 409, 422, 5xx) shows that the apiserver is reachable and
//   accepts the operator's credentials, so it counts as a success.
// The operator is unhealthy while the current streak of access failures (no success in between)
// has at least `failures` requests and began at least `boundMs` ago: one failed request, or a short
// apiserver restart, does not take the operator out of its Service. The first success ends the
// streak, and the operator is ready again at once. Watches count twice: opening one, and how it
// ends. An end is a failure only when the watch broke: cut by a connection error (status 0) or an
// ERROR event 401/403. The apiserver ends every watch routinely — at its timeout (a clean close)
// or with 410 Gone when the resourceVersion expired — and the informer then relists: such an end
// counts as an answer (a success), and only the relist that follows, a request of its own, can
// fail. A watch the operator stopped itself (a stall, a due relist, shutting down) does not count
// at all: the client reports that abort as an error without status, which is no failure of the
// API (issue 32: every such restart had counted as an access failure).
// Restarts are counted apart, by reason, in pmem_csi_operator_watch_restarts_total (informer.ts).
// Limit: the streak is global, so RBAC lost for one kind while the others still answer keeps the
// operator ready; that shows as reconcile errors in the logs, metrics and the PmemCSIDeployment status.
import type { CoreV1Event } from '@kubernetes/client-node';
import type { PmemCSIDeploymentStatus } from '@pmem-csi/api';
import type { Clock } from '../clock.js';
import { KubeApiError, isExpired } from './kube-errors.js';
import type {
  DeleteOptions,
  KubeApi,
  KubeObject,
  LeaseRecord,
  ListOptions,
  ListResult,
  LooseObject,
  ObjectRef,
  ResourceType,
  WatchEvent,
  WatchHandle,
  WatchOptions,
} from './kube-port.js';

export interface ApiHealthOptions {
  readonly clock: Clock;
  /** Access failures in a row before the operator reports not ready. */
  readonly failures?: number;
  /** ...and for at least this long since the first of them. */
  readonly boundMs?: number;
  /** Told about every request and its error, if any (pmem_csi_operator_api_requests_total). */
  readonly onRequest?: (request: string, error?: unknown) => void;
}

export const API_HEALTH_DEFAULTS = { failures: 3, boundMs: 30 * 1000 } as const;

/** No answer (status 0) or refused as 401/403. */
export function isAccessFailure(e: unknown): boolean {
  return e instanceof KubeApiError && (e.status === 0 || e.status === 401 || e.status === 403);
}

interface Streak {
  readonly since: number;
  count: number;
  last: string;
}

function describeFailure(request: string, e: KubeApiError): string {
  const what = e.status === 0 ? 'no answer' : e.status === 401 ? '401 Unauthorized' : '403 Forbidden';
  return `${request}: ${what}: ${e.message}`;
}

export class ApiHealth {
  readonly #clock: Clock;
  readonly #failures: number;
  readonly #boundMs: number;
  #streak: Streak | undefined;
  #failuresTotal = 0;
  readonly #onRequest: ApiHealthOptions['onRequest'];

  constructor(options: ApiHealthOptions) {
    this.#onRequest = options.onRequest;
    this.#clock = options.clock;
    this.#failures = options.failures ?? API_HEALTH_DEFAULTS.failures;
    this.#boundMs = options.boundMs ?? API_HEALTH_DEFAULTS.boundMs;
  }

  /** Access failures since the start (for /metrics). */
  get failuresTotal(): number {
    return this.#failuresTotal;
  }

  /** Record the outcome of one request ("list DaemonSet", ...): undefined for success. */
  record(request: string, error?: unknown): void {
    this.#onRequest?.(request, error);
    if (error === undefined || !isAccessFailure(error)) {
      this.#streak = undefined;
      return;
    }
    this.#failuresTotal++;
    const last = describeFailure(request, error as KubeApiError);
    if (this.#streak === undefined) this.#streak = { since: this.#clock.now(), count: 1, last };
    else {
      this.#streak.count++;
      this.#streak.last = last;
    }
  }

  /** Why the operator cannot reach or act on the API now; undefined while it can. */
  problem(): string | undefined {
    const streak = this.#streak;
    if (streak === undefined || streak.count < this.#failures) return undefined;
    const forMs = this.#clock.now() - streak.since;
    if (forMs < this.#boundMs) return undefined;
    return `cannot reach or act on the Kubernetes API: the last ${streak.count} requests over ${Math.round(forMs / 1000)}s failed (last: ${streak.last})`;
  }
}

/** KubeApi that reports the outcome of every request to `health`. */
export class MonitoredKubeApi implements KubeApi {
  readonly #kube: KubeApi;
  readonly #health: ApiHealth;

  constructor(kube: KubeApi, health: ApiHealth) {
    this.#kube = kube;
    this.#health = health;
  }

  async #track<T>(request: string, call: () => Promise<T>): Promise<T> {
    try {
      const result = await call();
      this.#health.record(request);
      return result;
    } catch (e) {
      this.#health.record(request, e);
      throw e;
    }
  }

  get<T = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    return this.#track(`get ${ref.kind}`, () => this.#kube.get<T>(ref));
  }

  list<T extends KubeObject = KubeObject>(type: ResourceType, options?: ListOptions): Promise<ListResult<T>> {
    return this.#track(`list ${type.kind}`, () => this.#kube.list<T>(type, options));
  }

  apply<T extends KubeObject>(object: T): Promise<T> {
    return this.#track(`apply ${object.kind}`, () => this.#kube.apply(object));
  }

  mergePatch<T extends KubeObject>(patch: LooseObject): Promise<T> {
    return this.#track(`patch ${patch.kind}`, () => this.#kube.mergePatch<T>(patch));
  }

  delete(ref: ObjectRef, options?: DeleteOptions): Promise<boolean> {
    return this.#track(`delete ${ref.kind}`, () => this.#kube.delete(ref, options));
  }

  patchDeploymentStatus(name: string, status: PmemCSIDeploymentStatus): Promise<void> {
    return this.#track('patch PmemCSIDeployment status', () => this.#kube.patchDeploymentStatus(name, status));
  }

  async watch(type: ResourceType, options: WatchOptions, onEvent: (event: WatchEvent) => void): Promise<WatchHandle> {
    const request = `watch ${type.kind}`;
    const handle = await this.#track(request, () => this.#kube.watch(type, options, onEvent));
    let stopped = false;
    const done = handle.done.then(
      () => {
        if (!stopped) this.#health.record(request);
      },
      (e: unknown) => {
        // 410 Gone: the server answered that the watch must relist; its end is routine.
        if (!stopped) this.#health.record(request, isExpired(e) ? undefined : e);
        throw e;
      },
    );
    return {
      stop: () => {
        stopped = true;
        handle.stop();
      },
      done,
    };
  }

  createEvent(event: CoreV1Event): Promise<void> {
    return this.#track('create Event', () => this.#kube.createEvent(event));
  }

  getLease(namespace: string, name: string): Promise<LeaseRecord | undefined> {
    return this.#track('get Lease', () => this.#kube.getLease(namespace, name));
  }

  createLease(lease: LeaseRecord): Promise<LeaseRecord> {
    return this.#track('create Lease', () => this.#kube.createLease(lease));
  }

  updateLease(lease: LeaseRecord): Promise<LeaseRecord> {
    return this.#track('update Lease', () => this.#kube.updateLease(lease));
  }
}
