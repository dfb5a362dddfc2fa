// The objects the Go operator (intel/pmem-csi v1.x, pkg/pmem-csi-operator/controller/deployment)
// made for a PmemCSIDeployment, and what this operator does with each (docs/migration.md,
// "Operator objects"). Its names are `<prefix>-<suffix>` like ours (objectNamePrefix), every
// object carries a controller owner reference to the CR, and none carries our managed-by label:
// - same name and kind as one of ours (the node DaemonSet, the provisioner's ServiceAccount and
//   RBAC, the controller and metrics Services, the CSIDriver, v0.x's certificate Secrets): taken
//   over by the normal plan, in place where the fields allow, else deleted and created again
//   (object-writer.ts; the node DaemonSet only after its pods are gone, so that no node ever runs
//   two node drivers);
// - Go only (GO_ONLY_OBJECTS: its scheduler extender and pod webhook, the controller StatefulSet
//   that served them, the raw-namespace conversion DaemonSet and their identities): deleted,
//   the MutatingWebhookConfiguration first, so that no pod creation waits for a webhook that is
//   going away.
// An object of those names that the Go operator did not make for this CR is never touched.
import { API_GROUP, FIELD_MANAGER, KIND, LABEL_KEYS, objectNamePrefix } from '@pmem-csi/api';
import type { KubeObject, ObjectRef, ResourceType } from '../kube/kube-port.js';
import { RESOURCES } from '../kube/resources.js';
import type { OwnerDeployment } from '../objects/context.js';
import { controllerOf } from './ownership.js';

/** One Go-only object: its type, its name suffix after the prefix, and what it was for (logs, events, docs). */
export interface GoOnlyObject {
  readonly type: ResourceType;
  readonly suffix: string;
  readonly role: string;
}

/** In deletion order: the webhook registration first, then the workloads, Services and identities. */
export const GO_ONLY_OBJECTS: readonly GoOnlyObject[] = [
  { type: RESOURCES.mutatingWebhookConfiguration, suffix: 'hook', role: 'pod webhook registration' },
  { type: RESOURCES.statefulSet, suffix: 'controller', role: 'controller (scheduler extender and pod webhook)' },
  { type: RESOURCES.daemonSet, suffix: 'node-setup', role: 'raw namespace conversion' },
  { type: RESOURCES.service, suffix: 'scheduler', role: 'scheduler extender and webhook Service' },
  { type: RESOURCES.clusterRoleBinding, suffix: 'webhooks-role', role: 'webhooks' },
  { type: RESOURCES.clusterRole, suffix: 'webhooks-runner', role: 'webhooks' },
  { type: RESOURCES.roleBinding, suffix: 'webhooks-role-cfg', role: 'webhooks' },
  { type: RESOURCES.role, suffix: 'webhooks-cfg', role: 'webhooks' },
  { type: RESOURCES.serviceAccount, suffix: 'webhooks', role: 'webhooks' },
  { type: RESOURCES.clusterRoleBinding, suffix: 'node-setup-role', role: 'raw namespace conversion' },
  { type: RESOURCES.clusterRole, suffix: 'node-setup-runner', role: 'raw namespace conversion' },
  { type: RESOURCES.serviceAccount, suffix: 'node-setup', role: 'raw namespace conversion' },
];

/** The references of the Go-only objects of CR `crName` (namespaced ones in `namespace`), in deletion order. */
export function goOnlyRefs(crName: string, namespace: string): ObjectRef[] {
  const prefix = objectNamePrefix(crName);
  return GO_ONLY_OBJECTS.map(({ type, suffix }) => ({
    apiVersion: type.apiVersion,
    kind: type.kind,
    name: `${prefix}-${suffix}`,
    ...(type.namespaced ? { namespace } : {}),
  }));
}

/**
 * True when the Go operator made `live` for `cr`: its controller is this PmemCSIDeployment (same
 * uid) and it lacks our managed-by label, which every object of this operator carries.
 */
export function madeByGoOperator(live: KubeObject, cr: OwnerDeployment): boolean {
  const controller = controllerOf(live);
  return (
    controller !== undefined &&
    controller.kind === KIND &&
    controller.apiVersion.split('/')[0] === API_GROUP &&
    controller.uid === cr.metadata.uid &&
    live.metadata.labels?.[LABEL_KEYS.managedBy] !== FIELD_MANAGER
  );
}

/**
 * The namespace in which the Go operator made the namespaced objects of this CR, when it can be
 * told from `binding` (its provisioner ClusterRoleBinding `<prefix>-csi-provisioner-role`, whose
 * subject is the node driver's ServiceAccount in that namespace).
 */
export function goOperatorNamespace(binding: KubeObject | undefined, cr: OwnerDeployment): string | undefined {
  if (binding === undefined || !madeByGoOperator(binding, cr)) return undefined;
  const subjects = (binding as { subjects?: Array<{ kind?: string; namespace?: string }> }).subjects ?? [];
  return subjects.find((s) => s.kind === 'ServiceAccount')?.namespace;
}

/** What one reconcile did with the Go operator's objects, for the log and the GoOperatorObjectsTakenOver event. */
export interface GoTakeover {
  /** Ours now, changed in place ("Kind namespace/name"). */
  readonly adopted: readonly string[];
  /** Deleted and created again as ours (immutable fields differed). */
  readonly replaced: readonly string[];
  /** Go only, deleted. */
  readonly removed: readonly string[];
}

/** True when the takeover did anything. */
export function tookOverAnything(t: GoTakeover): boolean {
  return t.adopted.length + t.replaced.length + t.removed.length > 0;
}

const list = (what: string, items: readonly string[]): string[] =>
  items.length === 0 ? [] : [`${what} ${items.length} (${items.join(', ')})`];

/** The event message: each object by what happened to it. */
export function describeGoTakeover(t: GoTakeover): string {
  return (
    'took over the objects the Go operator (PMEM-CSI v1.x) made for this deployment: ' +
    [
      ...list('adopted in place', t.adopted),
      ...list('replaced', t.replaced),
      ...list('removed (Go driver only: scheduler extender, pod webhook, raw namespace conversion)', t.removed),
    ].join('; ')
  );
}
