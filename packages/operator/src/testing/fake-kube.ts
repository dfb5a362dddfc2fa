// An in-memory apiserver behind the KubeApi port, for unit tests of the reconciler, informers and
// leader election. It keeps objects with uids, creation timestamps, resourceVersions and
// generations, answers server-side apply like the real one does for a sole field owner (desired
// fields replace ours, status and server metadata stay, an unchanged apply is a no-op without a
// new resourceVersion), defaults a Deployment's strategy like the real one (the defaulted
// rollingUpdate belongs to no field manager, so an apply leaves it and a Recreate strategy is
// then refused), keeps a Service's allocated clusterIP (immutable once set), answers JSON merge
// patches, keeps an event log so a watch started from a list's resourceVersion misses nothing, and
// lets tests inject failures, stall or break watches, play the workload controllers and the
// garbage collector.
import type { CoreV1Event } from '@kubernetes/client-node';
import type { PmemCSIDeploymentStatus } from '@pmem-csi/api';
import { canonicalJson } from '../objects/hash.js';
import { KubeApiError } from '../kube/kube-errors.js';
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
} from '../kube/kube-port.js';
import { RESOURCES, typeKey } from '../kube/resources.js';

type Method =
  | 'get'
  | 'list'
  | 'apply'
  | 'mergePatch'
  | 'delete'
  | 'patchDeploymentStatus'
  | 'watch'
  | 'createEvent'
  | 'getLease'
  | 'createLease'
  | 'updateLease';

interface LogEntry {
  readonly rv: number;
  readonly event: WatchEvent;
}

interface Watcher {
  readonly type: ResourceType;
  readonly options: WatchOptions;
  readonly onEvent: (e: WatchEvent) => void;
  stalled: boolean;
  stopped: boolean;
  end(error?: Error): void;
}

const keyOf = (o: { apiVersion: string; kind: string; namespace?: string | undefined; name: string }): string =>
  `${typeKey(o)}|${o.namespace ?? ''}|${o.name}`;
const clone = <T>(v: T): T => structuredClone(v);

function matchesSelector(object: KubeObject, selector: string | undefined): boolean {
  if (selector === undefined || selector === '') return true;
  const labels = object.metadata.labels ?? {};
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return k !== undefined && labels[k] === v;
  });
}

/** Everything except metadata and status: what bumps metadata.generation. */
function specPart(o: LooseObject): string {
  const { metadata: _m, status: _s, ...rest } = o;
  return canonicalJson(rest);
}

/** The immutable fields the apiserver enforces for the kinds the operator builds. */
function immutableViolation(existing: LooseObject, next: LooseObject): string | undefined {
  const at = (o: LooseObject, path: string[]): string =>
    canonicalJson(path.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], o) ?? null);
  const fields: Record<string, string[][]> = {
    Secret: [['type']],
    Deployment: [['spec', 'selector']],
    DaemonSet: [['spec', 'selector']],
    CSIDriver: [
      ['spec', 'attachRequired'],
      ['spec', 'volumeLifecycleModes'],
    ],
  };
  const changed = (fields[existing.kind] ?? []).find((path) => at(existing, path) !== at(next, path));
  if (changed !== undefined) return changed.join('.');
  // A Service keeps its allocated clusterIP when an apply omits it; setting another one is refused.
  const clusterIp = ['spec', 'clusterIP'];
  if (existing.kind === 'Service' && at(next, clusterIp) !== 'null' && at(existing, clusterIp) !== at(next, clusterIp))
    return clusterIp.join('.');
  return undefined;
}

/** A Deployment's strategy as the apiserver defaults it (RollingUpdate, 25 % / 25 %). */
function defaulted(o: LooseObject): LooseObject {
  if (o.kind !== 'Deployment') return o;
  const spec = (o['spec'] ?? {}) as Record<string, unknown>;
  const strategy = (spec['strategy'] ?? {}) as { type?: string; rollingUpdate?: unknown };
  const type = strategy.type ?? 'RollingUpdate';
  const rollingUpdate =
    type === 'RollingUpdate'
      ? (strategy.rollingUpdate ?? { maxSurge: '25%', maxUnavailable: '25%' })
      : strategy.rollingUpdate;
  return { ...o, spec: { ...spec, strategy: { type, ...(rollingUpdate === undefined ? {} : { rollingUpdate }) } } };
}

