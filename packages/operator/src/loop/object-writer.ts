// The writes of one reconcile (deployment-reconciler.ts decides what they are): the live object of
// every planned step, then server-side apply in the plan's order — the builder's merge patch first
// where the live object needs one, a recreate where an immutable field differs — and the deletion
// of obsolete objects. An object found to belong to someone else is never written: the write stops
// with OwnershipConflictError and the reconciler refuses the deployment.
// A recreate of an object whose pods must not overlap with the new one's (the node DaemonSet:
// recreateAfterPodsGone) deletes it in the foreground and creates the new one only once the old
// one is gone, which the garbage collector allows only after its pods are gone; an object found
// being deleted is waited for the same way before it is applied again. The wait is bounded
// (RECREATE_WAIT_MS): past it the reconcile fails, naming the object, and is retried.
import { errorMessage } from '@pmem-csi/csi';
import type { Logger } from '@pmem-csi/runtime';
import { sleep, type Clock } from '../clock.js';
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

/** How long a recreate waits for the old object (and, in the foreground, its pods) to be gone. */
export const RECREATE_WAIT_MS = 5 * 60 * 1000;
const RECREATE_POLL_MS = 1000;

/** What the writes did: the applied objects as the server answered, and which were deleted and created again. */
export interface WriteResult {
  readonly applied: KubeObject[];
  /** "Kind namespace/name" of every recreated object. */
  readonly recreated: string[];
}

/** Applies and deletes the objects of one PmemCSIDeployment's plan. */
export class ObjectWriter {
  readonly #kube: KubeApi;
  readonly #log: Logger;
  readonly #clock: Clock;

  constructor(kube: KubeApi, log: Logger, clock: Clock) {
    this.#kube = kube;
    this.#log = log;
    this.#clock = clock;
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
  ): Promise<WriteResult> {
    const kube = this.#kube;
    if (steps.length + obsolete.length > 0)
      context.log.info('updating driver objects', {
        changes: describePlan({ apply: steps, unchanged: [], delete: obsolete }),
      });
    const applied: KubeObject[] = [];
    const recreated: string[] = [];
    for (const step of steps) {
      try {
        if (step.recreate) {
          await this.#delete(step);
          recreated.push(describeRef(refOf(step.object)));
        } else if (step.current?.metadata.deletionTimestamp !== undefined) await this.#waitGone(step);
        else await this.#prepatch(step, step.current);
        applied.push(await this.#applyOrRecreate(step, context, recreated));
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
    return { applied, recreated };
  }

  /** Delete the live object of `step` for a recreate; foreground, and waited for, when its pods must be gone first. */
  async #delete(step: ApplyStep): Promise<void> {
    const ref = refOf(step.object);
    if (step.recreateAfterPodsGone !== true) {
      await this.#kube.delete(ref);
      return;
    }
    await this.#kube.delete(ref, { propagation: 'Foreground' });
    await this.#waitGone(step);
  }

  /** Wait until the object of `step` no longer exists (its deletion finished), at most RECREATE_WAIT_MS. */
  async #waitGone(step: ApplyStep): Promise<void> {
    const ref = refOf(step.object);
    const started = this.#clock.now();
    let logged = false;
    while ((await this.#kube.get(ref)) !== undefined) {
      const waited = this.#clock.now() - started;
      if (waited >= RECREATE_WAIT_MS)
        throw new Error(
          `still being deleted after ${Math.round(waited / 1000)} s (its pods have not stopped yet); ` +
            'it is created again only once the old one and its pods are gone, so that no node runs two of them',
        );
      if (!logged) {
        this.#log.info('waiting for the old object and its pods to be gone before creating it again', {
          object: describeRef(ref),
        });
        logged = true;
      }
      await sleep(this.#clock, RECREATE_POLL_MS);
    }
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
  async #applyOrRecreate(step: ApplyStep, context: WriteContext, recreated: string[]): Promise<KubeObject> {
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
      await this.#delete(step);
      recreated.push(describeRef(refOf(step.object)));
      return kube.apply(step.object);
    }
  }
}
