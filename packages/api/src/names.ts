// Every name that the driver, the operator and the tests derive from a PmemCSIDeployment: driver
// name, topology key, ports, TLS identities, Kubernetes object names, host paths and labels. No
// other package assembles such names, so that a rename happens here once and existing clusters'
// objects (named like the Go operator named them) stay recognisable.

import { API_GROUP } from './identity.js';

export const DEFAULT_DRIVER_NAME = 'pmem-csi.intel.com';
export const DEFAULT_KUBELET_DIR = '/var/lib/kubelet';

/** TCP port of the controller's registry service (mutual TLS). */
export const REGISTRY_PORT = 10000;
/** TCP port of each node's node-controller service (mutual TLS). */
export const NODE_CONTROLLER_PORT = 10001;
/** HTTP port of the Prometheus metrics endpoint of controller and node pods. */
export const METRICS_PORT = 10010;

/** SAN (and CN) of the registry's certificate; nodes accept no other server identity. */
export const REGISTRY_SAN = 'pmem-registry';
/** SAN (and CN) of the node-controller certificate; the controller accepts no other. */
export const NODE_CONTROLLER_SAN = 'pmem-node-controller';

/** Data keys of the registry, node and CA Secrets (the kubernetes.io/tls layout plus the CA). */
export const SECRET_KEYS = { caCert: 'ca.crt', cert: 'tls.crt', key: 'tls.key' } as const;

/** Field manager of the operator's server-side apply requests. */
export const FIELD_MANAGER = 'pmem-csi-operator';

/** Label keys the operator puts on every object; user labels (spec.labels) may not override them. */
export const LABEL_KEYS = {
  name: 'app.kubernetes.io/name',
  instance: 'app.kubernetes.io/instance',
  component: 'app.kubernetes.io/component',
  partOf: 'app.kubernetes.io/part-of',
  managedBy: 'app.kubernetes.io/managed-by',
} as const;
export const APP_NAME = 'pmem-csi';
export type DriverComponentLabel = 'controller' | 'node';

/** Topology segment key of the driver's volumes: `{<driver>/node: <node name>}`. */
export function topologyKey(driverName: string): string {
  return `${driverName}/node`;
}

/**
 * Prefix of every object name: the CR name with '.' replaced by '-', because Service names must
 * be DNS labels (the Go operator did the same, so objects keep their names across the rewrite).
 */
export function objectNamePrefix(crName: string): string {
  return crName.replaceAll('.', '-');
}

/**
 * True when two different CRs would get the same object names. That is exactly when their prefixes
 * are equal: no name suffix below ends another one ("-node" and "-node-secrets" differ in their
 * last word), so different prefixes never meet in one name (names.test.ts checks every pair).
 * The CSIDriver is named after the CR itself and never collides.
 */
export function objectNamesCollide(crName: string, otherCrName: string): boolean {
  return crName !== otherCrName && objectNamePrefix(crName) === objectNamePrefix(otherCrName);
}

/**
 * Which of several PmemCSIDeployments with colliding object names keeps them, in the words the
 * operator's Conflict message, the CRD description and the README use. Both keys are stored by the
 * API server and never change, so every operator replica, before and after a restart, picks the same
 * one. The timestamp has whole seconds, so CRs created within one second tie on it; the name breaks
 * the tie because colliding names differ only in '.' versus '-', and '-' (0x2d) sorts before '.'.
 */
export const OBJECT_NAME_OWNERSHIP_RULE =
  'the deployment with the earliest metadata.creationTimestamp keeps the object names; of deployments created in the same second ' +
  "(the timestamp has whole seconds) the one whose name sorts first, which is the one with '-' where the names first differ";
