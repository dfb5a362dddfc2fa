// Service accounts of the controller and node pods. Neither pod mounts a token by default: only
// the external-provisioner container gets one (projected, see controller.ts), because the driver
// itself never talks to the Kubernetes API and should hold no credentials for it.
import type { V1ServiceAccount } from '@kubernetes/client-node';
import { deploymentObjectNames } from '@pmem-csi/api';
import { RESOURCES } from '../kube/resources.js';
import type { Built, BuildContext, OwnerDeployment } from './context.js';
import { objectMeta } from './meta.js';

function serviceAccount(
  cr: OwnerDeployment,
  ctx: BuildContext,
  component: 'controller' | 'node',
): Built<V1ServiceAccount> {
  const names = deploymentObjectNames(cr.metadata.name);
  const name = component === 'controller' ? names.controllerServiceAccount : names.nodeServiceAccount;
  return {
    apiVersion: RESOURCES.serviceAccount.apiVersion,
    kind: RESOURCES.serviceAccount.kind,
    metadata: objectMeta(cr, ctx, { name, namespaced: true, component }),
    automountServiceAccountToken: false,
  };
}

export const buildControllerServiceAccount = (cr: OwnerDeployment, ctx: BuildContext): Built<V1ServiceAccount> =>
  serviceAccount(cr, ctx, 'controller');
export const buildNodeServiceAccount = (cr: OwnerDeployment, ctx: BuildContext): Built<V1ServiceAccount> =>
  serviceAccount(cr, ctx, 'node');
