// The resource types the operator reads or writes, with the URL plural that watches need.
import { API_GROUP_VERSION, KIND, PLURAL } from '@pmem-csi/api';
import type { ResourceType } from './kube-port.js';

const type = (apiVersion: string, kind: string, plural: string, namespaced: boolean): ResourceType => ({
  apiVersion,
  kind,
  plural,
  namespaced,
});

export const RESOURCES = {
  pmemCsiDeployment: type(API_GROUP_VERSION, KIND, PLURAL, false),
  secret: type('v1', 'Secret', 'secrets', true),
  serviceAccount: type('v1', 'ServiceAccount', 'serviceaccounts', true),
  service: type('v1', 'Service', 'services', true),
  configMap: type('v1', 'ConfigMap', 'configmaps', true),
  persistentVolume: type('v1', 'PersistentVolume', 'persistentvolumes', false),
  role: type('rbac.authorization.k8s.io/v1', 'Role', 'roles', true),
  roleBinding: type('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings', true),
  clusterRole: type('rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false),
  clusterRoleBinding: type('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings', false),
  csiDriver: type('storage.k8s.io/v1', 'CSIDriver', 'csidrivers', false),
  deployment: type('apps/v1', 'Deployment', 'deployments', true),
  daemonSet: type('apps/v1', 'DaemonSet', 'daemonsets', true),
  statefulSet: type('apps/v1', 'StatefulSet', 'statefulsets', true),
  podDisruptionBudget: type('policy/v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true),
  /** Read only: names and labels, for the nodes a deployment is kept off (plan/pmem-overlap.ts). */
  node: type('v1', 'Node', 'nodes', false),
  /** external-provisioner's leader-election Leases (read only: status.driverComponents[].active). */
  lease: type('coordination.k8s.io/v1', 'Lease', 'leases', true),
  mutatingWebhookConfiguration: type(
    'admissionregistration.k8s.io/v1',
    'MutatingWebhookConfiguration',
    'mutatingwebhookconfigurations',
    false,
  ),
} as const satisfies Record<string, ResourceType>;

/** "apiVersion/kind", the key of a type in maps. */
export function typeKey(t: { readonly apiVersion: string; readonly kind: string }): string {
  return `${t.apiVersion}/${t.kind}`;
}
