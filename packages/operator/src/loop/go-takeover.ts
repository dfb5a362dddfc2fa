// The reconciler's part of taking over a PmemCSIDeployment from the Go operator (PMEM-CSI v1.x;
// what its objects are: plan/go-operator.ts). Its objects are read by name only while our node
// DaemonSet does not exist (it is applied after the Go-only objects are gone and replaces the Go
// one of its name, so once it exists nothing of the Go operator's is left) and until a reconcile
// of this process took them over: a steady reconcile reads none of them. Its Go-only objects are
// deleted before anything of ours is applied, in order; its node DaemonSet tells the device mode
// the Go driver runs with (plan/device-mode-guard.ts). Afterwards one Normal event,
// GoOperatorObjectsTakenOver, names what was adopted in place, replaced and removed.
// Objects the Go operator made in another namespace than this operator's are never found by name
// there: its node DaemonSet would keep running beside ours on the same nodes. Its provisioner
// ClusterRoleBinding (cluster-scoped) names that namespace; the reconcile is then refused before
// anything is written (Conflict, GoOperatorNamespace) until the operator runs in that namespace.
import { deploymentObjectNames } from '@pmem-csi/api';
import { errorMessage } from '@pmem-csi/csi';
import type { Logger } from '@pmem-csi/runtime';
import { describeRef, refOf, type KubeApi, type KubeObject } from '../kube/kube-port.js';
import { RESOURCES } from '../kube/resources.js';
import type { OwnerDeployment } from '../objects/context.js';
import {
  describeGoTakeover,
  goOnlyRefs,
  goOperatorNamespace,
  madeByGoOperator,
  tookOverAnything,
  type GoTakeover,
} from '../plan/go-operator.js';
import { CONFLICT_REASONS, type ConflictFinding } from '../plan/ownership.js';
import type { EventRecorder } from '../status/events.js';
import type { ResolvedStep, WriteContext } from './object-writer.js';

/** The Go operator's objects of one CR found by name. */
export interface GoObjects {
  /** Go-only objects it made for this CR, in deletion order. */
  readonly goOnly: readonly KubeObject[];
  /** Its node DaemonSet, when ours does not exist yet (the device mode it runs with). */
  readonly nodeDaemonSet?: KubeObject;
  /** Set when it made them in another namespace: the reconcile writes nothing. */
  readonly elsewhere?: ConflictFinding;
}

export class GoOperatorTakeover {
  readonly #kube: KubeApi;
  readonly #namespace: string;
  readonly #events: EventRecorder;
  /** uids of the CRs taken over by this process: not looked up again. */
  readonly #done = new Set<string>();

  constructor(kube: KubeApi, namespace: string, events: EventRecorder) {
    this.#kube = kube;
    this.#namespace = namespace;
    this.#events = events;
  }

  /**
   * The Go operator's objects of `cr`, read by name while our node DaemonSet is not in `live`.
   * Objects of those names that the Go operator did not make for this CR are left alone.
   */
  async find(cr: OwnerDeployment, live: readonly KubeObject[], log: Logger): Promise<GoObjects> {
    const names = deploymentObjectNames(cr.metadata.name);
    const dsName = names.nodeDaemonSet;
    const oursDeployed = live.some((o) => o.kind === RESOURCES.daemonSet.kind && o.metadata.name === dsName);
    if (oursDeployed || this.#done.has(cr.metadata.uid)) return { goOnly: [] };
    const kube = this.#kube;
    const binding = await kube.get({ ...RESOURCES.clusterRoleBinding, name: names.provisionerClusterRoleBinding });
    const namespace = goOperatorNamespace(binding, cr);
    if (namespace !== undefined && namespace !== this.#namespace)
      return { goOnly: [], elsewhere: elsewhere(namespace, this.#namespace, names.provisionerClusterRoleBinding) };
    const found = await Promise.all(goOnlyRefs(cr.metadata.name, this.#namespace).map(async (ref) => kube.get(ref)));
    const goOnly: KubeObject[] = [];
    for (const o of found) {
      if (o === undefined) continue;
      if (madeByGoOperator(o, cr)) goOnly.push(o);
      else log.info("not the Go operator's object of this deployment: left alone", { object: describeRef(refOf(o)) });
    }
    const ds = await kube.get({ ...RESOURCES.daemonSet, namespace: this.#namespace, name: dsName });
    return ds !== undefined && madeByGoOperator(ds, cr) ? { goOnly, nodeDaemonSet: ds } : { goOnly };
  }

  /** Delete the Go-only objects in order; returns what was deleted ("Kind namespace/name"). */
  async removeGoOnly(objects: readonly KubeObject[], log: Logger): Promise<string[]> {
    const removed: string[] = [];
    for (const o of objects) {
      const what = describeRef(refOf(o));
      try {
        if (await this.#kube.delete(refOf(o))) removed.push(what);
      } catch (e) {
        throw new Error(`deleting the Go operator's ${what}: ${errorMessage(e)}`, { cause: e });
      }
    }
    if (removed.length > 0) log.info("deleted the Go operator's objects that this driver has no use for", { removed });
    return removed;
  }

  /**
   * After a reconcile that applied everything: log and record (Normal event
   * GoOperatorObjectsTakenOver) what it did with the Go operator's objects among `steps` and the
   * `removed` ones, and look no more for this CR's.
   */
  async done(
    steps: readonly ResolvedStep[],
    writes: { readonly recreated: readonly string[]; readonly removed: readonly string[] },
    { cr, log }: WriteContext,
  ): Promise<void> {
    this.#done.add(cr.metadata.uid);
    const takeover = takeoverOf(steps, writes.recreated, writes.removed, cr);
    if (!tookOverAnything(takeover)) return;
    log.info("took over the Go operator's objects", { ...takeover });
    await this.#events.record(cr, {
      type: 'Normal',
      reason: 'GoOperatorObjectsTakenOver',
      message: describeGoTakeover(takeover),
    });
  }
}

function elsewhere(goNamespace: string, ours: string, binding: string): ConflictFinding {
  return {
    reason: CONFLICT_REASONS.goOperatorNamespace,
    message:
      `the Go operator made this deployment's objects in namespace "${goNamespace}" (its ClusterRoleBinding ${binding} names the node driver's ServiceAccount there), ` +
      `this operator works in "${ours}": nothing is written, so that no node runs the Go node driver and ours at once. ` +
      `Run this operator with --namespace ${goNamespace} (the chart: driver.namespace), or delete the Go operator's objects in "${goNamespace}" first`,
  };
}

/** The Go operator's objects among `steps` (adopted, or replaced when recreated) and the Go-only ones removed. */
function takeoverOf(
  steps: readonly ResolvedStep[],
  recreated: readonly string[],
  removed: readonly string[],
  cr: OwnerDeployment,
): GoTakeover {
  const taken = steps
    .filter((step) => step.current !== undefined && madeByGoOperator(step.current, cr))
    .map((step) => describeRef(refOf(step.object)));
  return {
    adopted: taken.filter((what) => !recreated.includes(what)),
    replaced: taken.filter((what) => recreated.includes(what)),
    removed,
  };
}
