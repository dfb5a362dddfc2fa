// The one interface through which the operator reaches Kubernetes. The deployment reconciler, informers,
// leader election and event recorder depend only on this; kube-api.ts implements it on
// @kubernetes/client-node and testing/fake-kube.ts in memory, so every control loop is unit-tested
// without an apiserver. Objects cross it as plain JSON-shaped values (no client model classes).
import type { CoreV1Event, V1ObjectMeta } from '@kubernetes/client-node';
import type { PmemCSIDeploymentStatus } from '@pmem-csi/api';

/** Any Kubernetes object as JSON: apiVersion, kind, metadata and kind-specific fields. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: V1ObjectMeta & { name: string };
}

/** A KubeObject whose kind-specific fields are read generically (fake apiserver, subset checks). */
export type LooseObject = KubeObject & Record<string, unknown>;

/** One resource type as the API serves it (plural is the URL segment). */
export interface ResourceType {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** Identifies one object; namespace only for namespaced kinds. */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface DeleteOptions {
  readonly propagation?: 'Background' | 'Foreground';
}

export interface ListOptions {
  /** Namespace of a namespaced type; omitted = all namespaces (or a cluster-scoped type). */
  readonly namespace?: string;
  readonly labelSelector?: string;
}

export interface ListResult<T extends KubeObject = KubeObject> {
  readonly items: T[];
  /** resourceVersion of the list: where a watch continues without missing events. */
  readonly resourceVersion: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  readonly type: WatchEventType;
  readonly object: T;
}

export interface WatchOptions extends ListOptions {
  /** Continue after this list/event resourceVersion. */
  readonly resourceVersion: string;
}

/**
 * A running watch. `done` settles when the stream ends: resolves on a clean close by the server
 * and once `stop()` ended it, rejects on an error (410 Gone included: isExpired).
 */
export interface WatchHandle {
  /** End the watch from this side; `done` then resolves (an abort the caller asked for is no error). */
  stop(): void;
  readonly done: Promise<void>;
}

/** A coordination.k8s.io/v1 Lease as leader election uses it. */
export interface LeaseRecord {
  readonly name: string;
  readonly namespace: string;
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  readonly acquireTime?: Date;
  readonly renewTime?: Date;
  readonly leaseTransitions?: number;
  /** Set on read; required for an update (optimistic concurrency: a stale one fails with 409). */
  readonly resourceVersion?: string;
}

/**
 * Kubernetes access. Every method throws KubeApiError (kube-errors.ts) with the HTTP status when
 * the apiserver refuses; `get` answers undefined and `delete` false for objects that do not exist.
 */
export interface KubeApi {
  get<T = KubeObject>(ref: ObjectRef): Promise<T | undefined>;
  list<T extends KubeObject = KubeObject>(type: ResourceType, options?: ListOptions): Promise<ListResult<T>>;
  /** Server-side apply with the operator's field manager and force (the operator owns these fields). */
  apply<T extends KubeObject>(object: T): Promise<T>;
  /**
   * JSON merge patch (RFC 7386) with the operator's field manager, for what server-side apply
   * cannot do: remove a field that no manager owns (an apiserver default), where null removes.
   * `patch` names the object (apiVersion, kind, metadata.name and namespace) and carries the
   * fields to change; metadata.resourceVersion, when set, is a precondition (409 if it changed).
   */
  mergePatch<T extends KubeObject>(patch: LooseObject): Promise<T>;
  /**
   * Delete; false when it was already gone. Background propagation unless `options` asks for
   * Foreground: the object then stays (with a deletionTimestamp) until the garbage collector has
   * deleted its dependents, e.g. a DaemonSet until its pods are gone.
   */
  delete(ref: ObjectRef, options?: DeleteOptions): Promise<boolean>;
  /** Replace the status subresource of a PmemCSIDeployment. */
  patchDeploymentStatus(name: string, status: PmemCSIDeploymentStatus): Promise<void>;
  watch(type: ResourceType, options: WatchOptions, onEvent: (event: WatchEvent) => void): Promise<WatchHandle>;
  createEvent(event: CoreV1Event): Promise<void>;
  getLease(namespace: string, name: string): Promise<LeaseRecord | undefined>;
  /** Create a Lease; 409 when it already exists. */
  createLease(lease: LeaseRecord): Promise<LeaseRecord>;
  /** Update a Lease read before (resourceVersion required); 409 when it changed meanwhile. */
  updateLease(lease: LeaseRecord): Promise<LeaseRecord>;
}

/** The reference of an object. */
export function refOf(object: KubeObject): ObjectRef {
  const { namespace } = object.metadata;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name,
    ...(namespace === undefined ? {} : { namespace }),
  };
}

/** "kind namespace/name" or "kind name", for logs and status messages. */
export function describeRef(ref: ObjectRef): string {
  return ref.namespace === undefined ? `${ref.kind} ${ref.name}` : `${ref.kind} ${ref.namespace}/${ref.name}`;
}