/** Fields the apiserver defaulted belong to no manager: an apply that omits them leaves them. */
function withUnownedDefaults(existing: LooseObject, next: LooseObject): LooseObject {
  if (next.kind === 'Service') return withAllocatedClusterIp(existing, next);
  if (next.kind !== 'Deployment') return next;
  const strategyOf = (o: LooseObject): Record<string, unknown> =>
    ((o['spec'] as Record<string, unknown> | undefined)?.['strategy'] ?? {}) as Record<string, unknown>;
  const spec = (next['spec'] ?? {}) as Record<string, unknown>;
  return { ...next, spec: { ...spec, strategy: { ...strategyOf(existing), ...strategyOf(next) } } };
}

/** A Service keeps the clusterIP(s) the apiserver allocated when an apply does not set them. */
function withAllocatedClusterIp(existing: LooseObject, next: LooseObject): LooseObject {
  const specOf = (o: LooseObject): Record<string, unknown> => (o['spec'] ?? {}) as Record<string, unknown>;
  const spec = specOf(next);
  if (spec['clusterIP'] !== undefined) return next;
  const { clusterIP, clusterIPs } = specOf(existing);
  return { ...next, spec: { ...spec, ...(clusterIP === undefined ? {} : { clusterIP, clusterIPs }) } };
}

/** What apps/v1 validation refuses of the objects the operator builds. */
function invalidity(o: LooseObject): string | undefined {
  const strategy = (o['spec'] as { strategy?: { type?: string; rollingUpdate?: unknown } } | undefined)?.strategy;
  if (o.kind === 'Deployment' && strategy?.type === 'Recreate' && strategy.rollingUpdate !== undefined) {
    return `Deployment.apps "${o.metadata.name}" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy \`type\` is 'Recreate'`;
  }
  return undefined;
}

/** RFC 7386: objects merge key by key, null removes, everything else replaces. */
function mergeJson(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const base: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete base[k];
    else base[k] = mergeJson(base[k], v);
  }
  return base;
}

/** Creation timestamps of the fake: one second apart, in creation order, from a fixed epoch. */
const FAKE_EPOCH_MS = Date.parse('2026-01-01T00:00:00Z');

export class FakeKube implements KubeApi {
  readonly objects = new Map<string, LooseObject>();
  readonly leases = new Map<string, LeaseRecord>();
  readonly events: CoreV1Event[] = [];
  /** "method kind namespace/name" of every write (apply, delete, status), in order. */
  readonly writes: string[] = [];
  readonly #log: LogEntry[] = [];
  readonly #watchers: Watcher[] = [];
  readonly #failures: Array<{ method: Method; match: (detail: string) => boolean; error: Error; times: number }> = [];
  #rv = 100;
  #uid = 1;
  #created = 0;

  /** Make the next `times` calls of `method` whose detail ("Kind ns/name") matches fail with `error`. */
  failOn(method: Method, error: Error, options: { match?: (detail: string) => boolean; times?: number } = {}): void {
    this.#failures.push({ method, match: options.match ?? (() => true), error, times: options.times ?? 1 });
  }

  /** Forget every failure not yet used up (the apiserver is back, the credentials restored). */
  clearFailures(): void {
    this.#failures.length = 0;
  }

