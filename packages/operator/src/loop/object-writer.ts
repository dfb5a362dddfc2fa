// The writes of one reconcile (deployment-reconciler.ts decides what they are): the live object of
// every planned step, then server-side apply in the plan's order — the builder's merge patch first
// where the live object needs one, a recreate where an immutable field differs — and the deletion
// of obsolete objects. An object found to belong to someone else is never written: the write stops
// with OwnershipConflictError and the reconciler refuses the deployment.
import { errorMessage } from '@pmem-csi/csi';
import type { Logger } from '@pmem-csi/runtime';
import { isInvalid } from '../kube/kube-errors.js';
import { describeRef, refOf, type KubeApi, type KubeObject, type ObjectRef } from '../kube/kube-port.js';
import type { OwnerDeployment } from '../objects/context.js';
import { describePlan, type ApplyStep, type ObjectPlan } from '../plan/object-plan.js';
import { OwnershipConflictError, conflictFinding, ownershipConflict } from '../plan/ownership.js';

/** An apply step with the live object of that name (undefined: none exists). */
export type ResolvedStep = ApplyStep & { readonly current: KubeObject | undefined };

/** What the writes of one reconcile need to know. */
export interface WriteContext {
  readonly cr: OwnerDeployment;
  readonly deployments: readonly KubeObject[];
  readonly log: Logger;
}

/** Applies and deletes the objects of one PmemCSIDeployment's plan. */
export class ObjectWriter {
  readonly #kube: KubeApi;
  readonly #log: Logger;

  constructor(kube: KubeApi, log: Logger) {
    this.#kube = kube;
    this.#log = log;
  }

  /**
   * The live object of every step: labelled ones came with the list; a "missing" one may exist
   * without our labels (another CR's, the Go operator's, a user's), so it is read by name.
   */
  async resolve(plan: ObjectPlan): Promise<ResolvedStep[]> {
    return Promise.all(
      plan.apply.map(async (step) => ({ ...step, current: step.live ?? (await this.#kube.get(refOf(step.object))) })),
    );
  }

  /** Apply in order, then delete obsolete objects. Returns the applied objects as the server answered. */
  async execute(
    steps: readonly ResolvedStep[],
    obsolete: readonly ObjectRef[],
    context: WriteContext,
  ): Promise<KubeObject[]> {
    const kube = this.#kube;
    if (steps.length + obsolete.length > 0)
      context.log.info('updating driver objects', {
        changes: describePlan({ apply: steps, unchanged: [], delete: obsolete }),
      });
    const applied: KubeObject[] = [];
    for (const step of steps) {
      try {
        if (step.recreate) await kube.delete(refOf(step.object));
        else await this.#prepatch(step, step.current);
        applied.push(await this.#applyOrRecreate(step, context));
      } catch (e) {
        if (e instanceof OwnershipConflictError) throw e;
        throw new Error(`${describeRef(refOf(step.object))}: ${errorMessage(e)}`, { cause: e });
      }
    }
    for (const ref of obsolete) {
      try {
        await kube.delete(ref);
      } catch (e) {
        throw new Error(`deleting obsolete ${describeRef(ref)}: ${errorMessage(e)}`, { cause: e });
      }
    }
    return applied;
  }

  /** Send the builder's merge patch when the live object needs one; true when it did. */
  async #prepatch(step: ApplyStep, live: KubeObject | undefined): Promise<boolean> {
    const patch = live === undefined ? undefined : step.prepatch?.(live, step.object);
    if (patch === undefined) return false;
    this.#log.info('patching before apply', { object: describeRef(refOf(step.object)) });
    await this.#kube.mergePatch(patch);
    return true;
  }

  /**
   * Apply; when the apiserver refuses it as invalid (422), read the object again: if it belongs to
   * someone else now, refuse; if the builder's merge patch fixes it, patch and apply again; if an
   * object that was not labelled as ours (e.g. built by the Go operator) differs in an immutable
   * field, recreate it.
   */
  async #applyOrRecreate(step: ApplyStep, context: WriteContext): Promise<KubeObject> {
    const kube = this.#kube;
    try {
      return await kube.apply(step.object);
    } catch (e) {
      if (!isInvalid(e)) throw e;
      const live = await kube.get(refOf(step.object));
      if (live === undefined) throw e;
      const foreign = ownershipConflict(live, context.cr, context.deployments);
      if (foreign !== undefined) throw new OwnershipConflictError(conflictFinding(foreign));
      if (await this.#prepatch(step, live)) return kube.apply(step.object);
      if (step.mustRecreate?.(live, step.object) !== true) throw e;
      context.log.info('recreating object with changed immutable fields', { object: describeRef(refOf(step.object)) });
      await kube.delete(refOf(step.object));
      return kube.apply(step.object);
    }
  }
}
