// The controller Deployment: pmem-csi-driver in controller mode (CSI controller on a unix socket +
// the registry on REGISTRY_PORT with mutual TLS) and the external-provisioner sidecar on the same
// socket. Only the sidecar holds a Kubernetes token (projected into that container alone); the
// driver container has none. The driver's arguments are rendered from its flag schema (@pmem-csi/csi).
// spec.controllerReplicas pods (1 to 5): every node registers with each, and the sidecars' leader
// election picks the one that provisions; rollout strategy, anti-affinity, leader-election timings
// and the disruption budget are in controller-ha.ts.
import type { V1Container, V1Deployment, V1PodTemplateSpec, V1Volume } from '@kubernetes/client-node';
import { METRICS_PORT, REGISTRY_PORT, deploymentObjectNames, selectorLabels } from '@pmem-csi/api';
import { CONTAINER_NAMES } from '@pmem-csi/api';
import { renderDriverArgs } from '@pmem-csi/csi';
import { RESOURCES } from '../kube/resources.js';
import type { Built, BuildContext, OwnerDeployment } from './context.js';
import {
  controllerAffinity,
  controllerMinReadySeconds,
  controllerStrategy,
  leaderElectionArgs,
  provisionerClientLimitArgs,
} from './controller-ha.js';
import { objectMeta } from './meta.js';
import {
  restrictedContainer,
  certsMount,
  certsVolume,
  commonDriverConfig,
  driverContainerBase,
  podResources,
  withConfigHash,
} from './pod-common.js';
import { METRICS_PORT_NAME, REGISTRY_PORT_NAME } from './services.js';

const SOCKET_VOLUME = 'socket-dir';
const SOCKET_DIR = '/csi';
const SOCKET_PATH = `${SOCKET_DIR}/csi.sock`;
const TOKEN_VOLUME = 'kube-api-access';
const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** How long the provisioner waits for CreateVolume/DeleteVolume (lvcreate + erase can take a while). */
export const PROVISIONER_TIMEOUT = '5m';

function driverContainer(cr: OwnerDeployment, ctx: BuildContext): V1Container {
  return {
    name: CONTAINER_NAMES.driver,
    ...driverContainerBase(ctx),
    args: renderDriverArgs({
      mode: 'controller',
      ...commonDriverConfig(ctx, cr.metadata.name, `unix://${SOCKET_PATH}`),
      registryListen: `0.0.0.0:${REGISTRY_PORT}`,
      metricsListen: `0.0.0.0:${METRICS_PORT}`,
    }),
    ports: [
      { name: REGISTRY_PORT_NAME, containerPort: REGISTRY_PORT, protocol: 'TCP' },
      { name: METRICS_PORT_NAME, containerPort: METRICS_PORT, protocol: 'TCP' },
    ],
    volumeMounts: [{ name: SOCKET_VOLUME, mountPath: SOCKET_DIR }, certsMount],
    resources: podResources(ctx.spec.controllerDriverResources),
    securityContext: restrictedContainer(),
    // The driver's HTTP endpoint (status-http.ts) answers /readyz and /healthz once both servers run.
    readinessProbe: { httpGet: { path: '/readyz', port: METRICS_PORT_NAME }, periodSeconds: 5, failureThreshold: 3 },
    livenessProbe: {
      httpGet: { path: '/healthz', port: METRICS_PORT_NAME },
      initialDelaySeconds: 10,
      periodSeconds: 10,
      failureThreshold: 6,
    },
  };
}

/** external-provisioner flags: topology per node, late binding only, capacity tracking, leader election. */
export function provisionerArgs(ctx: BuildContext): string[] {
  return [
    `--csi-address=${SOCKET_PATH}`,
    `--v=${ctx.spec.logLevel}`,
    '--strict-topology=true',
    '--immediate-topology=false',
    `--timeout=${PROVISIONER_TIMEOUT}`,
    ...leaderElectionArgs(ctx.namespace),
    '--extra-create-metadata=true',
    '--enable-capacity=true',
    // Pod -> ReplicaSet -> Deployment: capacity objects survive controller rollouts.
    '--capacity-ownerref-level=2',
    // The controller answers UNAVAILABLE until its start-up settle period ends (1.5 leases plus a
    // renewal interval of the longest lease, 75 s by default). With the sidecar's default cap of
    // 5 min, a claim made right after an install or a controller restart was retried only after
    // 64-128 s of back-off more; capped at 30 s it is provisioned within 30 s of the settle.
    '--retry-interval-max=30s',
    ...provisionerClientLimitArgs(),
  ];
}

function provisionerContainer(ctx: BuildContext): V1Container {
  return {
    name: CONTAINER_NAMES.provisioner,
    image: ctx.spec.provisionerImage,
    imagePullPolicy: ctx.spec.imagePullPolicy,
    terminationMessagePolicy: 'FallbackToLogsOnError',
    args: provisionerArgs(ctx),
    env: [
      { name: 'NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
    ],
    volumeMounts: [
      { name: SOCKET_VOLUME, mountPath: SOCKET_DIR },
      { name: TOKEN_VOLUME, mountPath: TOKEN_MOUNT_PATH, readOnly: true },
    ],
    resources: podResources(ctx.spec.provisionerResources),
    securityContext: restrictedContainer(),
  };
}

/** What automountServiceAccountToken would add, for one container only. */
function tokenVolume(): V1Volume {
  return {
    name: TOKEN_VOLUME,
    projected: {
      defaultMode: 0o444,
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
    },
  };
}

function podTemplate(cr: OwnerDeployment, ctx: BuildContext): V1PodTemplateSpec {
  const names = deploymentObjectNames(cr.metadata.name);
  const template: V1PodTemplateSpec = {
    metadata: { labels: { ...ctx.spec.labels, ...selectorLabels(cr.metadata.name, 'controller') } },
    spec: {
      serviceAccountName: names.controllerServiceAccount,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      affinity: controllerAffinity(cr.metadata.name),
      containers: [driverContainer(cr, ctx), provisionerContainer(ctx)],
      volumes: [{ name: SOCKET_VOLUME, emptyDir: {} }, certsVolume(names.registrySecret), tokenVolume()],
    },
  };
  return withConfigHash(template, ctx.certs.registry);
}

export function buildControllerDeployment(cr: OwnerDeployment, ctx: BuildContext): Built<V1Deployment> {
  const name = deploymentObjectNames(cr.metadata.name).controllerDeployment;
  return {
    apiVersion: RESOURCES.deployment.apiVersion,
    kind: RESOURCES.deployment.kind,
    metadata: objectMeta(cr, ctx, { name, namespaced: true, component: 'controller' }),
    spec: {
      replicas: ctx.spec.controllerReplicas,
      strategy: controllerStrategy(ctx.spec.controllerReplicas),
      ...controllerMinReadySeconds(ctx.spec.controllerReplicas),
      selector: { matchLabels: selectorLabels(cr.metadata.name, 'controller') },
      template: podTemplate(cr, ctx),
    },
  };
}
