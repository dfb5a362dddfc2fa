// An in-memory apiserver behind the KubeApi port, for unit tests of the reconciler, informers and
// leader election. It keeps objects with resourceVersions and generations, answers server-side
// apply like the real one does for a sole field owner (desired fields replace ours, status and
// server metadata stay, an unchanged apply is a no-op without a new resourceVersion), keeps an
// event log so a watch started from a list's resourceVersion misses nothing, and lets tests
// inject failures, stall or break watches, and play the workload controllers.
import type { CoreV1Event } from '@kubernetes/client-node';
import type { PmemCSIDeploymentStatus } from '@pmem-csi/api';
import { canonicalJson } from '../objects/hash.js';
import { KubeApiError } from '../kube-errors.js';
import type { KubeApi, KubeObject, LeaseRecord, ListOptions, ListResult, LooseObject, ObjectRef, ResourceType, WatchEvent, WatchHandle, WatchOptions } from '../kube-port.js';
import { RESOURCES, typeKey } from '../resources.js';

type Method = 'get' | 'list' | 'apply' | 'delete' | 'patchDeploymentStatus' | 'watch' | 'createEvent' | 'getLease' | 'createLease' | 'updateLease';

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

const keyOf = (o: { apiVersion: string; kind: string; namespace?: string | undefined; name: string }): string => `${typeKey(o)}|${o.namespace ?? ''}|${o.name}`;
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
  const at = (o: LooseObject, path: string[]): string => canonicalJson(path.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], o) ?? null);
  const fields: Record<string, string[][]> = {
    Secret: [['type']],
    Deployment: [['spec', 'selector']],
    DaemonSet: [['spec', 'selector']],
    CSIDriver: [['spec', 'attachRequired'], ['spec', 'volumeLifecycleModes']],
  };
  return (fields[existing.kind] ?? []).find((path) => at(existing, path) !== at(next, path))?.join('.');
}

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

  /** Make the next `times` calls of `method` whose detail ("Kind ns/name") matches fail with `error`. */
  failOn(method: Method, error: Error, options: { match?: (detail: string) => boolean; times?: number } = {}): void {
    this.#failures.push({ method, match: options.match ?? (() => true), error, times: options.times ?? 1 });
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
    const o = this.objects.get(keyOf(ref));
    return o === undefined ? undefined : (clone(o) as unknown as T);
  }

  async list<T extends KubeObject = KubeObject>(type: ResourceType, options: ListOptions = {}): Promise<ListResult<T>> {
    this.#maybeFail('list', `${type.kind} ${options.namespace ?? ''}/`);
    const items = [...this.objects.values()].filter(
      (o) => typeKey(o) === typeKey(type) && (options.namespace === undefined || o.metadata.namespace === options.namespace) && matchesSelector(o, options.labelSelector),
    );
    return { items: items.map((o) => clone(o) as unknown as T), resourceVersion: String(this.#rv) };
  }

  /** Create or replace an object as another actor would (PVs, objects of older operators). */
  put(object: KubeObject): LooseObject {
    const key = keyOf({ ...object, ...object.metadata });
    const existing = this.objects.get(key);
    const stored: LooseObject = clone(object) as LooseObject;
    stored.metadata = {
      ...stored.metadata,
      uid: existing?.metadata.uid ?? stored.metadata.uid ?? `uid-${this.#uid++}`,
      resourceVersion: String(++this.#rv),
      generation: existing === undefined ? 1 : (existing.metadata.generation ?? 1) + (specPart(existing) === specPart(stored) ? 0 : 1),
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
    const next: LooseObject = { ...(clone(object) as unknown as LooseObject) };
    if (existing !== undefined) {
      const immutable = immutableViolation(existing, next);
      if (immutable !== undefined) throw new KubeApiError(422, `${object.kind} "${object.metadata.name}" is invalid: ${immutable}: field is immutable`);
      next.metadata = { ...existing.metadata, ...next.metadata, labels: next.metadata.labels ?? {}, annotations: next.metadata.annotations ?? {} };
      if (existing['status'] !== undefined) next['status'] = existing['status'];
      if (canonicalJson(next) === canonicalJson(existing)) return clone(existing) as unknown as T;
    }
    return this.put(next) as unknown as T;
  }

  async delete(ref: ObjectRef): Promise<boolean> {
    const detail = `${ref.kind} ${ref.namespace ?? ''}/${ref.name}`;
    this.#maybeFail('delete', detail);
    this.writes.push(`delete ${detail}`);
    const key = keyOf(ref);
    const existing = this.objects.get(key);
    if (existing === undefined) return false;
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
    return { stop: () => watcher.end(), done };
  }

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
    if (current.resourceVersion !== lease.resourceVersion) throw new KubeApiError(409, 'the object has been modified; please apply your changes to the latest version');
    const stored = { ...lease, resourceVersion: String(++this.#rv) };
    this.leases.set(key, stored);
    return { ...stored };
  }
}
