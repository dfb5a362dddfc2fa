// The node DaemonSet: pmem-csi-driver in node mode (CSI node service on the kubelet's plugin
// socket, node-controller service with mutual TLS on NODE_CONTROLLER_PORT) and the
// node-driver-registrar sidecar that registers the socket with the kubelet.
// The driver container is privileged: it manages PMEM devices (/dev, /sys) and mounts volumes
// into pods, which needs Bidirectional mount propagation on the pods and staging directories;
// those are mounted at their host paths because kubelet passes host paths in NodeStage/Publish.
// The driver's arguments are rendered from its flag schema (@pmem-csi/csi renderDriverArgs).
// Emulated device mode (NOT persistent memory): the driver keeps each volume as a sparse file in
// <state dir>/emulated (packages/node/src/device/factory.ts) attached to a loop device. The state
// dir is a hostPath at the same path, so the files are on the node's disk and survive pod restarts
// and driver upgrades; loop devices come from the host's /dev (mounted) and need privileged (set).
// One driver per node's PMEM (issue 32): a DaemonSet in lvm or direct mode is kept off the nodes of
// earlier PMEM-managing deployments by a required node affinity (plan/pmem-overlap.ts decides).
import type {
  V1Affinity,
  V1Container,
  V1DaemonSet,
  V1NodeSelectorTerm,
  V1PodTemplateSpec,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import {
  EMULATED_SIZE_ALLOWED,
  METRICS_PORT,
  NODE_CONTROLLER_PORT,
  REGISTRY_PORT,
  deploymentObjectNames,
  driverHostPaths,
  emulatedSizeBytes,
  registryServiceHost,
  selectorLabels,
} from '@pmem-csi/api';
import { CONTAINER_NAMES, DEVICE_MODE_ANNOTATION, REGISTRAR_HEALTH_PORT } from '@pmem-csi/api';
import { renderDriverArgs } from '@pmem-csi/csi';
import { RESOURCES } from '../kube/resources.js';
import type { Built, BuildContext, OwnerDeployment } from './context.js';
import { objectMeta } from './meta.js';
import { METRICS_PORT_NAME } from './services.js';
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

const NODE_CONTROLLER_PORT_NAME = 'node-controller';
const REGISTRAR_HEALTH_PORT_NAME = 'healthz';
const REGISTRAR_SOCKET_DIR = '/csi';
const REGISTRATION_DIR = '/registration';

const VOLUMES = {
  pluginDir: 'plugin-dir',
  registrationDir: 'registration-dir',
  podsDir: 'pods-dir',
  stagingDir: 'staging-dir',
  dev: 'dev-dir',
  sys: 'sys-dir',
  stateDir: 'state-dir',
} as const;

function hostPathVolume(name: string, path: string, type: 'Directory' | 'DirectoryOrCreate'): V1Volume {
  return { name, hostPath: { path, type } };
}

/** Bytes of spec.emulatedSize; the reconciler validated the spec, so a bad value here is a bug. */
function emulatedPoolBytes(size: number | string): number {
  const bytes = emulatedSizeBytes(size);
  if (bytes === undefined)
    throw new RangeError(
      `spec.emulatedSize: unsupported value ${JSON.stringify(size)}; allowed values: ${EMULATED_SIZE_ALLOWED}`,
    );
  return bytes;
}

function driverArgs(cr: OwnerDeployment, ctx: BuildContext): string[] {
  const paths = driverHostPaths(cr.metadata.name, ctx.spec.kubeletDir);
  return renderDriverArgs({
    mode: 'node',
    ...commonDriverConfig(ctx, cr.metadata.name, `unix://${paths.csiSocket}`),
    nodeId: '$(NODE_NAME)',
    deviceMode: ctx.spec.deviceMode,
    pmemPercentage: ctx.spec.pmemPercentage,
    // Only when set, so that DaemonSets of deployments that do not use it stay as they were.
    ...(ctx.spec.cxlRegions === 'assemble' ? { cxlRegions: ctx.spec.cxlRegions } : {}),
    // Only in emulated mode, so that lvm and direct DaemonSets (and their pods) stay as they were.
    ...(ctx.spec.deviceMode === 'emulated' ? { emulatedSize: emulatedPoolBytes(ctx.spec.emulatedSize) } : {}),
    stateDir: paths.stateDir,
    nodeControllerListen: `0.0.0.0:${NODE_CONTROLLER_PORT}`,
    advertisedEndpoint: `$(POD_IP):${NODE_CONTROLLER_PORT}`,
    registryEndpoint: `${registryServiceHost(cr.metadata.name, ctx.namespace)}:${REGISTRY_PORT}`,
    metricsListen: `0.0.0.0:${METRICS_PORT}`,
  });
}

function driverMounts(cr: OwnerDeployment, ctx: BuildContext): V1VolumeMount[] {
  const paths = driverHostPaths(cr.metadata.name, ctx.spec.kubeletDir);
  return [
    { name: VOLUMES.pluginDir, mountPath: paths.pluginDir },
    { name: VOLUMES.podsDir, mountPath: paths.podsDir, mountPropagation: 'Bidirectional' },
    { name: VOLUMES.stagingDir, mountPath: paths.csiStagingDir, mountPropagation: 'Bidirectional' },
    { name: VOLUMES.dev, mountPath: '/dev' },
    { name: VOLUMES.sys, mountPath: '/sys' },
    { name: VOLUMES.stateDir, mountPath: paths.stateDir },
    certsMount,
  ];
}

function driverContainer(cr: OwnerDeployment, ctx: BuildContext): V1Container {
  return {
    name: CONTAINER_NAMES.driver,
    ...driverContainerBase(ctx),
    args: driverArgs(cr, ctx),
    env: [
      { name: 'NODE_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
      ...driverRuntimeEnv('node'),
    ],
    ports: [
      { name: NODE_CONTROLLER_PORT_NAME, containerPort: NODE_CONTROLLER_PORT, protocol: 'TCP' },
      // /metrics and /status of this node (registration, capacity, volumes).
      { name: METRICS_PORT_NAME, containerPort: METRICS_PORT, protocol: 'TCP' },
    ],
    volumeMounts: driverMounts(cr, ctx),
    resources: podResources(ctx.spec.nodeDriverResources),
    securityContext: { privileged: true, runAsUser: 0 },
    readinessProbe: { tcpSocket: { port: NODE_CONTROLLER_PORT_NAME }, periodSeconds: 5, failureThreshold: 3 },
    // Generous: formatting or erasing a large volume must never get the driver killed.
    livenessProbe: {
      tcpSocket: { port: NODE_CONTROLLER_PORT_NAME },
      initialDelaySeconds: 10,
      periodSeconds: 20,
      failureThreshold: 9,
    },
  };
}

function registrarContainer(cr: OwnerDeployment, ctx: BuildContext): V1Container {
  const paths = driverHostPaths(cr.metadata.name, ctx.spec.kubeletDir);
  return {
    name: CONTAINER_NAMES.registrar,
    image: ctx.spec.nodeRegistrarImage,
    imagePullPolicy: ctx.spec.imagePullPolicy,
    terminationMessagePolicy: 'FallbackToLogsOnError',
    args: [
      `--v=${ctx.spec.logLevel}`,
      `--csi-address=${REGISTRAR_SOCKET_DIR}/csi.sock`,
      `--kubelet-registration-path=${paths.csiSocket}`,
      `--http-endpoint=:${REGISTRAR_HEALTH_PORT}`,
    ],
    ports: [{ name: REGISTRAR_HEALTH_PORT_NAME, containerPort: REGISTRAR_HEALTH_PORT, protocol: 'TCP' }],
    volumeMounts: [
      { name: VOLUMES.pluginDir, mountPath: REGISTRAR_SOCKET_DIR },
      { name: VOLUMES.registrationDir, mountPath: REGISTRATION_DIR },
    ],
    resources: podResources(ctx.spec.nodeRegistrarResources),
    securityContext: restrictedContainer(),
    // Fails when the kubelet lost the registration (e.g. after a kubelet restart): restart re-registers.
    livenessProbe: {
      httpGet: { path: '/healthz', port: REGISTRAR_HEALTH_PORT_NAME },
      initialDelaySeconds: 5,
      periodSeconds: 10,
      failureThreshold: 3,
    },
  };
}

function podVolumes(cr: OwnerDeployment, ctx: BuildContext): V1Volume[] {
  const paths = driverHostPaths(cr.metadata.name, ctx.spec.kubeletDir);
  return [
    hostPathVolume(VOLUMES.pluginDir, paths.pluginDir, 'DirectoryOrCreate'),
    hostPathVolume(VOLUMES.registrationDir, paths.registrationDir, 'Directory'),
    hostPathVolume(VOLUMES.podsDir, paths.podsDir, 'DirectoryOrCreate'),
    hostPathVolume(VOLUMES.stagingDir, paths.csiStagingDir, 'DirectoryOrCreate'),
    hostPathVolume(VOLUMES.dev, '/dev', 'Directory'),
    hostPathVolume(VOLUMES.sys, '/sys', 'Directory'),
    hostPathVolume(VOLUMES.stateDir, paths.stateDir, 'DirectoryOrCreate'),
    certsVolume(deploymentObjectNames(cr.metadata.name).nodeSecret),
  ];
}

/**
 * One driver per node's PMEM: the nodes of earlier PMEM-managing deployments are excluded by a
 * required node affinity (ANDed with the nodeSelector), which the DaemonSet controller applies to
 * every node, also to nodes labelled after the last reconcile. When the exclusion goes, the
 * template's config hash changes with it, so the plan applies the DaemonSet and server-side apply
 * removes the affinity it no longer sends.
 */
function exclusionAffinity(terms: readonly V1NodeSelectorTerm[]): V1Affinity {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: terms.map((t) => structuredClone(t)),
      },
    },
  };
}

