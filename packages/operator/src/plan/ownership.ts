// Who may write an object, and which of two PmemCSIDeployments with colliding object names keeps
// them. Object names derive from the CR name with '.' replaced by '-' (api names.ts), so e.g.
// `pmem-csi.intel.com` and `pmem-csi-intel-com` map to the same Secrets, ServiceAccounts, RBAC
// objects, Services, Deployment and DaemonSet. Before issue 18, each CR saw the other's objects as
// "missing" (they carry the other's instance label) and applied and recreated them every few
// seconds. The names themselves stay as they are (existing clusters' objects carry the Go
// operator's names), and refusing such names by validation would not help CRs that already exist,
// so the collision is settled at reconcile time by one total order (`precedence`,
// OBJECT_NAME_OWNERSHIP_RULE): creationTimestamp, then the name in code-unit order. Both are stored
// by the API server and never change, so every replica, after every restart, ranks alike.
//
// 1. Precedence, before the reconciler reads the CR's objects or writes anything: among all
//    PmemCSIDeployments that give the same object-name prefix (the operator's informer cache; the
//    list is small), the first by the order keeps the names. A CR being deleted still counts: its
//    objects exist until the garbage collector removed them. Every other one is refused: Conflict
//    True (NameCollision) naming the first, phase Failed, one Warning event, and nothing written —
//    no certificate generated, no object applied.
// 2. Ownership, for every object the reconcile would apply or recreate, checked on the live
//    object before the first write (obsolete objects are deleted only when controlled by this CR,
//    object-plan.ts; the 422 path reads the object again): its controller must be this CR (same
//    uid), absent (objects made without one, e.g. by a user or a manifest install, are adopted),
//    or a PmemCSIDeployment that still exists, collides with this one and comes after it by the
//    order — the first one takes over what a later one created (its apply replaces the owner
//    reference and labels; a workload whose selector names the other CR is recreated). The same
//    order thus decides whether the objects exist yet or not: with two CRs created within one
//    second, the later one by the order may have deployed before the first one appeared in the
//    cache (issue 32: both were refused, one by precedence, the other by the objects' controller).
//    An object controlled by any other PmemCSIDeployment (one that is gone but not yet
//    garbage-collected, also a CR deleted and recreated under the same name) or by anything else
//    is never touched; the reconcile writes nothing and reports Conflict True
//    (OwnedByOtherDeployment or OwnedByOtherController) naming the object and its controller.
//
// Taking over: the operator requeues every CR sharing a prefix with a CR that was added or deleted,
// or with the controller of an object that changed (loop/control-loop.ts), so a refused CR takes
// over as soon as the first one and its objects are gone, and the first one takes its objects back
// should a later one write them in a race. Objects of other controllers are not watched: such a
// conflict is checked again after OWNERSHIP_RECHECK_MS.
// Clearing: once set, the Conflict condition stays and turns False (reason Resolved) at the first
// reconcile that is not refused, so that its lastTransitionTime tells when the conflict ended and
// `kubectl wait --for=condition=Conflict=false` works. CRs that never had a conflict carry none.
import type { V1OwnerReference } from '@kubernetes/client-node';
import {
  API_GROUP,
  KIND,
  OBJECT_NAME_OWNERSHIP_RULE,
  deploymentObjectNames,
  formatTimestamp,
  objectNamePrefix,
  objectNamesCollide,
} from '@pmem-csi/api';
import { describeRef, refOf, type KubeObject } from '../kube/kube-port.js';
import type { OwnerDeployment } from '../objects/context.js';

export const CONFLICT_REASONS = {
  nameCollision: 'NameCollision',
  otherDeployment: 'OwnedByOtherDeployment',
  otherController: 'OwnedByOtherController',
  /** The Go operator made this deployment's objects in another namespace (loop/go-takeover.ts). */
  goOperatorNamespace: 'GoOperatorNamespace',
  resolved: 'Resolved',
} as const;

export const CONFLICT_RESOLVED_MESSAGE =
  'no other deployment or controller owns the objects of this deployment any more';

/** A conflict that refuses a reconcile: Conflict condition reason and message. */
export interface ConflictFinding {
  readonly reason: (typeof CONFLICT_REASONS)[Exclude<keyof typeof CONFLICT_REASONS, 'resolved'>];
  readonly message: string;
}

/** Objects of other controllers are not watched: how soon a refused reconcile looks again. */
export const OWNERSHIP_RECHECK_MS = 60 * 1000;

/** A CR as the informer (client model metadata) or the API types (string timestamps) have it. */
interface Created {
  readonly metadata: { readonly name: string; readonly creationTimestamp?: Date | string };
}

/** Milliseconds since the epoch; Infinity when unknown (such a CR comes last). */
const createdAt = (o: Created): number => {
  const t = o.metadata.creationTimestamp;
  const ms = t === undefined ? NaN : new Date(t).getTime();
  return Number.isNaN(ms) ? Infinity : ms;
};

/**
 * Negative when `a` keeps the object names over `b` (OBJECT_NAME_OWNERSHIP_RULE): created first,
 * then first by name in code-unit order. A total order on CRs (names are unique).
 */
