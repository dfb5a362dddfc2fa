// The controller Deployment: pmem-csi-driver in controller mode (CSI controller on a unix socket +
// the registry on REGISTRY_PORT with mutual TLS) and two sidecars on the same socket,
// external-provisioner (CreateVolume/DeleteVolume, capacity) and external-resizer
// (ControllerExpandVolume when a claim asks for more). Only the sidecars hold a Kubernetes token
// (projected into each of them alone); the driver container has none. The driver's arguments are
// rendered from its flag schema (@pmem-csi/csi).
// spec.controllerReplicas pods (1 to 5): every node registers with each, and each sidecar's leader
// election (one Lease per sidecar) picks the replica that provisions and the one that resizes;
// rollout strategy, anti-affinity, leader-election timings and the disruption budget are in
// controller-ha.ts.
// Neither sidecar serves metrics (no --http-endpoint): the driver's own endpoint counts every CSI
// call the sidecars make, and the metrics Service exposes only that one.
import type {
  V1Container,
  V1Deployment,
  V1EnvVar,
  V1PodTemplateSpec,
  V1ResourceRequirements,
  V1Volume,
} from '@kubernetes/client-node';
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
  driverRuntimeEnv,
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
/**
 * How long the resizer waits for ControllerExpandVolume. lvextend itself is quick, but a node runs
 * its LVM and ndctl calls one at a time, so a growth may queue behind a create that erases a large
 * volume: the provisioner's bound. Set explicitly, --timeout is also external-resizer's per-call
 * limit (it overrides --resize-timeout, default 10 s).
 */
export const RESIZER_TIMEOUT = PROVISIONER_TIMEOUT;
/**
 * Cap of the sidecars' retry back-off (their default: 5 min). The controller answers UNAVAILABLE
 * until its start-up settle period ends (1.5 leases plus a renewal interval of the longest lease,
 * 75 s by default); with the default cap, a claim made right after an install or a controller
 * restart was retried only after 64-128 s of back-off more; capped at 30 s it is served within 30 s
 * of the settle.
 */
const RETRY_INTERVAL_MAX = '30s';

function driverContainer(cr: OwnerDeployment, ctx: BuildContext): V1Container {
  const env = driverRuntimeEnv('controller');
  return {
    name: CONTAINER_NAMES.driver,
    ...driverContainerBase(ctx),
    args: renderDriverArgs({
      mode: 'controller',
      ...commonDriverConfig(ctx, cr.metadata.name, `unix://${SOCKET_PATH}`),
      registryListen: `0.0.0.0:${REGISTRY_PORT}`,
      metricsListen: `0.0.0.0:${METRICS_PORT}`,
    }),
    ...(env.length > 0 ? { env } : {}),
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
    `--retry-interval-max=${RETRY_INTERVAL_MAX}`,
    ...provisionerClientLimitArgs(),
  ];
}

/**
 * external-resizer flags: leader election like the provisioner's (same namespace and timings, its
 * own Lease), the same API client limits, and no pod informer.
 */
export function resizerArgs(ctx: BuildContext): string[] {
  return [
    `--csi-address=${SOCKET_PATH}`,
    `--v=${ctx.spec.logLevel}`,
    `--timeout=${RESIZER_TIMEOUT}`,
    ...leaderElectionArgs(ctx.namespace),
    // A growth request for a volume in use is no error here: lvm and emulated volumes grow online
    // (NodeExpandVolume grows the mounted filesystem), and direct mode refuses growth whether or
    // not a pod uses the volume. Off, external-resizer keeps no informer of every pod in the
    // cluster, which would cost memory and list/watch on pods.
    '--handle-volume-inuse-error=false',
    // Also the pause before a claim whose growth failed with OUT_OF_RANGE (a direct-mode volume,
    // not enough free PMEM on its node) is tried again: space may have been freed meanwhile.
    `--retry-interval-max=${RETRY_INTERVAL_MAX}`,
    // Only the holder of its Lease resizes, and a new holder starts with every claim that asked for
    // more while nobody led: the provisioner's reasoning and budget (controller-ha.ts).
    ...provisionerClientLimitArgs(),
  ];
}

interface Sidecar {
  readonly name: string;
  readonly image: string;
  readonly args: string[];
  readonly env?: V1EnvVar[];
  readonly resources: V1ResourceRequirements;
}

/** A sidecar on the driver's socket with its own projected Kubernetes token. */
function sidecarContainer(ctx: BuildContext, sidecar: Sidecar): V1Container {
  return {
    name: sidecar.name,
    image: sidecar.image,
    imagePullPolicy: ctx.spec.imagePullPolicy,
    terminationMessagePolicy: 'FallbackToLogsOnError',
    args: sidecar.args,
    ...(sidecar.env === undefined ? {} : { env: sidecar.env }),
    volumeMounts: [
      { name: SOCKET_VOLUME, mountPath: SOCKET_DIR },
      { name: TOKEN_VOLUME, mountPath: TOKEN_MOUNT_PATH, readOnly: true },
    ],
    resources: sidecar.resources,
    securityContext: restrictedContainer(),
  };
}

function provisionerContainer(ctx: BuildContext): V1Container {
  return sidecarContainer(ctx, {
    name: CONTAINER_NAMES.provisioner,
    image: ctx.spec.provisionerImage,
    args: provisionerArgs(ctx),
    // The namespace and pod name find the owner of the CSIStorageCapacity objects.
    env: [
      { name: 'NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
    ],
    resources: podResources(ctx.spec.provisionerResources),
  });
}

function resizerContainer(ctx: BuildContext): V1Container {
  return sidecarContainer(ctx, {
    name: CONTAINER_NAMES.resizer,
    image: ctx.spec.resizerImage,
    args: resizerArgs(ctx),
    resources: podResources(ctx.spec.resizerResources),
  });
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
      containers: [driverContainer(cr, ctx), provisionerContainer(ctx), resizerContainer(ctx)],
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
