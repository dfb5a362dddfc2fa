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

/** The sidecars of the controller pods that hold a Kubernetes token, each with its own RBAC objects. */
type Sidecar = 'provisioner' | 'resizer';
const SIDECAR_RULES: Readonly<
  Record<Sidecar, { cluster: readonly V1PolicyRule[]; namespace: readonly V1PolicyRule[] }>
> = {
  provisioner: { cluster: PROVISIONER_CLUSTER_RULES, namespace: PROVISIONER_NAMESPACE_RULES },
  resizer: { cluster: RESIZER_CLUSTER_RULES, namespace: RESIZER_NAMESPACE_RULES },
};

function sidecarClusterRole(s: Sidecar, cr: OwnerDeployment, ctx: BuildContext): Built<V1ClusterRole> {
  const name = deploymentObjectNames(cr.metadata.name)[`${s}ClusterRole`];
  return {
    apiVersion: RESOURCES.clusterRole.apiVersion,
    kind: RESOURCES.clusterRole.kind,
    metadata: objectMeta(cr, ctx, { name, namespaced: false, component: 'controller' }),
    rules: rules(SIDECAR_RULES[s].cluster),
  };
}

function sidecarClusterRoleBinding(s: Sidecar, cr: OwnerDeployment, ctx: BuildContext): Built<V1ClusterRoleBinding> {
  const names = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.clusterRoleBinding.apiVersion,
    kind: RESOURCES.clusterRoleBinding.kind,
    metadata: objectMeta(cr, ctx, {
      name: names[`${s}ClusterRoleBinding`],
      namespaced: false,
      component: 'controller',
    }),
    subjects: [controllerSubject(cr, ctx)],
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: names[`${s}ClusterRole`] },
  };
}

function sidecarRole(s: Sidecar, cr: OwnerDeployment, ctx: BuildContext): Built<V1Role> {
  const name = deploymentObjectNames(cr.metadata.name)[`${s}Role`];
  return {
    apiVersion: RESOURCES.role.apiVersion,
    kind: RESOURCES.role.kind,
    metadata: objectMeta(cr, ctx, { name, namespaced: true, component: 'controller' }),
    rules: rules(SIDECAR_RULES[s].namespace),
  };
}

function sidecarRoleBinding(s: Sidecar, cr: OwnerDeployment, ctx: BuildContext): Built<V1RoleBinding> {
  const names = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.roleBinding.apiVersion,
    kind: RESOURCES.roleBinding.kind,
    metadata: objectMeta(cr, ctx, { name: names[`${s}RoleBinding`], namespaced: true, component: 'controller' }),
    subjects: [controllerSubject(cr, ctx)],
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: names[`${s}Role`] },
  };
}

export const buildProvisionerClusterRole = (cr: OwnerDeployment, ctx: BuildContext): Built<V1ClusterRole> =>
  sidecarClusterRole('provisioner', cr, ctx);
export const buildProvisionerClusterRoleBinding = (
  cr: OwnerDeployment,
  ctx: BuildContext,
): Built<V1ClusterRoleBinding> => sidecarClusterRoleBinding('provisioner', cr, ctx);
export const buildProvisionerRole = (cr: OwnerDeployment, ctx: BuildContext): Built<V1Role> =>
  sidecarRole('provisioner', cr, ctx);
export const buildProvisionerRoleBinding = (cr: OwnerDeployment, ctx: BuildContext): Built<V1RoleBinding> =>
  sidecarRoleBinding('provisioner', cr, ctx);
export const buildResizerClusterRole = (cr: OwnerDeployment, ctx: BuildContext): Built<V1ClusterRole> =>
  sidecarClusterRole('resizer', cr, ctx);
export const buildResizerClusterRoleBinding = (cr: OwnerDeployment, ctx: BuildContext): Built<V1ClusterRoleBinding> =>
  sidecarClusterRoleBinding('resizer', cr, ctx);
export const buildResizerRole = (cr: OwnerDeployment, ctx: BuildContext): Built<V1Role> =>
  sidecarRole('resizer', cr, ctx);
export const buildResizerRoleBinding = (cr: OwnerDeployment, ctx: BuildContext): Built<V1RoleBinding> =>
  sidecarRoleBinding('resizer', cr, ctx);

/** The driver needs no Kubernetes API access: not built. */
export const buildDriverClusterRole = (): null => null;
export const buildDriverClusterRoleBinding = (): null => null;
