// The registry of builders, in apply order: certificates first (pods must find their Secrets),
// then identities and permissions, Services, the CSIDriver, the workloads, and the controller's
// disruption budget (two or more replicas) last. The operator
// applies what the builders return and deletes objects of kinds in EVER_CREATED_KINDS that it built
// earlier but that no builder wants any more (see plan/object-plan.ts).
import type { KubeObject } from '../kube/kube-port.js';
import { RESOURCES } from '../kube/resources.js';
import type { BuildContext, ObjectBuilder, OwnerDeployment } from './context.js';
import { buildControllerDeployment } from './controller.js';
import { buildControllerDisruptionBudget, strategyPrepatch } from './controller-ha.js';
import { buildCsiDriver, csiDriverMustRecreate } from './csi-driver.js';
import { buildNodeDaemonSet } from './node.js';
import { selectorMustRecreate } from './pod-common.js';
import {
  buildDriverClusterRole,
  buildDriverClusterRoleBinding,
  buildProvisionerClusterRole,
  buildProvisionerClusterRoleBinding,
  buildProvisionerRole,
  buildProvisionerRoleBinding,
  buildResizerClusterRole,
  buildResizerClusterRoleBinding,
  buildResizerRole,
  buildResizerRoleBinding,
} from './rbac.js';
import { buildCaSecret, buildNodeSecret, buildRegistrySecret, secretMustRecreate } from './secrets.js';
import { buildControllerServiceAccount, buildNodeServiceAccount } from './service-accounts.js';
import { buildMetricsService, buildRegistryService, clusterIpMustRecreate, typeMustRecreate } from './services.js';

export const BUILDERS: readonly ObjectBuilder[] = [
  { ...RESOURCES.secret, id: 'ca-secret', build: buildCaSecret, mustRecreate: secretMustRecreate },
  { ...RESOURCES.secret, id: 'registry-secret', build: buildRegistrySecret, mustRecreate: secretMustRecreate },
  { ...RESOURCES.secret, id: 'node-secret', build: buildNodeSecret, mustRecreate: secretMustRecreate },
  { ...RESOURCES.serviceAccount, id: 'controller-service-account', build: buildControllerServiceAccount },
  { ...RESOURCES.serviceAccount, id: 'node-service-account', build: buildNodeServiceAccount },
  { ...RESOURCES.clusterRole, id: 'provisioner-cluster-role', build: buildProvisionerClusterRole },
  {
    ...RESOURCES.clusterRoleBinding,
    id: 'provisioner-cluster-role-binding',
    build: buildProvisionerClusterRoleBinding,
  },
  { ...RESOURCES.role, id: 'provisioner-role', build: buildProvisionerRole },
  { ...RESOURCES.roleBinding, id: 'provisioner-role-binding', build: buildProvisionerRoleBinding },
  { ...RESOURCES.clusterRole, id: 'resizer-cluster-role', build: buildResizerClusterRole },
  { ...RESOURCES.clusterRoleBinding, id: 'resizer-cluster-role-binding', build: buildResizerClusterRoleBinding },
  { ...RESOURCES.role, id: 'resizer-role', build: buildResizerRole },
  { ...RESOURCES.roleBinding, id: 'resizer-role-binding', build: buildResizerRoleBinding },
  { ...RESOURCES.clusterRole, id: 'driver-cluster-role', build: buildDriverClusterRole },
  { ...RESOURCES.clusterRoleBinding, id: 'driver-cluster-role-binding', build: buildDriverClusterRoleBinding },
  { ...RESOURCES.service, id: 'registry-service', build: buildRegistryService, mustRecreate: clusterIpMustRecreate },
  { ...RESOURCES.service, id: 'metrics-service', build: buildMetricsService, mustRecreate: typeMustRecreate },
  { ...RESOURCES.csiDriver, id: 'csi-driver', build: buildCsiDriver, mustRecreate: csiDriverMustRecreate },
  {
    ...RESOURCES.deployment,
    id: 'controller-deployment',
    build: buildControllerDeployment,
    mustRecreate: selectorMustRecreate,
    prepatch: strategyPrepatch,
  },
  {
    ...RESOURCES.daemonSet,
    id: 'node-daemonset',
    build: buildNodeDaemonSet,
    mustRecreate: selectorMustRecreate,
    recreateAfterPodsGone: true,
  },
  // After the Deployment: the budget selects its pods.
  {
    ...RESOURCES.podDisruptionBudget,
    id: 'controller-disruption-budget',
    build: buildControllerDisruptionBudget,
  },
];

/** One wanted object with the builder that made it. */
export interface DesiredObject {
  readonly builder: ObjectBuilder;
  readonly object: KubeObject;
}

/** Every object the CR wants, in apply order (builders returning null are skipped). */
export function buildDesiredObjects(
  cr: OwnerDeployment,
  ctx: BuildContext,
  builders: readonly ObjectBuilder[] = BUILDERS,
): DesiredObject[] {
  return builders.flatMap((builder) => {
    const object = builder.build(cr, ctx);
    return object === null ? [] : [{ builder, object }];
  });
}
