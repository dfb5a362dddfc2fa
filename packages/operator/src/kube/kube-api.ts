// KubeApi on @kubernetes/client-node 1.4 (through kube-client.ts, the one import of the client):
// KubernetesObjectApi for get/list/server-side apply/merge patch/delete of any kind, CustomObjectsApi for the
// status subresource of PmemCSIDeployment, Watch for watches (bookmarks on, server-side timeout so
// the apiserver itself rotates long watches), CoreV1Api for Events, CoordinationV1Api for the
// leader-election Lease. Objects are returned as plain JSON (the client's model classes and Date
// fields never leak), errors as KubeApiError with the HTTP status.
import type { CoreV1Event, V1Lease } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, FIELD_MANAGER, PLURAL, type PmemCSIDeploymentStatus } from '@pmem-csi/api';
import { KubeApiError } from './kube-errors.js';
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
  WatchEventType,
  WatchHandle,
  WatchOptions,
} from './kube-port.js';
import { k8s } from './kube-client.js';

/** Status fields the operator writes; absent ones are sent as null so a merge patch removes them. */
const STATUS_FIELDS: readonly (keyof PmemCSIDeploymentStatus)[] = [
  'phase',
  'reason',
  'conditions',
  'driverComponents',
  'observedGeneration',
  'lastUpdated',
];
const WATCH_EVENT_TYPES: readonly string[] = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK'];
/** The apiserver ends a watch after this long (plus jitter); the informer then relists. */
const WATCH_TIMEOUT_SECONDS = 300;
/**
 * How long a watch may go without data before the client ends it. @kubernetes/client-node 2.x ends
 * a watch after 30 s without data ("The operation was aborted due to timeout"), but an idle watch
 * gets only a bookmark about once a minute: every watch of a quiet cluster restarted (and relisted)
 * every 30 s (e2e/src/cluster/operator-conflicts.test.ts counted 4 lists in 15 s at steady state).
 * The informer's own stall check (3 min, kube/informer.ts INFORMER_DEFAULTS.stallTimeoutMs) decides
 * instead, so the client's limit lies beyond it.
 */
export const WATCH_CLIENT_INACTIVITY_MS = 4 * 60 * 1000;

/** Set the client's watch inactivity limit (a field its typings keep private); refuses a client without it. */
function setWatchInactivity(watch: k8s.Watch, ms: number): void {
  const fields = watch as unknown as { requestTimeoutMs?: unknown };
  if (typeof fields.requestTimeoutMs !== 'number')
    throw new Error(
      "@kubernetes/client-node's Watch has no requestTimeoutMs: the watch inactivity limit cannot be set (check the client's version)",
    );
  fields.requestTimeoutMs = ms;
}

export interface ClientKubeApiOptions {
  /** Watch inactivity limit (default WATCH_CLIENT_INACTIVITY_MS). */
  readonly watchInactivityMs?: number;
}

/** JSON round trip: model classes become plain objects, Dates RFC 3339 strings. */
function plain<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** A KubeApiError from whatever the client threw (ApiException, fetch errors, watch errors). */
export function toKubeError(e: unknown): KubeApiError {
  if (e instanceof KubeApiError) return e;
  const err = e as { code?: unknown; statusCode?: unknown; body?: unknown; message?: unknown } | null;
  const status = typeof err?.code === 'number' ? err.code : typeof err?.statusCode === 'number' ? err.statusCode : 0;
  const bodyMessage = statusMessage(err?.body);
  const message = bodyMessage ?? (e instanceof Error ? withCause(e) : String(e));
  return new KubeApiError(status, message ?? 'unknown error');
}

/**
 * An error's first line with its causes' (fetch reports "fetch failed" or "terminated" and puts what
 * happened, e.g. "connect ECONNREFUSED 10.0.0.1:6443" or "other side closed", in `cause`).
 */
function withCause(e: Error): string {
  const parts: string[] = [];
  let current: unknown = e;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const line = current.message.split('\n')[0] ?? '';
    if (line !== '' && !parts.includes(line)) parts.push(line);
    current = current.cause;
  }
  return parts.join(': ');
}