function podTemplate(cr: OwnerDeployment, ctx: BuildContext): V1PodTemplateSpec {
  const template: V1PodTemplateSpec = {
    metadata: { labels: { ...ctx.spec.labels, ...selectorLabels(cr.metadata.name, 'node') } },
    spec: {
      serviceAccountName: deploymentObjectNames(cr.metadata.name).nodeServiceAccount,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      nodeSelector: { ...ctx.spec.nodeSelector },
      // Only with an exclusion, so that DaemonSets (and their pods) without one stay as they were.
      ...(ctx.nodeExclusion === undefined ? {} : { affinity: exclusionAffinity(ctx.nodeExclusion) }),
      containers: [driverContainer(cr, ctx), registrarContainer(cr, ctx)],
      volumes: podVolumes(cr, ctx),
    },
  };
  return withConfigHash(template, ctx.certs.node);
}

export function buildNodeDaemonSet(cr: OwnerDeployment, ctx: BuildContext): Built<V1DaemonSet> {
  const name = deploymentObjectNames(cr.metadata.name).nodeDaemonSet;
  return {
    apiVersion: RESOURCES.daemonSet.apiVersion,
    kind: RESOURCES.daemonSet.kind,
    metadata: objectMeta(cr, ctx, {
      name,
      namespaced: true,
      component: 'node',
      annotations: { [DEVICE_MODE_ANNOTATION]: ctx.spec.deviceMode },
    }),
    spec: {
      selector: { matchLabels: selectorLabels(cr.metadata.name, 'node') },
      // maxSurge 0: two driver pods on one node would fight over the kubelet socket and the devices.
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: ctx.spec.maxUnavailable, maxSurge: 0 },
      },
      template: podTemplate(cr, ctx),
    },
  };
}
