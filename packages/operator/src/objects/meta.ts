// Metadata shared by every built object: name, namespace, labels (ours win over spec.labels), the
// owner reference to the cluster-scoped CR, and the operator version that built it. The owner is
// the CR and never the operator's own Deployment or namespace, so that removing the operator
// leaves every driver running (the Go operator's drivers died with its namespace).
import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import { API_GROUP_VERSION, KIND, objectLabels, type DriverComponentLabel } from '@pmem-csi/api';
import { OPERATOR_VERSION_ANNOTATION } from '@pmem-csi/api';
import type { BuildContext, OwnerDeployment } from './context.js';

export function ownerReference(cr: OwnerDeployment): V1OwnerReference {
  return {
    apiVersion: API_GROUP_VERSION,
    kind: KIND,
    name: cr.metadata.name,
    uid: cr.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export interface MetaOptions {
  readonly name: string;
  readonly namespaced: boolean;
  readonly component?: DriverComponentLabel;
  readonly annotations?: Readonly<Record<string, string>>;
}

export function objectMeta(
  cr: OwnerDeployment,
  ctx: BuildContext,
  options: MetaOptions,
): V1ObjectMeta & { name: string } {
  return {
    name: options.name,
    ...(options.namespaced ? { namespace: ctx.namespace } : {}),
    labels: objectLabels(cr.metadata.name, options.component, ctx.spec.labels),
    annotations: { ...options.annotations, [OPERATOR_VERSION_ANNOTATION]: ctx.operatorVersion },
    ownerReferences: [ownerReference(cr)],
  };
}