export function precedence(a: Created, b: Created): number {
  const byTime = createdAt(a) - createdAt(b);
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

const isDeploymentRef = (r: V1OwnerReference): boolean => r.kind === KIND && r.apiVersion.split('/')[0] === API_GROUP;

/** The controller owner reference of `object`, if any. */
export function controllerOf(object: KubeObject): V1OwnerReference | undefined {
  return (object.metadata.ownerReferences ?? []).find((r) => r.controller === true);
}

function timestampOf(o: Created): string {
  const ms = createdAt(o);
  return Number.isFinite(ms) ? formatTimestamp(new Date(ms)) : 'unknown';
}

/**
 * NameCollision when another PmemCSIDeployment in `deployments` gives the same object names and
 * takes precedence over `cr`; undefined when `cr` keeps its names.
 */
export function nameCollision(
  cr: OwnerDeployment,
  deployments: readonly KubeObject[],
  namespace: string,
): ConflictFinding | undefined {
  const winner = deployments
    .filter((d) => objectNamesCollide(d.metadata.name, cr.metadata.name))
    .sort(precedence)
    .find((d) => precedence(d, cr) < 0);
  if (winner === undefined) return undefined;
  const other = winner.metadata.name;
  const prefix = objectNamePrefix(cr.metadata.name);
  const names = deploymentObjectNames(other);
  const why =
    createdAt(winner) === createdAt(cr)
      ? `both were created in the same second (${timestampOf(winner)}) and "${other}" sorts first`
      : `"${other}" was created first (${timestampOf(winner)}; this deployment ${timestampOf(cr)})`;
  return {
    reason: CONFLICT_REASONS.nameCollision,
    message:
      `object names collide with PmemCSIDeployment "${other}": both names give the object-name prefix "${prefix}" ` +
      `(DaemonSet ${namespace}/${names.nodeDaemonSet}, Deployment ${namespace}/${names.controllerDeployment}, ClusterRole ${names.provisionerClusterRole} and the other objects of that prefix). ` +
      `"${other}" keeps them by the ownership rule (${OBJECT_NAME_OWNERSHIP_RULE}): ${why}. ` +
      `It takes over any of them this deployment created; this deployment writes nothing. ` +
      `Delete one of the two deployments; to run both drivers, recreate this one under a name that still differs from "${other}" after replacing '.' with '-'.`,
  };
}

/**
 * The PmemCSIDeployment in `deployments` that controls `live` and that `cr` takes the object from:
 * one that still exists, whose object names collide with `cr`'s, and that `cr` precedes. Undefined
 * for any other object (controlled by `cr`, by nobody, or by someone `cr` must leave alone).
 */
export function takenOverFrom(
  live: KubeObject,
  cr: OwnerDeployment,
  deployments: readonly KubeObject[],
): KubeObject | undefined {
  const controller = controllerOf(live);
  if (controller === undefined || !isDeploymentRef(controller) || controller.uid === cr.metadata.uid) return undefined;
  const owner = deployments.find((d) => d.metadata.uid === controller.uid);
  return owner !== undefined && objectNamesCollide(owner.metadata.name, cr.metadata.name) && precedence(cr, owner) < 0
    ? owner
    : undefined;
}

/** An object that `cr` must not write, and who controls it. */
export interface ObjectConflict {
  readonly reason: ConflictFinding['reason'];
  /** "Kind namespace/name". */
  readonly object: string;
  /** "PmemCSIDeployment "x" (uid u)", with ", which no longer exists" for a deleted one. */
  readonly controller: string;
  readonly advice: string;
}

/**
 * Why `cr` must not write `live`: it is controlled by another PmemCSIDeployment (`deployments`
 * tells whether that one still exists) or by another controller. Undefined when the controller is
 * `cr` itself, there is none, or `cr` takes the object over (takenOverFrom).
 */
export function ownershipConflict(
  live: KubeObject,
  cr: OwnerDeployment,
  deployments: readonly KubeObject[],
): ObjectConflict | undefined {
  const controller = controllerOf(live);
  if (controller === undefined || (isDeploymentRef(controller) && controller.uid === cr.metadata.uid)) return undefined;
  if (takenOverFrom(live, cr, deployments) !== undefined) return undefined;
  const object = describeRef(refOf(live));
  if (!isDeploymentRef(controller)) {
    return {
      reason: CONFLICT_REASONS.otherController,
      object,
      controller: `${controller.kind} "${controller.name}" (${controller.apiVersion}, uid ${controller.uid})`,
      advice:
        'this deployment writes nothing while it is: delete that object or its controller, or recreate this deployment under another name',
    };
  }
  const exists = deployments.some((d) => d.metadata.uid === controller.uid);
  return {
    reason: CONFLICT_REASONS.otherDeployment,
    object,
    controller: `${KIND} "${controller.name}" (uid ${controller.uid})${exists ? '' : ', which no longer exists'}`,
    advice: exists
      ? 'this deployment writes nothing while another deployment owns its objects: delete one of the two deployments'
      : 'this deployment writes nothing until the garbage collector has deleted it',
  };
}

/** The finding of one conflicting object, mentioning `more` further ones. */
export function conflictFinding(conflict: ObjectConflict, more = 0): ConflictFinding {
  const others =
    more > 0 ? ` (${more} more objects of this deployment are controlled by another deployment or controller)` : '';
  return {
    reason: conflict.reason,
    message: `${conflict.object} is controlled by ${conflict.controller}${others}; ${conflict.advice}`,
  };
}

/** One finding for all conflicting objects: the first one, and how many more there are. */
export function summarizeConflicts(conflicts: readonly ObjectConflict[]): ConflictFinding | undefined {
  const [first] = conflicts;
  return first === undefined ? undefined : conflictFinding(first, conflicts.length - 1);
}

/** Thrown when a live object turns out to belong to someone else in the middle of a reconcile. */
export class OwnershipConflictError extends Error {
  readonly finding: ConflictFinding;

  constructor(finding: ConflictFinding) {
    super(finding.message);
    this.name = 'OwnershipConflictError';
    this.finding = finding;
  }
}
