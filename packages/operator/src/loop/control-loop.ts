// The control loop: informers on the PmemCSIDeployments and on every kind the operator builds
// (only objects labelled as managed by it), each event mapped to the key of the CR that owns the
// object, a coalescing queue in front of the reconciler, and a periodic resync of every CR so that
// nothing depends on a single event ever arriving. CRs whose object names collide (plan/ownership.ts)
// are requeued together when one of them is added or deleted, or an object of one changes or is
// deleted, so that a refused CR takes over as soon as the one that kept the names is gone, and the
// one that keeps them takes back at once what a later one wrote in a race (two reconciles in flight
// that each began before the other CR was in the cache). Without a collision that costs nothing.
// Every CR is requeued
// when one is added, deleted or changes its spec (generation), because PmemOverlap (plan/pmem-overlap.ts)
// depends on the other CRs' node selectors and device modes; status writes do not requeue the others.
// The informers cover every kind any operator version ever created (objects/kinds.ts), so their
// caches serve the reconciler's reads of what a CR owns: no list per reconcile once they synced.
// One more informer holds the Leases of the namespace, which external-provisioner and
// external-resizer create (not labelled as ours): a new holder of either Lease of a driver (a
// controller failover; the two sidecars elect independently) requeues that CR, so that its status
// names the active replicas; the holders' renewals every few seconds do not.
// One more holds the Nodes, only their names and labels: a deployment kept off the nodes of earlier
// PMEM-managing deployments (plan/pmem-overlap.ts) names those nodes in PmemOverlap, so a node that
// joins, goes or changes its labels requeues the CRs with PmemOverlap True; heartbeats do not. The
// DaemonSets' device-mode annotations count too: an earlier deployment's driver that really runs
// lvm or direct keeps the later ones off its nodes, so a change of one requeues every CR.
import {
  API_GROUP,
  DEVICE_MODE_ANNOTATION,
  FIELD_MANAGER,
  KIND,
  LABEL_KEYS,
  objectNamesCollide,
  provisionerLeaseName,
  resizerLeaseName,
  getCondition,
  type PmemCSIDeploymentStatus,
} from '@pmem-csi/api';
import type { Logger } from '@pmem-csi/runtime';
import type { Clock, TimerHandle } from '../clock.js';
import { Informer, type InformerOptions } from '../kube/informer.js';
import type { KubeApi, KubeObject, ResourceType } from '../kube/kube-port.js';
import { EVER_CREATED_KINDS } from '../objects/kinds.js';
import { canonicalJson } from '../objects/hash.js';
import { leaseHolderIdentity } from '../status/active-controller.js';
import { BUILDERS } from '../objects/registry.js';
import { ReconcileQueue, type HandlerResult, type QueueOptions } from './queue.js';
import { RESOURCES, typeKey } from '../kube/resources.js';

export interface OperatorOptions {
  readonly kube: KubeApi;
  /** Namespace of the namespaced children. */
  readonly namespace: string;
  readonly reconcile: (name: string) => Promise<HandlerResult>;
  readonly clock: Clock;
  readonly log: Logger;
  /** Every CR is reconciled at least this often. */
  readonly resyncIntervalMs?: number;
  readonly informer?: Pick<InformerOptions, 'relistIntervalMs' | 'stallTimeoutMs' | 'baseBackoffMs' | 'maxBackoffMs'>;
  readonly queue?: Pick<QueueOptions, 'concurrency' | 'baseBackoffMs' | 'maxBackoffMs' | 'onResult'>;
}

export const DEFAULT_RESYNC_INTERVAL_MS = 10 * 60 * 1000;

/**
 * The kinds the operator watches: those it builds now (so that changes and deletions are
 * repaired) and those older versions built (so that their leftovers are found without a list).
 */
export function watchedKinds(): ResourceType[] {
  const seen = new Map<string, ResourceType>();
  for (const b of [...BUILDERS, ...EVER_CREATED_KINDS])
    seen.set(typeKey(b), { apiVersion: b.apiVersion, kind: b.kind, plural: b.plural, namespaced: b.namespaced });
  return [...seen.values()];
}

