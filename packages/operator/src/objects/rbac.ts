// RBAC of the two sidecars of the controller pods, least privilege for what each does with this
// driver. Both are bound to the controller's ServiceAccount, in objects of their own, so that each
// rule set can be read against its sidecar's upstream deploy/kubernetes/rbac.yaml.
// external-provisioner:
// - cluster: PVs get/list/watch/create/delete and patch (finalizer removal, HonorPVReclaimPolicy);
//   PVCs get/list/watch/update (provisioning annotations); StorageClasses, CSINodes (topology) and
//   Nodes get/list/watch; Events create/update/patch.
//   Not granted: VolumeAttachments (only for drivers with ControllerPublish; attachRequired is
//   false), Secrets (no provisioner secrets), snapshots (no snapshot capability).
// - namespace: Leases for its leader election; CSIStorageCapacity objects (storageCapacity is
//   on) plus get on Pods and ReplicaSets to find the owning Deployment (--capacity-ownerref-level=2).
// external-resizer (v2.3.0's deploy/kubernetes/rbac.yaml, minus what our flags and driver never use):
// - cluster: PVs get/list/watch (informer) and patch (spec.capacity after ControllerExpandVolume);
//   PVCs get/list/watch (informer) and patch of their status (resize status, allocated resources,
//   capacity when no node expansion is needed); Events create/update/patch.
//   Not granted: Pods (its pod informer is only for --handle-volume-inuse-error, which we turn
//   off), list/watch of Events (upstream grants them; the event recorder only writes),
//   VolumeAttributesClasses (the modify controller runs only for drivers with MODIFY_VOLUME),
//   Secrets (no expansion secrets).
// - namespace: Leases for its leader election (a Lease of its own, resizerLeaseName in the api).
// The driver itself needs no Kubernetes permissions, so its ClusterRole/Binding are not built
// (null); objects of those names left by older versions are removed as obsolete.
import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1PolicyRule,
  V1Role,
  V1RoleBinding,
  RbacV1Subject,
} from '@kubernetes/client-node';
import { deploymentObjectNames } from '@pmem-csi/api';
import { RESOURCES } from '../kube/resources.js';
import type { Built, BuildContext, OwnerDeployment } from './context.js';
import { objectMeta } from './meta.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

export const PROVISIONER_CLUSTER_RULES: readonly V1PolicyRule[] = [
  { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch', 'update'] },
  { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['storage.k8s.io'], resources: ['csinodes'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'update', 'patch'] },
];

export const PROVISIONER_NAMESPACE_RULES: readonly V1PolicyRule[] = [
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
  },
  {
    apiGroups: ['storage.k8s.io'],
    resources: ['csistoragecapacities'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
  { apiGroups: ['apps'], resources: ['replicasets'], verbs: ['get'] },
];

export const RESIZER_CLUSTER_RULES: readonly V1PolicyRule[] = [
  { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'list', 'watch', 'patch'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['persistentvolumeclaims/status'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'update', 'patch'] },
];

export const RESIZER_NAMESPACE_RULES: readonly V1PolicyRule[] = [
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
  },
];

function controllerSubject(cr: OwnerDeployment, ctx: BuildContext): RbacV1Subject {
  return {
    kind: 'ServiceAccount',
    name: deploymentObjectNames(cr.metadata.name).controllerServiceAccount,
    namespace: ctx.namespace,
  };
}

const rules = (list: readonly V1PolicyRule[]): V1PolicyRule[] => list.map((r) => ({ ...r }));

export function buildProvisionerClusterRole(cr: OwnerDeployment, ctx: BuildContext): Built<V1ClusterRole> {
  const { provisionerClusterRole } = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.clusterRole.apiVersion,
    kind: RESOURCES.clusterRole.kind,
    metadata: objectMeta(cr, ctx, { name: provisionerClusterRole, namespaced: false, component: 'controller' }),
    rules: rules(PROVISIONER_CLUSTER_RULES),
  };
}

export function buildProvisionerClusterRoleBinding(
  cr: OwnerDeployment,
  ctx: BuildContext,
): Built<V1ClusterRoleBinding> {
  const names = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.clusterRoleBinding.apiVersion,
    kind: RESOURCES.clusterRoleBinding.kind,
    metadata: objectMeta(cr, ctx, {
      name: names.provisionerClusterRoleBinding,
      namespaced: false,
      component: 'controller',
    }),
    subjects: [controllerSubject(cr, ctx)],
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: names.provisionerClusterRole },
  };
}

export function buildProvisionerRole(cr: OwnerDeployment, ctx: BuildContext): Built<V1Role> {
  const { provisionerRole } = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.role.apiVersion,
    kind: RESOURCES.role.kind,
    metadata: objectMeta(cr, ctx, { name: provisionerRole, namespaced: true, component: 'controller' }),
    rules: rules(PROVISIONER_NAMESPACE_RULES),
  };
}

export function buildProvisionerRoleBinding(cr: OwnerDeployment, ctx: BuildContext): Built<V1RoleBinding> {
  const names = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.roleBinding.apiVersion,
    kind: RESOURCES.roleBinding.kind,
    metadata: objectMeta(cr, ctx, { name: names.provisionerRoleBinding, namespaced: true, component: 'controller' }),
    subjects: [controllerSubject(cr, ctx)],
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: names.provisionerRole },
  };
}

export function buildResizerClusterRole(cr: OwnerDeployment, ctx: BuildContext): Built<V1ClusterRole> {
  const { resizerClusterRole } = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.clusterRole.apiVersion,
    kind: RESOURCES.clusterRole.kind,
    metadata: objectMeta(cr, ctx, { name: resizerClusterRole, namespaced: false, component: 'controller' }),
    rules: rules(RESIZER_CLUSTER_RULES),
  };
}

export function buildResizerClusterRoleBinding(cr: OwnerDeployment, ctx: BuildContext): Built<V1ClusterRoleBinding> {
  const names = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.clusterRoleBinding.apiVersion,
    kind: RESOURCES.clusterRoleBinding.kind,
    metadata: objectMeta(cr, ctx, {
      name: names.resizerClusterRoleBinding,
      namespaced: false,
      component: 'controller',
    }),
    subjects: [controllerSubject(cr, ctx)],
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: names.resizerClusterRole },
  };
}

export function buildResizerRole(cr: OwnerDeployment, ctx: BuildContext): Built<V1Role> {
  const { resizerRole } = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.role.apiVersion,
    kind: RESOURCES.role.kind,
    metadata: objectMeta(cr, ctx, { name: resizerRole, namespaced: true, component: 'controller' }),
    rules: rules(RESIZER_NAMESPACE_RULES),
  };
}

export function buildResizerRoleBinding(cr: OwnerDeployment, ctx: BuildContext): Built<V1RoleBinding> {
  const names = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.roleBinding.apiVersion,
    kind: RESOURCES.roleBinding.kind,
    metadata: objectMeta(cr, ctx, { name: names.resizerRoleBinding, namespaced: true, component: 'controller' }),
    subjects: [controllerSubject(cr, ctx)],
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: names.resizerRole },
  };
}

/** The driver needs no Kubernetes API access: not built. */
export const buildDriverClusterRole = (): null => null;
export const buildDriverClusterRoleBinding = (): null => null;
