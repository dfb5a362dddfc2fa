// What one reconcile must change: which desired objects to apply (those not already as desired,
// e.g. built by another operator version), which of them must be recreated because an immutable
// field differs, and which existing objects are obsolete. Obsolete means: of a kind this or an
// older operator created (objects/kinds.ts), labelled as ours for this CR, owned by this CR
// (controller reference with its uid), and not wanted any more. Nothing else is ever deleted;
// PersistentVolumes and the data on the nodes are never touched.
import { API_GROUP, KIND, LABEL_KEYS, FIELD_MANAGER } from '@pmem-csi/api';
import { describeRef, refOf, type KubeObject, type ObjectRef, type ResourceType } from '../kube/kube-port.js';
import type { ObjectBuilder, OwnerDeployment } from '../objects/context.js';
import { EVER_CREATED_KINDS } from '../objects/kinds.js';
import type { DesiredObject } from '../objects/registry.js';
import { typeKey } from '../kube/resources.js';
import { isSubset } from './subset.js';

export interface ApplyStep {
  readonly object: KubeObject;
  /** Delete the live object first (an immutable field differs). */
  readonly recreate: boolean;
  /** Why it is applied, for logs: "missing", "changed" or "recreate". */
  readonly why: 'missing' | 'changed' | 'recreate';
  /** The builder's immutability check, for objects that turn out to exist unlabelled (Go operator). */
  readonly mustRecreate?: ObjectBuilder['mustRecreate'];
  /** The builder's merge patch to send before the apply, if the live object needs one. */
  readonly prepatch?: ObjectBuilder['prepatch'];
  /** The builder's word that a recreate waits until the old object's pods are gone. */
  readonly recreateAfterPodsGone?: boolean;
  /** The live object labelled as ours ("changed", "recreate"); a "missing" one may exist unlabelled. */
  readonly live?: KubeObject;
}

export interface ObjectPlan {
  /** In apply order. */
  readonly apply: readonly ApplyStep[];
  /** Desired objects that are already as desired. */
  readonly unchanged: readonly KubeObject[];
  /** Obsolete objects, to delete after all applies (reverse apply order). */
  readonly delete: readonly ObjectRef[];
}

/** The label selector of every object the operator built for CR `crName`. */
export function ownedSelector(crName: string): string {
  return `${LABEL_KEYS.instance}=${crName},${LABEL_KEYS.managedBy}=${FIELD_MANAGER}`;
}

function identity(o: { apiVersion: string; kind: string; name: string; namespace?: string | undefined }): string {
  return `${typeKey(o)}|${o.namespace ?? ''}|${o.name}`;
}

const idOf = (o: KubeObject): string => identity({ ...refOf(o), name: o.metadata.name });

/** Owned by this CR through its controller reference (same uid), and labelled as ours. */
export function isOwnedBy(object: KubeObject, cr: OwnerDeployment): boolean {
  const labels = object.metadata.labels ?? {};
  if (labels[LABEL_KEYS.instance] !== cr.metadata.name || labels[LABEL_KEYS.managedBy] !== FIELD_MANAGER) return false;
  return (object.metadata.ownerReferences ?? []).some(
    (r) =>
      r.controller === true && r.uid === cr.metadata.uid && r.kind === KIND && r.apiVersion.split('/')[0] === API_GROUP,
  );
}

/** Plan applies and deletions from the desired objects and the live objects of EVER_CREATED_KINDS. */
export function planObjects(
  desired: readonly DesiredObject[],
  live: readonly KubeObject[],
  cr: OwnerDeployment,
  kinds: readonly ResourceType[] = EVER_CREATED_KINDS,
): ObjectPlan {
  const liveById = new Map(live.map((o) => [idOf(o), o]));
  const apply: ApplyStep[] = [];
  const unchanged: KubeObject[] = [];
  for (const { builder, object } of desired) {
    const current = liveById.get(idOf(object));
    const check = {
      ...(builder.mustRecreate === undefined ? {} : { mustRecreate: builder.mustRecreate }),
      ...(builder.prepatch === undefined ? {} : { prepatch: builder.prepatch }),
      ...(builder.recreateAfterPodsGone === true ? { recreateAfterPodsGone: true } : {}),
    };
    if (current === undefined) apply.push({ object, recreate: false, why: 'missing', ...check });
    else if (builder.mustRecreate?.(current, object) === true)
      apply.push({ object, recreate: true, why: 'recreate', live: current, ...check });
    else if (!isSubset(object, current))
      apply.push({ object, recreate: false, why: 'changed', live: current, ...check });
    else unchanged.push(object);
  }
  const wanted = new Set(desired.map((d) => idOf(d.object)));
  const known = new Set(kinds.map(typeKey));
  const obsolete = live.filter((o) => known.has(typeKey(o)) && !wanted.has(idOf(o)) && isOwnedBy(o, cr));
  return { apply, unchanged, delete: obsolete.map(refOf).reverse() };
}

/** One line per change, for logs and tests. */
export function describePlan(plan: ObjectPlan): string[] {
  return [
    ...plan.apply.map((s) => `apply ${describeRef(refOf(s.object))} (${s.why})`),
    ...plan.delete.map((r) => `delete ${describeRef(r)}`),
  ];
}
