// The CSIDriver object: how kubelet and the scheduler treat volumes of this driver.
// - attachRequired false: there is no ControllerPublish (PMEM is local to the node).
// - podInfoOnMount true: NodePublish gets the pod's name/namespace/uid (ephemeral volumes, logs).
// - Persistent + Ephemeral: PVC-backed volumes and CSI inline ephemeral volumes.
// - storageCapacity true: the controller answers GetCapacity per node (maximum volume size), the
//   external-provisioner publishes CSIStorageCapacity objects, and the scheduler places pods with
//   late-binding PVCs only on nodes that can still hold them (what users asked for instead of the
//   Go driver's scheduler extender).
import type { V1CSIDriver } from '@kubernetes/client-node';
import { deploymentObjectNames } from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import { RESOURCES } from '../kube/resources.js';
import type { Built, BuildContext, OwnerDeployment } from './context.js';
import { objectMeta } from './meta.js';

export function buildCsiDriver(cr: OwnerDeployment, ctx: BuildContext): Built<V1CSIDriver> {
  const { csiDriver } = deploymentObjectNames(cr.metadata.name);
  return {
    apiVersion: RESOURCES.csiDriver.apiVersion,
    kind: RESOURCES.csiDriver.kind,
    metadata: objectMeta(cr, ctx, { name: csiDriver, namespaced: false }),
    spec: {
      attachRequired: false,
      podInfoOnMount: true,
      volumeLifecycleModes: ['Persistent', 'Ephemeral'],
      storageCapacity: true,
    },
  };
}

/** attachRequired and volumeLifecycleModes are immutable: a CSIDriver that differs there is recreated. */
export function csiDriverMustRecreate(live: KubeObject, desired: KubeObject): boolean {
  const l = (live as V1CSIDriver).spec;
  const d = (desired as V1CSIDriver).spec;
  return (
    l?.attachRequired !== d?.attachRequired ||
    JSON.stringify(l?.volumeLifecycleModes ?? []) !== JSON.stringify(d?.volumeLifecycleModes ?? [])
  );
}
