// Allowed values, ranges and fixed defaults of the PmemCSIDeployment API. The CRD schema, the
// validator and withDefaults() all read them from here, so that the apiserver, the operator and
// the generated types can never disagree about what a valid spec is.

/**
 * emulated mode only: the pool each node driver offers, a quantity (bytes). The lower bound is the
 * driver's (--emulated-size); the upper one keeps a typo (4Pi for 4Gi) from advertising capacity
 * the node's disk cannot hold: the pool is sparse files on that disk, allocated as volumes are written.
 */
export const EMULATED_SIZE_RANGE = { min: '64Mi', max: '1Ti', minBytes: 64 * 1024 ** 2, maxBytes: 1024 ** 4 } as const;
export const IMAGE_PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
export const LOG_FORMATS = ['text', 'json'] as const;
/** klog-style verbosity: 0 is errors and important events only, 5 debugging, 10 tracing. */
export const LOG_LEVEL_RANGE = { min: 0, max: 10 } as const;
export const PMEM_PERCENTAGE_RANGE = { min: 0, max: 100 } as const;
export const MIN_CONTROLLER_REPLICAS = 1;
/**
 * Every node driver registers with every controller replica (each one holds the whole node
 * registry) and external-provisioner's leader election picks the one that provisions. A standby
 * costs every node one more registry connection, lease renewals and volume listings, and the
 * apiserver one more leader-election poll; past a handful of replicas that buys no availability:
 * five already survive the loss of four, and put one replica in each zone of a five-zone cluster.
 */
export const MAX_CONTROLLER_REPLICAS = 5;
/** Why controllerReplicas stops at MAX_CONTROLLER_REPLICAS; part of the validation message. */
export const CONTROLLER_REPLICAS_NOTE =
  ' (every node registers with every replica; one replica provisions, the others stand by)';

export const PHASES = ['', 'Running', 'Failed'] as const;
export const CONDITION_TYPES = [
  'CertsVerified',
  'CertsReady',
  'DriverDeployed',
  'Conflict',
  'NodesSelected',
  'PmemOverlap',
  'EmulatedPmem',
  'GoOperatorFields',
] as const;
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
export const DRIVER_COMPONENTS = ['Controller', 'Node'] as const;
export const DRIVER_COMPONENT_STATES = ['Ready', 'NotReady'] as const;

/** Condition reasons are machine-readable CamelCase words, as in the Kubernetes convention. */
export const CONDITION_REASON_PATTERN = '^[A-Z][A-Za-z0-9]*$';
/** Upper bounds of metav1.Condition, so that a status write is never rejected for length. */
export const CONDITION_REASON_MAX_LENGTH = 1024;
export const CONDITION_MESSAGE_MAX_LENGTH = 32768;

/**
 * A DaemonSet rejects maxUnavailable 0 (and 0%) when maxSurge is 0, which is what we use: a node
 * can run only one driver pod, because both would own the same kubelet socket and devices.
 */
export const MAX_UNAVAILABLE_PERCENT_PATTERN = '^([1-9][0-9]?|100)%$';
export const MIN_MAX_UNAVAILABLE = 1;

/**
 * Spec fields of the Go operator (intel/pmem-csi v1.x api/v1beta1) that this operator has no
 * counterpart for: the TLS Secret of its scheduler extender and pod webhook, how the webhook was
 * configured, and a node port for the extender. The CRD declares them with the Go types so that
 * a Go user's value is never pruned silently; validation/go-operator-fields.ts accepts the values
 * that meant "off" and refuses the others with what to do.
 */
export const GO_OPERATOR_FIELDS = ['controllerTLSSecret', 'mutatePods', 'schedulerNodePort'] as const;
export type GoOperatorField = (typeof GO_OPERATOR_FIELDS)[number];
/** The Go operator's spec.mutatePods values (its default was Try). */
export const MUTATE_PODS_VALUES = ['Always', 'Try', 'Never'] as const;
/** The spec.mutatePods values accepted here: pods are created without a webhook's change, as this driver has none. */
export const MUTATE_PODS_ACCEPTED: readonly (typeof MUTATE_PODS_VALUES)[number][] = ['Try', 'Never'];

/** The user-supplied PEM fields: all five or none (see validateSpec). */
export const CERTIFICATE_FIELDS = [
  'caCert',
  'registryCert',
  'registryKey',
  'nodeControllerCert',
  'nodeControllerKey',
] as const;
export type CertificateField = (typeof CERTIFICATE_FIELDS)[number];
/** Which certificate fields hold private keys (never echoed in messages or logs). */
export const PRIVATE_KEY_FIELDS: readonly CertificateField[] = ['registryKey', 'nodeControllerKey'];

export const RESOURCE_FIELDS = [
  'controllerDriverResources',
  'nodeDriverResources',
  'provisionerResources',
  'nodeRegistrarResources',
  'resizerResources',
] as const;
export type ResourceField = (typeof RESOURCE_FIELDS)[number];

/**
 * Defaults that do not depend on the operator version. They are also written into the CRD schema,
 * so the apiserver stores them. Images and resources are deliberately absent: defaulted by the
 * operator at reconcile time, they move with operator upgrades instead of being frozen into
 * stored objects.
 */
export const SPEC_DEFAULTS = {
  deviceMode: 'lvm',
  imagePullPolicy: 'IfNotPresent',
  logLevel: 3,
  logFormat: 'text',
  nodeSelector: { storage: 'pmem' },
  pmemPercentage: 100,
  cxlRegions: 'manual',
  emulatedSize: '4Gi',
  kubeletDir: '/var/lib/kubelet',
  controllerReplicas: 1,
  maxUnavailable: 1,
} as const;

/**
 * metadata.name is the CSI driver name and, with '.' replaced by '-', the prefix of every object
 * name. A DNS subdomain that starts with a letter and has at most 52 characters keeps
 * "<prefix>-controller" a valid Service name (a DNS-1035 label of at most 63 characters) and the
 * driver name within CSI's limit of 63.
 */
export const DRIVER_NAME_PATTERN = '^[a-z]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const DRIVER_NAME_MAX_LENGTH = 52;