/** Names of all Kubernetes objects of one driver deployment (CR `crName`). */
export interface DeploymentObjectNames {
  /** CSI driver name = CSIDriver object name = the CR name. */
  readonly driverName: string;
  readonly csiDriver: string;
  /** Secret with the registry's ca.crt/tls.crt/tls.key (mounted by the controller). */
  readonly registrySecret: string;
  /** Secret with the node-controller's ca.crt/tls.crt/tls.key (mounted by the node pods). */
  readonly nodeSecret: string;
  /** Secret with the operator's CA certificate and key, kept so certificates can be renewed. */
  readonly caSecret: string;
  readonly controllerServiceAccount: string;
  readonly nodeServiceAccount: string;
  readonly controllerDeployment: string;
  readonly nodeDaemonSet: string;
  /** PodDisruptionBudget of the controller pods (only with two or more replicas). */
  readonly controllerDisruptionBudget: string;
  /**
   * Headless Service of the registry on REGISTRY_PORT: its DNS name resolves to every controller
   * pod, so that each node driver registers with every replica.
   */
  readonly registryService: string;
  readonly metricsService: string;
  /** external-provisioner: namespaced Role+RoleBinding (leases for leader election). */
  readonly provisionerRole: string;
  readonly provisionerRoleBinding: string;
  /** external-provisioner: ClusterRole+ClusterRoleBinding (PVs, PVCs, StorageClasses, CSINodes, ...). */
  readonly provisionerClusterRole: string;
  readonly provisionerClusterRoleBinding: string;
  /** external-resizer: namespaced Role+RoleBinding (leases for leader election). */
  readonly resizerRole: string;
  readonly resizerRoleBinding: string;
  /** external-resizer: ClusterRole+ClusterRoleBinding (PVs, PVCs and their status, events). */
  readonly resizerClusterRole: string;
  readonly resizerClusterRoleBinding: string;
  /** The driver's own cluster permissions (if any), bound to both service accounts. */
  readonly driverClusterRole: string;
  readonly driverClusterRoleBinding: string;
}

export function deploymentObjectNames(crName: string): DeploymentObjectNames {
  const p = objectNamePrefix(crName);
  return {
    driverName: crName,
    csiDriver: crName,
    registrySecret: `${p}-registry-secrets`,
    nodeSecret: `${p}-node-secrets`,
    caSecret: `${p}-ca`,
    controllerServiceAccount: `${p}-controller`,
    nodeServiceAccount: `${p}-node`,
    controllerDeployment: `${p}-controller`,
    nodeDaemonSet: `${p}-node`,
    controllerDisruptionBudget: `${p}-controller`,
    registryService: `${p}-controller`,
    metricsService: `${p}-metrics`,
    provisionerRole: `${p}-external-provisioner-cfg`,
    provisionerRoleBinding: `${p}-csi-provisioner-role-cfg`,
    provisionerClusterRole: `${p}-external-provisioner-runner`,
    provisionerClusterRoleBinding: `${p}-csi-provisioner-role`,
    // As external-resizer's deploy/kubernetes/rbac.yaml names them, after the prefix (like the
    // provisioner's above).
    resizerRole: `${p}-external-resizer-cfg`,
    resizerRoleBinding: `${p}-csi-resizer-role-cfg`,
    resizerClusterRole: `${p}-external-resizer-runner`,
    resizerClusterRoleBinding: `${p}-csi-resizer-role`,
    driverClusterRole: `${p}-driver-runner`,
    driverClusterRoleBinding: `${p}-driver-role`,
  };
}

/** Host paths of one driver on a node. */
export interface DriverHostPaths {
  /** Persistent node state (one record per volume): `/var/lib/<driver>`. */
  readonly stateDir: string;
  /** Directory of the CSI socket that the kubelet dials: `<kubeletDir>/plugins/<driver>`. */
  readonly pluginDir: string;
  readonly csiSocket: string;
  /** Where node-driver-registrar puts its registration socket: `<kubeletDir>/plugins_registry`. */
  readonly registrationDir: string;
  /** Pod volume mounts; mounted with Bidirectional propagation. */
  readonly podsDir: string;
  /** Staging paths of all CSI drivers; mounted with Bidirectional propagation. */
  readonly csiStagingDir: string;
}

export function driverHostPaths(driverName: string, kubeletDir: string = DEFAULT_KUBELET_DIR): DriverHostPaths {
  const kubelet = kubeletDir.replace(/\/+$/, '') || '/';
  const pluginDir = `${kubelet}/plugins/${driverName}`;
  return {
    stateDir: `/var/lib/${driverName}`,
    pluginDir,
    csiSocket: `${pluginDir}/csi.sock`,
    registrationDir: `${kubelet}/plugins_registry`,
    podsDir: `${kubelet}/pods`,
    csiStagingDir: `${kubelet}/plugins/kubernetes.io/csi`,
  };
}