/** What the operator keeps of a Node: name, labels and what the informer needs (plan/pmem-overlap.ts). */
export function nodeNameAndLabels(node: KubeObject): KubeObject {
  const { name, uid, resourceVersion, labels } = node.metadata;
  return {
    apiVersion: node.apiVersion,
    kind: node.kind,
    metadata: {
      name,
      ...(uid === undefined ? {} : { uid }),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      ...(labels === undefined ? {} : { labels }),
    },
  };
}

/** The name of the PmemCSIDeployment that controls `object`, if any. */
export function ownerKey(object: KubeObject): string | undefined {
  const ref = (object.metadata.ownerReferences ?? []).find(
    (r) => r.controller === true && r.kind === KIND && r.apiVersion.split('/')[0] === API_GROUP,
  );
  return ref?.name ?? object.metadata.labels?.[LABEL_KEYS.instance];
}

export class Operator {
  readonly queue: ReconcileQueue;
  readonly informers: readonly Informer[];
  readonly #o: OperatorOptions;
  readonly #crInformer: Informer;
  readonly #owned = new Map<string, Informer>();
  readonly #leaseInformer: Informer;
  /** holderIdentity of every Lease as last seen: only a change requeues its CR. */
  readonly #leaseHolders = new Map<string, string | undefined>();
  readonly #nodeInformer: Informer;
  /** The labels of every Node as last seen (canonical JSON): only a change requeues. */
  readonly #nodeLabels = new Map<string, string>();
  /** The device-mode annotation of every DaemonSet as last seen: only a change requeues. */
  readonly #deviceModes = new Map<string, string | undefined>();
  /** metadata.generation of every CR as last seen: a spec change requeues the others. */
  readonly #generations = new Map<string, number | undefined>();
  #resync: TimerHandle | undefined;
  #stopped = false;

