// The operator's own permissions, derived from what it builds, so that a new builder kind can never
// ship without the RBAC to apply it:
// - the PmemCSIDeployments: get/list/watch, patch of /status, update of /finalizers (owner
//   references with blockOwnerDeletion need it where OwnerReferencesPermissionEnforcement is on);
// - every kind a builder makes: get/list/watch (informers), create and patch (a server-side apply
//   that creates an object is authorized as "patch" and also as "create"), delete (recreate on
//   immutable fields, obsolete objects);
// - kinds only older versions made (StatefulSet, MutatingWebhookConfiguration): list and watch
//   (informers, so that a leftover is found without a list per reconcile) and delete;
// - PersistentVolumes: list (the device-mode guard counts the driver's volumes);
// - Nodes: list and watch (an informer of their names and labels: PmemOverlap names the nodes a
//   deployment is kept off for an earlier PMEM-managing one);
// - Leases in the driver namespace: its own (leader election: binary/flags.ts puts the Lease in
//   --namespace), and list/watch of the drivers' provisioner Leases (the active controller replica);
// - Events: create (in "default", where events of cluster-scoped objects go);
// - and every permission it grants to external-provisioner and external-resizer, because RBAC lets
//   a subject create a Role or binding only for permissions it holds itself. Holding them is
//   bounded; the alternative, escalate + bind on roles, would let the operator grant anything to
//   anyone.
// Cluster-scoped grants go into the ClusterRole, namespaced ones into a Role in the driver
// namespace (the only namespace the operator writes to).
import type { V1PolicyRule } from '@kubernetes/client-node';
import { API_GROUP, PLURAL } from '@pmem-csi/api';
import type { ResourceType } from '../kube/kube-port.js';
import { EVER_CREATED_KINDS } from '../objects/kinds.js';
import {
  PROVISIONER_CLUSTER_RULES,
  PROVISIONER_NAMESPACE_RULES,
  RESIZER_CLUSTER_RULES,
  RESIZER_NAMESPACE_RULES,
} from '../objects/rbac.js';
import { BUILDERS } from '../objects/registry.js';
import { RESOURCES, typeKey } from '../kube/resources.js';

/** The order in which verbs are listed (as `kubectl describe clusterrole` groups them). */
export const VERB_ORDER: readonly string[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

const MANAGE = ['get', 'list', 'watch', 'create', 'patch', 'delete'];
// get: the Go operator's objects of these kinds are read by name once (loop/go-takeover.ts).
const CLEAN_UP = ['get', 'list', 'watch', 'delete'];

export interface OperatorRules {
  /** For the operator's ClusterRole. */
  readonly cluster: V1PolicyRule[];
  /** For the operator's Role in the driver namespace. */
  readonly namespace: V1PolicyRule[];
}

/** "group|resource" -> verbs. */
type Grants = Map<string, Set<string>>;

function grant(grants: Grants, group: string, resource: string, verbs: readonly string[]): void {
  const key = `${group}|${resource}`;
  const set = grants.get(key) ?? new Set<string>();
  for (const verb of verbs) set.add(verb);
  grants.set(key, set);
}

function grantRules(grants: Grants, rules: readonly V1PolicyRule[]): void {
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? [''])
      for (const resource of rule.resources ?? []) grant(grants, group, resource, rule.verbs);
  }
}

const groupOf = (type: { readonly apiVersion: string }): string =>
  type.apiVersion.includes('/') ? (type.apiVersion.split('/')[0] ?? '') : '';
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function orderedVerbs(verbs: Set<string>): string[] {
  const unknown = [...verbs].filter((v) => !VERB_ORDER.includes(v));
  if (unknown.length > 0) throw new Error(`operator RBAC: verbs without a place in VERB_ORDER: ${unknown.join(', ')}`);
  return VERB_ORDER.filter((v) => verbs.has(v));
}

/** One rule per API group and verb set, resources sorted: deterministic and easy to review. */
function toRules(grants: Grants): V1PolicyRule[] {
  const buckets = new Map<string, { group: string; verbs: string[]; resources: string[] }>();
  for (const [key, verbs] of grants) {
    const [group = '', resource = ''] = key.split('|');
    const ordered = orderedVerbs(verbs);
    const bucketKey = `${group}|${ordered.join(',')}`;
    const bucket = buckets.get(bucketKey) ?? { group, verbs: ordered, resources: [] };
    bucket.resources.push(resource);
    buckets.set(bucketKey, bucket);
  }
  return [...buckets.values()]
    .map((b) => ({ ...b, resources: b.resources.sort(byName) }))
    .sort((a, b) => byName(a.group, b.group) || byName(a.resources[0] ?? '', b.resources[0] ?? ''))
    .map((b) => ({ apiGroups: [b.group], resources: b.resources, verbs: b.verbs }));
}

/** The ClusterRole and namespace Role rules of the operator. */
export function operatorRbacRules(): OperatorRules {
  const cluster: Grants = new Map();
  const namespaced: Grants = new Map();
  const scope = (type: ResourceType): Grants => (type.namespaced ? namespaced : cluster);
  grant(cluster, API_GROUP, PLURAL, ['get', 'list', 'watch']);
  grant(cluster, API_GROUP, `${PLURAL}/status`, ['patch']);
  grant(cluster, API_GROUP, `${PLURAL}/finalizers`, ['update']);
  const built = new Set(BUILDERS.map(typeKey));
  for (const type of BUILDERS) grant(scope(type), groupOf(type), type.plural, MANAGE);
  for (const type of EVER_CREATED_KINDS.filter((k) => !built.has(typeKey(k))))
    grant(scope(type), groupOf(type), type.plural, CLEAN_UP);
  grant(cluster, groupOf(RESOURCES.persistentVolume), RESOURCES.persistentVolume.plural, ['list']);
  grant(cluster, '', 'events', ['create']);
  // The Node informer: the nodes a deployment is kept off for an earlier PMEM-managing one (PmemOverlap).
  grant(cluster, groupOf(RESOURCES.node), RESOURCES.node.plural, ['list', 'watch']);
  // Its own Lease (leader election); get, list and watch for reading who holds each driver's
  // provisioner and resizer Lease (status.driverComponents[].active and .activeResizer).
  grant(namespaced, 'coordination.k8s.io', 'leases', ['get', 'list', 'watch', 'create', 'update']);
  grantRules(cluster, PROVISIONER_CLUSTER_RULES);
  grantRules(namespaced, PROVISIONER_NAMESPACE_RULES);
  grantRules(cluster, RESIZER_CLUSTER_RULES);
  grantRules(namespaced, RESIZER_NAMESPACE_RULES);
  return { cluster: toRules(cluster), namespace: toRules(namespaced) };
}
