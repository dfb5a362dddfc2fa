// Services of the controller pods: the registry (mutual TLS on REGISTRY_PORT), which every node
// driver dials by DNS name, and the metrics endpoint for Prometheus.
// The registry Service is headless (clusterIP None): its name resolves to the address of every
// controller pod, and each node driver registers with each of them (issue 17), so that every
// replica holds the whole node registry and a standby can provision the moment it gets the Lease.
// It also publishes pods that are not ready (yet): a starting replica collects registrations from
// the moment its registry listens, before its readiness probe first passes, so that its start-up
// settle period ends as early as it can; a node that dials a pod without a listening registry
// only retries.
// A ClusterIP Service of that name (operators before issue 17) cannot be made headless in place
// (spec.clusterIP is immutable): it is deleted and created again, and the nodes reconnect by name.
import type { V1Service, V1ServiceSpec } from '@kubernetes/client-node';
import { METRICS_PORT, REGISTRY_PORT, deploymentObjectNames, selectorLabels } from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import { RESOURCES } from '../kube/resources.js';
import type { Built, BuildContext, OwnerDeployment } from './context.js';
import { objectMeta } from './meta.js';

export const REGISTRY_PORT_NAME = 'registry';
export const METRICS_PORT_NAME = 'metrics';

interface ServiceShape {
  readonly port: { readonly name: string; readonly number: number };
  readonly headless?: boolean;
}

function service(cr: OwnerDeployment, ctx: BuildContext, name: string, shape: ServiceShape): Built<V1Service> {
  const { port } = shape;
  return {
    apiVersion: RESOURCES.service.apiVersion,
    kind: RESOURCES.service.kind,
    metadata: objectMeta(cr, ctx, { name, namespaced: true, component: 'controller' }),
    spec: {
      type: 'ClusterIP',
      ...(shape.headless === true ? { clusterIP: 'None', publishNotReadyAddresses: true } : {}),
      selector: selectorLabels(cr.metadata.name, 'controller'),
      ports: [{ name: port.name, port: port.number, targetPort: port.name, protocol: 'TCP' }],
    },
  };
}

export function buildRegistryService(cr: OwnerDeployment, ctx: BuildContext): Built<V1Service> {
  return service(cr, ctx, deploymentObjectNames(cr.metadata.name).registryService, {
    port: { name: REGISTRY_PORT_NAME, number: REGISTRY_PORT },
    headless: true,
  });
}

export function buildMetricsService(cr: OwnerDeployment, ctx: BuildContext): Built<V1Service> {
  return service(cr, ctx, deploymentObjectNames(cr.metadata.name).metricsService, {
    port: { name: METRICS_PORT_NAME, number: METRICS_PORT },
  });
}

const clusterIpOf = (o: KubeObject): string | undefined => (o as { spec?: V1ServiceSpec }).spec?.clusterIP;

/** True when the desired Service fixes a clusterIP (None: headless) that the live one does not have. */
export function clusterIpMustRecreate(live: KubeObject, desired: KubeObject): boolean {
  const wanted = clusterIpOf(desired);
  return wanted !== undefined && clusterIpOf(live) !== wanted;
}

const typeOf = (o: KubeObject): string | undefined => (o as { spec?: V1ServiceSpec }).spec?.type;

/**
 * True when the live Service has another type than the desired one, e.g. the Go operator's
 * NodePort metrics Service: consulted only when the apiserver refuses the change in place.
 */
export function typeMustRecreate(live: KubeObject, desired: KubeObject): boolean {
  return typeOf(live) !== undefined && typeOf(live) !== (typeOf(desired) ?? 'ClusterIP');
}