/** DNS name under which nodes reach the registry (a Service in the operator's namespace). */
export function registryServiceHost(crName: string, namespace: string): string {
  return `${deploymentObjectNames(crName).registryService}.${namespace}.svc`;
}

/**
 * Name of the Lease of external-provisioner's leader election between the controller replicas, in
 * the operator's namespace. The sidecar names it after the driver with '/' replaced by '-', and its
 * leader-election library then replaces every character other than a letter, digit or '-' by '-'
 * (and appends 'X' to a name ending in '-'). Driver names here are DNS subdomains, so that is the
 * object name prefix.
 */
export function provisionerLeaseName(driverName: string): string {
  return leaseObjectName(driverName.replaceAll('/', '-'));
}

/** What external-resizer puts before the sanitized driver name in its Lease name. */
export const RESIZER_LEASE_PREFIX = 'external-resizer-';

/**
 * Name of the Lease of external-resizer's leader election between the controller replicas, in the
 * operator's namespace: "external-resizer-" and the driver name sanitized as above (external-resizer
 * v2.3.0 cmd/csi-resizer/main.go, util.SanitizeName, then the leader-election library's own pass,
 * which changes nothing more). It is a Lease of its own: the replica that resizes need not be the
 * one that provisions.
 */
export function resizerLeaseName(driverName: string): string {
  return leaseObjectName(`${RESIZER_LEASE_PREFIX}${leaseObjectName(driverName)}`);
}

// csi-lib-utils' sanitizeName: every character other than a letter, digit or '-' becomes '-', and
// a name ending in '-' gets an 'X'.
function leaseObjectName(name: string): string {
  const sanitized = name.replace(/[^a-zA-Z0-9-]/g, '-');
  return sanitized.endsWith('-') ? `${sanitized}X` : sanitized;
}

/** The labels the operator puts on one component's objects and uses as its pod selector. */
export function selectorLabels(crName: string, component: DriverComponentLabel): Record<string, string> {
  return {
    [LABEL_KEYS.name]: APP_NAME,
    [LABEL_KEYS.instance]: crName,
    [LABEL_KEYS.component]: component,
  };
}

/** All labels the operator sets on its objects: user labels first, so ours win on conflicts. */
export function objectLabels(
  crName: string,
  component: DriverComponentLabel | undefined,
  userLabels: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    ...userLabels,
    [LABEL_KEYS.name]: APP_NAME,
    [LABEL_KEYS.instance]: crName,
    ...(component === undefined ? {} : { [LABEL_KEYS.component]: component }),
    [LABEL_KEYS.partOf]: APP_NAME,
    [LABEL_KEYS.managedBy]: FIELD_MANAGER,
  };
}

// Operator bookkeeping: annotations, leader-election Lease, events, container names and mounts.

/** annotation on every built object with the operator version that built it. */
export const OPERATOR_VERSION_ANNOTATION = `${API_GROUP}/operator-version`;

/** pod-template annotation, hash of the template's inputs (spec + certificate fingerprints). */
export const CONFIG_HASH_ANNOTATION = `${API_GROUP}/config-hash`;

/** annotation on the node DaemonSet recording the device mode it runs with. */
export const DEVICE_MODE_ANNOTATION = `${API_GROUP}/device-mode`;

/** Lease (in the operator's namespace) for leader election between operator replicas. */
export const OPERATOR_LEASE_NAME = 'pmem-csi-operator';

/**
 * namespace of the core/v1 Events about the cluster-scoped PmemCSIDeployment.
 * Kubernetes' own event recorder files events of cluster-scoped objects under "default".
 */
export const CLUSTER_EVENT_NAMESPACE = 'default';

/** reporting component of the operator's Events. */
export const EVENT_SOURCE_COMPONENT = 'pmem-csi-operator';

/** container names inside the driver pods (stable: logs and probes refer to them). */
export const CONTAINER_NAMES = {
  driver: 'pmem-driver',
  provisioner: 'external-provisioner',
  registrar: 'driver-registrar',
  resizer: 'external-resizer',
} as const;

/** where the driver containers mount their TLS Secret. */
export const CERTS_MOUNT_PATH = '/certs';

/** HTTP health port of node-driver-registrar (`--http-endpoint`). */
export const REGISTRAR_HEALTH_PORT = 9809;