/** The message of a Status body, parsed or still JSON text (the client gives either). */
function statusMessage(body: unknown): string | undefined {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const message = (parsed as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : undefined;
}

async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (e) {
    throw toKubeError(e);
  }
}

async function orUndefined<T>(request: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call(request);
  } catch (e) {
    if (e instanceof KubeApiError && e.status === 404) return undefined;
    throw e;
  }
}

/** URL path of a resource collection (for watches). */
export function collectionPath(type: ResourceType, namespace: string | undefined): string {
  const base = type.apiVersion.includes('/') ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`;
  return namespace === undefined || !type.namespaced
    ? `${base}/${type.plural}`
    : `${base}/namespaces/${encodeURIComponent(namespace)}/${type.plural}`;
}

/** The merge patch that makes the status exactly `status`. */
export function statusPatch(status: PmemCSIDeploymentStatus): { status: Record<string, unknown> } {
  const body: Record<string, unknown> = {};
  for (const field of STATUS_FIELDS) body[field] = status[field] ?? null;
  return { status: body };
}

/** `value` without its undefined fields (the port's optional fields are absent, never undefined). */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function toLeaseRecord(lease: V1Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  const date = (d: Date | string | undefined): Date | undefined => (d === undefined ? undefined : new Date(d));
  return compact<LeaseRecord>({
    name: lease.metadata?.name ?? '',
    namespace: lease.metadata?.namespace ?? '',
    holderIdentity: spec.holderIdentity,
    leaseDurationSeconds: spec.leaseDurationSeconds,
    acquireTime: date(spec.acquireTime),
    renewTime: date(spec.renewTime),
    leaseTransitions: spec.leaseTransitions,
    resourceVersion: lease.metadata?.resourceVersion,
  });
}

function toV1Lease(record: LeaseRecord): V1Lease {
  // MicroTime must be sent with six fractional digits; V1MicroTime serialises so.
  const micro = (d: Date | undefined): k8s.V1MicroTime | undefined =>
    d === undefined ? undefined : new k8s.V1MicroTime(d.getTime());
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: compact({ name: record.name, namespace: record.namespace, resourceVersion: record.resourceVersion }),
    spec: compact({
      holderIdentity: record.holderIdentity,
      leaseDurationSeconds: record.leaseDurationSeconds,
      acquireTime: micro(record.acquireTime),
      renewTime: micro(record.renewTime),
      leaseTransitions: record.leaseTransitions,
    }),
  };
}

export class ClientKubeApi implements KubeApi {
  readonly #objects: k8s.KubernetesObjectApi;
  readonly #custom: k8s.CustomObjectsApi;
  readonly #core: k8s.CoreV1Api;
  readonly #coordination: k8s.CoordinationV1Api;
  readonly #watch: k8s.Watch;

  constructor(kubeConfig: k8s.KubeConfig, options: ClientKubeApiOptions = {}) {
    this.#objects = k8s.KubernetesObjectApi.makeApiClient(kubeConfig);
    this.#custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    this.#core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.#coordination = kubeConfig.makeApiClient(k8s.CoordinationV1Api);
    this.#watch = new k8s.Watch(kubeConfig);
    setWatchInactivity(this.#watch, options.watchInactivityMs ?? WATCH_CLIENT_INACTIVITY_MS);
  }

  async get<T = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    const header = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { name: ref.name, ...(ref.namespace === undefined ? {} : { namespace: ref.namespace }) },
    };
    const found = await orUndefined(() => this.#objects.read(header));
    return found === undefined ? undefined : plain<T>(found);
  }

  async list<T extends KubeObject = KubeObject>(type: ResourceType, options: ListOptions = {}): Promise<ListResult<T>> {
    const list = await call(() =>
      this.#objects.list(
        type.apiVersion,
        type.kind,
        options.namespace,
        undefined,
        undefined,
        undefined,
        undefined,
        options.labelSelector,
      ),
    );
    // List items carry no apiVersion/kind; the rest of the operator relies on them.
    const items = list.items.map((item) => ({ ...plain<T>(item), apiVersion: type.apiVersion, kind: type.kind }));
    return { items, resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  async apply<T extends KubeObject>(object: T): Promise<T> {
    const result = await call(() =>
      this.#objects.patch(object, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply),
    );
    return plain<T>(result);
  }

  async mergePatch<T extends KubeObject>(patch: LooseObject): Promise<T> {
    const result = await call(() =>
      this.#objects.patch(patch, undefined, undefined, FIELD_MANAGER, undefined, k8s.PatchStrategy.MergePatch),
    );
    return plain<T>(result);
  }

  async delete(ref: ObjectRef, options: DeleteOptions = {}): Promise<boolean> {
    const spec = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { name: ref.name, ...(ref.namespace === undefined ? {} : { namespace: ref.namespace }) },
    };
    const status = await orUndefined(() =>
      this.#objects.delete(spec, undefined, undefined, undefined, undefined, options.propagation ?? 'Background'),
    );
    return status !== undefined;
  }

  async patchDeploymentStatus(name: string, status: PmemCSIDeploymentStatus): Promise<void> {
    const options = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    await call(() =>
      this.#custom.patchClusterCustomObjectStatus(
        { group: API_GROUP, version: API_VERSION, plural: PLURAL, name, body: statusPatch(status) },
        options,
      ),
    );
  }

  async watch(type: ResourceType, options: WatchOptions, onEvent: (event: WatchEvent) => void): Promise<WatchHandle> {
    let finish: (error?: KubeApiError) => void = () => undefined;
    // The client reports our own abort as an error ("The user aborted a request.", no status):
    // after stop() the watch ended as asked, which is no failure of the API.
    let stopped = false;
    const done = new Promise<void>((resolve, reject) => {
      finish = (error) => (error === undefined ? resolve() : reject(error));
    });
    const query = {
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: WATCH_TIMEOUT_SECONDS + Math.floor(Math.random() * 60),
      ...(options.labelSelector === undefined ? {} : { labelSelector: options.labelSelector }),
    };
    const controller = await this.#watch.watch(
      collectionPath(type, options.namespace),
      query,
      (phase: string, object: unknown) => {
        if (phase === 'ERROR') {
          // A Status object, e.g. 410 Gone: the resourceVersion is too old, relist.
          const s = object as { code?: number; message?: string };
          finish(new KubeApiError(s.code ?? 500, s.message ?? 'watch error'));
        } else if (WATCH_EVENT_TYPES.includes(phase)) {
          const o = object as KubeObject;
          onEvent({
            type: phase as WatchEventType,
            object: { ...o, apiVersion: o.apiVersion ?? type.apiVersion, kind: o.kind ?? type.kind },
          });
        }
      },
      (err: unknown) => finish(stopped || err === null || err === undefined ? undefined : toKubeError(err)),
    );
    return {
      stop: () => {
        stopped = true;
        controller.abort();
      },
      done,
    };
  }

  async createEvent(event: CoreV1Event): Promise<void> {
    await call(() =>
      this.#core.createNamespacedEvent({ namespace: event.metadata?.namespace ?? 'default', body: event }),
    );
  }

  async getLease(namespace: string, name: string): Promise<LeaseRecord | undefined> {
    const lease = await orUndefined(() => this.#coordination.readNamespacedLease({ name, namespace }));
    return lease === undefined ? undefined : toLeaseRecord(lease);
  }

  async createLease(lease: LeaseRecord): Promise<LeaseRecord> {
    return toLeaseRecord(
      await call(() =>
        this.#coordination.createNamespacedLease({ namespace: lease.namespace, body: toV1Lease(lease) }),
      ),
    );
  }

  async updateLease(lease: LeaseRecord): Promise<LeaseRecord> {
    return toLeaseRecord(
      await call(() =>
        this.#coordination.replaceNamespacedLease({
          name: lease.name,
          namespace: lease.namespace,
          body: toV1Lease(lease),
        }),
      ),
    );
  }
}
