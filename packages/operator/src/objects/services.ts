// Services of the controller pods: the registry (mutual TLS on REGISTRY_PORT), which every node
// driver dials by DNS name, and the metrics endpoint for Prometheus.
import type { V1Service } from '@kubernetes/client-node';
import { METRICS_PORT, REGISTRY_PORT, deploymentObjectNames, selectorLabels } from '@pmem-csi/api';
import { RESOURCES } from '../kube/resources.js';
import type { Built, BuildContext, OwnerDeployment } from './context.js';
import { objectMeta } from './meta.js';

export const REGISTRY_PORT_NAME = 'registry';
export const METRICS_PORT_NAME = 'metrics';

function service(
  cr: OwnerDeployment,
  ctx: BuildContext,
  name: string,
  port: { name: string; number: number },
): Built<V1Service> {
  return {
    apiVersion: RESOURCES.service.apiVersion,
    kind: RESOURCES.service.kind,
    metadata: objectMeta(cr, ctx, { name, namespaced: true, component: 'controller' }),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(cr.metadata.name, 'controller'),
      ports: [{ name: port.name, port: port.number, targetPort: port.name, protocol: 'TCP' }],
    },
  };
}

export function buildRegistryService(cr: OwnerDeployment, ctx: BuildContext): Built<V1Service> {
  return service(cr, ctx, deploymentObjectNames(cr.metadata.name).registryService, {
    name: REGISTRY_PORT_NAME,
    number: REGISTRY_PORT,
  });
}

export function buildMetricsService(cr: OwnerDeployment, ctx: BuildContext): Built<V1Service> {
  return service(cr, ctx, deploymentObjectNames(cr.metadata.name).metricsService, {
    name: METRICS_PORT_NAME,
    number: METRICS_PORT,
  });
}