  #maybeFail(method: Method, detail: string): void {
    const f = this.#failures.find((x) => x.method === method && x.times > 0 && x.match(detail));
    if (f === undefined) return;
    f.times--;
    throw f.error;
  }

  #emit(type: WatchEvent['type'], object: LooseObject): void {
    const entry = { rv: Number(object.metadata.resourceVersion), event: { type, object: clone(object) } };
    this.#log.push(entry);
    for (const w of this.#watchers) this.#deliver(w, entry);
  }

  #deliver(w: Watcher, entry: LogEntry): void {
    const o = entry.event.object;
    if (w.stopped || w.stalled || typeKey(o) !== typeKey(w.type)) return;
    if (w.options.namespace !== undefined && o.metadata.namespace !== w.options.namespace) return;
    if (!matchesSelector(o, w.options.labelSelector)) return;
    queueMicrotask(() => {
      if (!w.stopped && !w.stalled) w.onEvent(clone(entry.event));
    });
  }

  async get<T = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    this.#maybeFail('get', `${ref.kind} ${ref.namespace ?? ''}/${ref.name}`);
    this.#lingerOneRead(keyOf(ref));
    const o = this.objects.get(keyOf(ref));
    return o === undefined ? undefined : (clone(o) as unknown as T);
  }

  async list<T extends KubeObject = KubeObject>(type: ResourceType, options: ListOptions = {}): Promise<ListResult<T>> {
    this.#maybeFail('list', `${type.kind} ${options.namespace ?? ''}/`);
    const items = [...this.objects.values()].filter(
      (o) =>
        typeKey(o) === typeKey(type) &&
        (options.namespace === undefined || o.metadata.namespace === options.namespace) &&
        matchesSelector(o, options.labelSelector),
    );
    return { items: items.map((o) => clone(o) as unknown as T), resourceVersion: String(this.#rv) };
  }

  /** Create or replace an object as another actor would (PVs, objects of older operators). */
  put(object: KubeObject): LooseObject {
    const key = keyOf({ ...object, ...object.metadata });
    const existing = this.objects.get(key);
    const stored: LooseObject = defaulted(clone(object) as LooseObject);
    const created =
      existing?.metadata.creationTimestamp ??
      stored.metadata.creationTimestamp ??
      new Date(FAKE_EPOCH_MS + 1000 * this.#created++).toISOString().replace('.000Z', 'Z');
    stored.metadata = {
      ...stored.metadata,
      uid: existing?.metadata.uid ?? stored.metadata.uid ?? `uid-${this.#uid++}`,
      creationTimestamp: created as unknown as Date, // JSON on the wire: an RFC 3339 string
      resourceVersion: String(++this.#rv),
      generation:
        existing === undefined
          ? 1
          : (existing.metadata.generation ?? 1) + (specPart(existing) === specPart(stored) ? 0 : 1),
    };
    this.objects.set(key, stored);
    this.#emit(existing === undefined ? 'ADDED' : 'MODIFIED', stored);
    return clone(stored);
  }

  async apply<T extends KubeObject>(object: T): Promise<T> {
    const detail = `${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    this.#maybeFail('apply', detail);
    this.writes.push(`apply ${detail}`);
    const existing = this.objects.get(keyOf({ ...object, ...object.metadata }));
    let next: LooseObject = { ...(clone(object) as unknown as LooseObject) };
    if (existing !== undefined) {
      next = withUnownedDefaults(existing, next);
      const invalid = invalidity(next);
      if (invalid !== undefined) throw new KubeApiError(422, invalid);
      const immutable = immutableViolation(existing, next);
      if (immutable !== undefined)
        throw new KubeApiError(
          422,
          `${object.kind} "${object.metadata.name}" is invalid: ${immutable}: field is immutable`,
        );
      next.metadata = {
        ...existing.metadata,
        ...next.metadata,
        labels: next.metadata.labels ?? {},
        annotations: next.metadata.annotations ?? {},
      };
      if (existing['status'] !== undefined) next['status'] = existing['status'];
      if (canonicalJson(next) === canonicalJson(existing)) return clone(existing) as unknown as T;
    }
    return this.put(next) as unknown as T;
  }

  async mergePatch<T extends KubeObject>(patch: LooseObject): Promise<T> {
    const detail = `${patch.kind} ${patch.metadata.namespace ?? ''}/${patch.metadata.name}`;
    this.#maybeFail('mergePatch', detail);
    this.writes.push(`patch ${detail}`);
    const existing = this.objects.get(keyOf({ ...patch, ...patch.metadata }));
    if (existing === undefined) throw new KubeApiError(404, `${patch.kind} "${patch.metadata.name}" not found`);
    const { resourceVersion, ...metadata } = patch.metadata;
    if (resourceVersion !== undefined && resourceVersion !== existing.metadata.resourceVersion) {
      throw new KubeApiError(
        409,
        `Operation cannot be fulfilled on ${patch.kind} "${patch.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    const next = mergeJson(clone(existing), { ...patch, metadata }) as LooseObject;
    const invalid = invalidity(next);
    if (invalid !== undefined) throw new KubeApiError(422, invalid);
    const immutable = immutableViolation(existing, next);
    if (immutable !== undefined)
      throw new KubeApiError(
        422,
        `${patch.kind} "${patch.metadata.name}" is invalid: ${immutable}: field is immutable`,
      );
    if (canonicalJson(next) === canonicalJson(existing)) return clone(existing) as unknown as T;
    return this.put(next) as unknown as T;
  }

  /** Play the garbage collector: delete every object whose owners are all gone; returns how many. */
  collectGarbage(): number {
    const uids = new Set([...this.objects.values()].map((o) => o.metadata.uid));
    let deleted = 0;
    for (const [key, o] of [...this.objects]) {
      const owners = o.metadata.ownerReferences ?? [];
      if (owners.length === 0 || owners.some((r) => uids.has(r.uid))) continue;
      this.objects.delete(key);
      o.metadata.resourceVersion = String(++this.#rv);
      this.#emit('DELETED', o);
      deleted++;
    }
    return deleted;
  }

  /**
   * Foreground deletions keep the object, with a deletionTimestamp, for this many more reads by
   * name (as while the garbage collector deletes its pods); 0 deletes at once.
   */
  foregroundLingerReads = 0;
  readonly #lingering = new Map<string, number>();

  #lingerOneRead(key: string): void {
    const left = this.#lingering.get(key);
    if (left === undefined) return;
    if (left > 1) {
      this.#lingering.set(key, left - 1);
      return;
    }
    this.#lingering.delete(key);
    const o = this.objects.get(key);
    if (o === undefined) return;
    this.objects.delete(key);
    o.metadata.resourceVersion = String(++this.#rv);
    this.#emit('DELETED', o);
  }

  async delete(ref: ObjectRef, options: DeleteOptions = {}): Promise<boolean> {
    const detail = `${ref.kind} ${ref.namespace ?? ''}/${ref.name}`;
    this.#maybeFail('delete', detail);
    const foreground = options.propagation === 'Foreground';
    this.writes.push(`delete ${detail}${foreground ? ' (foreground)' : ''}`);
    const key = keyOf(ref);
    const existing = this.objects.get(key);
    if (existing === undefined) return false;
    if (foreground && this.foregroundLingerReads > 0) {
      if (existing.metadata.deletionTimestamp === undefined) {
        existing.metadata.deletionTimestamp = new Date(FAKE_EPOCH_MS);
        existing.metadata.resourceVersion = String(++this.#rv);
        this.#lingering.set(key, this.foregroundLingerReads);
        this.#emit('MODIFIED', existing);
      }
      return true;
    }
    this.objects.delete(key);
    existing.metadata.resourceVersion = String(++this.#rv);
    this.#emit('DELETED', existing);
    return true;
  }

  async patchDeploymentStatus(name: string, status: PmemCSIDeploymentStatus): Promise<void> {
    this.#maybeFail('patchDeploymentStatus', `${RESOURCES.pmemCsiDeployment.kind} /${name}`);
    this.writes.push(`status ${name}`);
    const o = this.objects.get(keyOf({ ...RESOURCES.pmemCsiDeployment, name }));
    if (o === undefined) throw new KubeApiError(404, `pmemcsideployments "${name}" not found`);
    const next = { ...clone(o), status: clone(status) };
    next.metadata.resourceVersion = String(++this.#rv);
    this.objects.set(keyOf({ ...RESOURCES.pmemCsiDeployment, name }), next);
    this.#emit('MODIFIED', next);
  }

  /** Play a workload controller: set the status of an existing object (observedGeneration = generation). */
  setStatus(ref: ObjectRef, status: Record<string, unknown>): void {
    const o = this.objects.get(keyOf(ref));
    if (o === undefined) throw new Error(`setStatus: ${ref.kind} ${ref.name} does not exist`);
    const next = { ...clone(o), status: { observedGeneration: o.metadata.generation, ...status } };
    next.metadata.resourceVersion = String(++this.#rv);
    this.objects.set(keyOf(ref), next);
    this.#emit('MODIFIED', next);
  }

  async watch(type: ResourceType, options: WatchOptions, onEvent: (event: WatchEvent) => void): Promise<WatchHandle> {
    this.#maybeFail('watch', `${type.kind} ${options.namespace ?? ''}/`);
    let settle: { resolve(): void; reject(e: Error): void } = { resolve: () => undefined, reject: () => undefined };
    const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    const watcher: Watcher = {
      type,
      options,
      onEvent,
      stalled: false,
      stopped: false,
      end: (error) => {
        if (watcher.stopped) return;
        watcher.stopped = true;
        this.#watchers.splice(this.#watchers.indexOf(watcher), 1);
        if (error === undefined) settle.resolve();
        else settle.reject(error);
      },
    };
    this.#watchers.push(watcher);
    for (const entry of this.#log) if (entry.rv > Number(options.resourceVersion)) this.#deliver(watcher, entry);
    return { stop: () => watcher.end(this.stopRejectsWith), done };
  }

  /**
   * When set, stop() ends a watch with this error instead of cleanly, as @kubernetes/client-node
   * 1.4 reports an abort the caller asked for ("The user aborted a request.", no status): for tests
   * of the layers above the adapter, which must not count that as a failure.
   */
  stopRejectsWith: Error | undefined;

  /** Open watches (tests check restarts). */
  get watchCount(): number {
    return this.#watchers.length;
  }

  /** Silently stop delivering events on every open watch (a JS watch that hangs without closing). */
  stallWatches(): void {
    for (const w of this.#watchers) w.stalled = true;
  }

  /** End every open watch with an error (or cleanly). */
  breakWatches(error?: Error): void {
    for (const w of [...this.#watchers]) w.end(error);
  }

  /** Send a BOOKMARK on every open watch (the apiserver does so about once a minute). */
  bookmark(): void {
    const object = { apiVersion: 'v1', kind: 'Bookmark', metadata: { name: '', resourceVersion: String(this.#rv) } };
    for (const w of this.#watchers) if (!w.stalled) queueMicrotask(() => w.onEvent({ type: 'BOOKMARK', object }));
  }

  async createEvent(event: CoreV1Event): Promise<void> {
    this.#maybeFail('createEvent', `Event ${event.metadata?.namespace ?? ''}/${event.metadata?.name ?? ''}`);
    this.events.push(clone(event));
  }

  async getLease(namespace: string, name: string): Promise<LeaseRecord | undefined> {
    this.#maybeFail('getLease', `Lease ${namespace}/${name}`);
    const l = this.leases.get(`${namespace}/${name}`);
    return l === undefined ? undefined : { ...l };
  }

  async createLease(lease: LeaseRecord): Promise<LeaseRecord> {
    this.#maybeFail('createLease', `Lease ${lease.namespace}/${lease.name}`);
    const key = `${lease.namespace}/${lease.name}`;
    if (this.leases.has(key)) throw new KubeApiError(409, `leases "${lease.name}" already exists`);
    const stored = { ...lease, resourceVersion: String(++this.#rv) };
    this.leases.set(key, stored);
    return { ...stored };
  }

  async updateLease(lease: LeaseRecord): Promise<LeaseRecord> {
    this.#maybeFail('updateLease', `Lease ${lease.namespace}/${lease.name}`);
    const key = `${lease.namespace}/${lease.name}`;
    const current = this.leases.get(key);
    if (current === undefined) throw new KubeApiError(404, `leases "${lease.name}" not found`);
    if (current.resourceVersion !== lease.resourceVersion)
      throw new KubeApiError(409, 'the object has been modified; please apply your changes to the latest version');
    const stored = { ...lease, resourceVersion: String(++this.#rv) };
    this.leases.set(key, stored);
    return { ...stored };
  }
}