  constructor(options: OperatorOptions) {
    this.#o = options;
    this.queue = new ReconcileQueue(async (key) => options.reconcile(key), { clock: options.clock, ...options.queue });
    const common = { clock: options.clock, log: options.log, ...options.informer };
    this.#crInformer = new Informer(options.kube, { ...common, type: RESOURCES.pmemCsiDeployment }, (type, cr) => {
      this.queue.add(cr.metadata.name);
      if (type !== 'MODIFIED') this.#addColliding(cr.metadata.name);
      if (this.#specChanged(type, cr)) this.#addAll();
    });
    const owned = watchedKinds().map((type) => {
      const informer = new Informer(
        options.kube,
        {
          ...common,
          type,
          labelSelector: `${LABEL_KEYS.managedBy}=${FIELD_MANAGER}`,
          ...(type.namespaced ? { namespace: options.namespace } : {}),
        },
        (event, object) => {
          const key = ownerKey(object);
          if (key === undefined) return;
          this.queue.add(key);
          this.#addColliding(key);
          if (object.kind === RESOURCES.daemonSet.kind && this.#deviceModeChanged(event, object)) this.#addAll();
        },
      );
      this.#owned.set(typeKey(type), informer);
      return informer;
    });
    this.#leaseInformer = new Informer(
      options.kube,
      { ...common, type: RESOURCES.lease, namespace: options.namespace },
      (event, lease) => this.#leaseChanged(event, lease),
    );
    this.#nodeInformer = new Informer(
      options.kube,
      { ...common, type: RESOURCES.node, keep: nodeNameAndLabels },
      (event, node) => this.#nodeChanged(event, node),
    );
    this.informers = [this.#crInformer, ...owned, this.#leaseInformer, this.#nodeInformer];
  }

  /** All informers have listed once. */
  get synced(): boolean {
    return this.informers.every((i) => i.synced);
  }

  /** The PmemCSIDeployments in the informer's cache, or undefined until it listed them once. */
  deployments(): KubeObject[] | undefined {
    return this.#crInformer.synced ? this.#crInformer.list() : undefined;
  }

  /**
   * The cached objects of `type` built for CR `crName` (labelled with its instance name; ownership
   * is checked by the caller), or undefined while that kind's informer has not listed once.
   */
  ownedObjects(type: ResourceType, crName: string): KubeObject[] | undefined {
    const informer = this.#owned.get(typeKey(type));
    if (informer === undefined || !informer.synced) return undefined;
    return informer.list().filter((o) => o.metadata.labels?.[LABEL_KEYS.instance] === crName);
  }

  /** The Leases of the namespace in the informer's cache, or undefined until it listed them once. */
  leases(): KubeObject[] | undefined {
    return this.#leaseInformer.synced ? this.#leaseInformer.list() : undefined;
  }

  /** The Nodes (names and labels) in the informer's cache, or undefined until it listed them once. */
  nodes(): KubeObject[] | undefined {
    return this.#nodeInformer.synced ? this.#nodeInformer.list() : undefined;
  }

  /** Requeue the CRs with PmemOverlap True when a node joined, went or changed its labels. */
  #nodeChanged(event: 'ADDED' | 'MODIFIED' | 'DELETED', node: KubeObject): void {
    const name = node.metadata.name;
    const labels = event === 'DELETED' ? undefined : canonicalJson(node.metadata.labels ?? {});
    if (labels === this.#nodeLabels.get(name)) return;
    if (labels === undefined) this.#nodeLabels.delete(name);
    else this.#nodeLabels.set(name, labels);
    for (const cr of this.#crInformer.list()) {
      const status = (cr as { status?: PmemCSIDeploymentStatus }).status;
      if (getCondition(status?.conditions, 'PmemOverlap')?.status === 'True') this.queue.add(cr.metadata.name);
    }
  }

  /** True when DaemonSet `ds` appeared, went or carries another device-mode annotation than last seen. */
  #deviceModeChanged(event: 'ADDED' | 'MODIFIED' | 'DELETED', ds: KubeObject): boolean {
    const key = `${ds.metadata.namespace ?? ''}/${ds.metadata.name}`;
    const mode = ds.metadata.annotations?.[DEVICE_MODE_ANNOTATION];
    const known = this.#deviceModes.has(key);
    if (event === 'DELETED') return this.#deviceModes.delete(key);
    if (known && this.#deviceModes.get(key) === mode) return false;
    this.#deviceModes.set(key, mode);
    return true;
  }

  /** Requeue the CRs whose provisioner or resizer Lease got another holder (or appeared, or went away). */
  #leaseChanged(event: 'ADDED' | 'MODIFIED' | 'DELETED', lease: KubeObject): void {
    const name = lease.metadata.name;
    const holder = event === 'DELETED' ? undefined : leaseHolderIdentity(lease);
    const known = this.#leaseHolders.has(name);
    if (known && this.#leaseHolders.get(name) === holder) return;
    if (event === 'DELETED') this.#leaseHolders.delete(name);
    else this.#leaseHolders.set(name, holder);
    for (const cr of this.#crInformer.list())
      if (provisionerLeaseName(cr.metadata.name) === name || resizerLeaseName(cr.metadata.name) === name)
        this.queue.add(cr.metadata.name);
  }

  /** True when `cr` appeared, went away or changed its spec since the last event about it. */
  #specChanged(type: 'ADDED' | 'MODIFIED' | 'DELETED', cr: KubeObject): boolean {
    const name = cr.metadata.name;
    const seen = this.#generations.has(name) ? this.#generations.get(name) : null;
    if (type === 'DELETED') this.#generations.delete(name);
    else this.#generations.set(name, cr.metadata.generation);
    return type !== 'MODIFIED' || seen !== cr.metadata.generation;
  }

  #addAll(): void {
    for (const cr of this.#crInformer.list()) this.queue.add(cr.metadata.name);
  }

  /** Enqueue every cached CR whose object names collide with those of CR `name`. */
  #addColliding(name: string): void {
    for (const cr of this.#crInformer.list())
      if (objectNamesCollide(cr.metadata.name, name)) this.queue.add(cr.metadata.name);
  }

  start(): void {
    for (const informer of this.informers) informer.start();
    this.#scheduleResync();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#resync?.cancel();
    await Promise.all([this.queue.stop(), ...this.informers.map((i) => i.stop())]);
  }

  #scheduleResync(): void {
    if (this.#stopped) return;
    this.#resync = this.#o.clock.setTimer(() => {
      this.#addAll();
      this.#scheduleResync();
    }, this.#o.resyncIntervalMs ?? DEFAULT_RESYNC_INTERVAL_MS);
  }
}
