// OpenAPI v3 schema of PmemCSIDeployment.spec: the single source from which the CRD YAML and the
// TypeScript types are generated (tools/gen-crd.ts). Descriptions are what `kubectl explain`
// shows. Value checks the apiserver can do cheaply live here; the rest (image syntax, label
// syntax, PEM blocks, certificates all-or-nothing) is in validate.ts.
import { CXL_REGION_POLICIES, OFFERED_DEVICE_MODES } from '../device-modes.js';
import { QUANTITY_PATTERN } from '../quantity.js';
import type { JSONSchemaProps } from './json-schema.js';
import {
  EMULATED_SIZE_RANGE,
  IMAGE_PULL_POLICIES,
  LOG_FORMATS,
  LOG_LEVEL_RANGE,
  MAX_UNAVAILABLE_PERCENT_PATTERN,
  MUTATE_PODS_ACCEPTED,
  MUTATE_PODS_VALUES,
  MAX_CONTROLLER_REPLICAS,
  MIN_CONTROLLER_REPLICAS,
  MIN_MAX_UNAVAILABLE,
  PMEM_PERCENTAGE_RANGE,
  SPEC_DEFAULTS,
} from './values.js';

/** A Kubernetes resource quantity: integer or string, as resource.Quantity is in core APIs. */
export const quantitySchema: JSONSchemaProps = {
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  pattern: QUANTITY_PATTERN,
  'x-kubernetes-int-or-string': true,
};

const stringMap = (description: string, defaultValue?: Readonly<Record<string, string>>): JSONSchemaProps => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string' },
  ...(defaultValue === undefined ? {} : { default: defaultValue }),
});

/** Compute resources of one container; shared by the four *Resources fields. */
export const resourceRequirementsSchema: JSONSchemaProps = {
  type: 'object',
  description: 'Compute resources of one container, as in a Pod spec.',
  properties: {
    limits: {
      type: 'object',
      description: 'Maximum amount of compute resources allowed, e.g. {cpu: 500m, memory: 512Mi}.',
      additionalProperties: quantitySchema,
    },
    requests: {
      type: 'object',
      description: 'Minimum amount of compute resources required, e.g. {cpu: 100m, memory: 250Mi}.',
      additionalProperties: quantitySchema,
    },
  },
};

const resources = (container: string): JSONSchemaProps => ({
  ...resourceRequirementsSchema,
  description: `Compute resources of the ${container}. Unset means the operator's defaults (requests only); when set, it replaces them as a whole.`,
});

const image = (what: string, fallback: string): JSONSchemaProps => ({
  type: 'string',
  minLength: 1,
  description: `Container image of the ${what}. Unset means ${fallback}, which follows operator upgrades.`,
});

const pem = (what: string): JSONSchemaProps => ({
  type: 'string',
  description: `${what}, PEM-encoded. Optional: either all five of caCert, registryCert, registryKey, nodeControllerCert and nodeControllerKey are set, or none and the operator creates and renews its own CA and certificates.`,
});

/** What a refused value of a Go operator field does, for the descriptions of those fields. */
const GO_REFUSED =
  'a refused value leaves the deployment Failed (DriverDeployed False, InvalidSpec) with nothing written, so a Go driver still deployed keeps running until the field is removed';

export const specSchema: JSONSchemaProps = {
  type: 'object',
  description: 'Desired state of one PMEM-CSI driver instance. Every field is optional.',
  // An empty default makes the apiserver apply the nested defaults even when spec is omitted.
  default: {},
  properties: {
    image: image('PMEM-CSI driver (controller and node)', "the operator's own image"),
    imagePullPolicy: {
      type: 'string',
      enum: IMAGE_PULL_POLICIES,
      default: SPEC_DEFAULTS.imagePullPolicy,
      description: `Image pull policy of all containers: ${IMAGE_PULL_POLICIES.join(', ')}.`,
    },
    provisionerImage: image('external-provisioner sidecar', 'the version the operator was built with'),
    nodeRegistrarImage: image('node-driver-registrar sidecar', 'the version the operator was built with'),
    resizerImage: image(
      'external-resizer sidecar (volume expansion: grows a volume when its PersistentVolumeClaim asks for more)',
      'the version the operator was built with',
    ),
    controllerDriverResources: resources('driver container in the controller Deployment'),
    nodeDriverResources: resources('driver container in the node DaemonSet'),
    provisionerResources: resources('external-provisioner sidecar'),
    nodeRegistrarResources: resources('node-driver-registrar sidecar'),
    resizerResources: resources('external-resizer sidecar'),
    deviceMode: {
      type: 'string',
      enum: OFFERED_DEVICE_MODES,
      default: SPEC_DEFAULTS.deviceMode,
      description:
        'How the node driver provides volumes: lvm (PMEM: one volume group per region, one logical volume per volume), direct (PMEM: one namespace per volume) ' +
        "or emulated, which is NOT persistent memory: each volume is a sparse file in /var/lib/<driver name>/emulated on the node's disk, attached to a loop device " +
        '(real filesystems and mounts, no DAX, no PMEM speed, capacity spec.emulatedSize per node), for trying PMEM-CSI on nodes without NVDIMMs; ' +
        'the status then carries the condition EmulatedPmem=True. Cannot be changed while volumes of the driver exist.',
    },
    logLevel: {
      type: 'integer',
      minimum: LOG_LEVEL_RANGE.min,
      maximum: LOG_LEVEL_RANGE.max,
      default: SPEC_DEFAULTS.logLevel,
      description: `Log verbosity of the driver, ${LOG_LEVEL_RANGE.min} to ${LOG_LEVEL_RANGE.max}: 0 errors and important events only, 3 normal operation, 5 debugging, 10 tracing.`,
    },
    logFormat: {
      type: 'string',
      enum: LOG_FORMATS,
      default: SPEC_DEFAULTS.logFormat,
      description: `Log output format of the driver: ${LOG_FORMATS.join(', ')}.`,
    },
    nodeSelector: stringMap(
      'Labels that select the nodes with PMEM which run the node driver. Unset means {storage: pmem}; {} selects every node.',
      SPEC_DEFAULTS.nodeSelector,
    ),
    pmemPercentage: {
      type: 'integer',
      minimum: PMEM_PERCENTAGE_RANGE.min,
      maximum: PMEM_PERCENTAGE_RANGE.max,
      default: SPEC_DEFAULTS.pmemPercentage,
      description: 'lvm mode only: percentage of each PMEM region that the driver may use, 0 to 100; 0 means 100.',
    },
    cxlRegions: {
      type: 'string',
      enum: [...CXL_REGION_POLICIES],
      default: SPEC_DEFAULTS.cxlRegions,
      description:
        'lvm and direct mode: what each node driver does at start-up with the persistent capacity of CXL memory devices that no region maps. ' +
        '"manual": only reports it (regions come from the firmware or are assembled by hand, e.g. by a boot script running cxl create-region); ' +
        '"assemble": makes one pmem region per such device (cxl create-region) before looking for regions, at every start, since such regions are gone after a power-off. ' +
        'Existing regions, devices that a region maps and volatile-only devices are left alone; no region is ever destroyed. Not allowed in emulated mode.',
    },
    emulatedSize: {
      ...quantitySchema,
      default: SPEC_DEFAULTS.emulatedSize,
      description:
        `emulated mode only: the capacity each node driver offers, a quantity from ${EMULATED_SIZE_RANGE.min} to ${EMULATED_SIZE_RANGE.max} (e.g. 4Gi). ` +
        "The volumes are sparse files on the node's disk, which must have room for what the volumes write.",
    },
    labels: stringMap(
      'Labels added to every object that the operator creates for this driver (in addition to its own).',
    ),
    kubeletDir: {
      type: 'string',
      pattern: '^/',
      default: SPEC_DEFAULTS.kubeletDir,
      description: "Absolute path of the kubelet's root directory on the nodes.",
    },
    controllerReplicas: {
      type: 'integer',
      format: 'int32',
      minimum: MIN_CONTROLLER_REPLICAS,
      maximum: MAX_CONTROLLER_REPLICAS,
      default: SPEC_DEFAULTS.controllerReplicas,
      description:
        `Number of controller pods, ${MIN_CONTROLLER_REPLICAS} to ${MAX_CONTROLLER_REPLICAS}. Every node driver registers with every replica, so each one holds the whole node registry; ` +
        "external-provisioner's leader election (a Lease named after the driver, '.' and '/' replaced by '-', in the operator's namespace) picks the one that provisions, " +
        "external-resizer's (its Lease is that name prefixed with 'external-resizer-') the one that grows volumes, " +
        'and a standby takes over within about 10 s when the active one is lost. status.driverComponents names the pod that provisions (active) and the one that grows volumes (activeResizer). ' +
        'With 2 or more the pods are spread over nodes (preferred anti-affinity), replaced one at a time and kept by a PodDisruptionBudget (minAvailable 1); ' +
        `the maximum bounds what each standby costs every node (a registry connection, lease renewals and volume listings).`,
    },
    maxUnavailable: {
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      'x-kubernetes-int-or-string': true,
      minimum: MIN_MAX_UNAVAILABLE,
      pattern: MAX_UNAVAILABLE_PERCENT_PATTERN,
      default: SPEC_DEFAULTS.maxUnavailable,
      description:
        'How many node driver pods may be unavailable during a rolling update of the DaemonSet: a number of at least 1 or a percentage of the selected nodes from 1% to 100%.',
    },
    caCert: pem('Certificate of the CA that signed registryCert and nodeControllerCert'),
    registryCert: pem(`Certificate of the controller's registry service (subject/SAN pmem-registry)`),
    registryKey: pem('Private key of registryCert (PKCS#1, PKCS#8 or SEC1)'),
    nodeControllerCert: pem('Certificate of the node-controller services (subject/SAN pmem-node-controller)'),
    nodeControllerKey: pem('Private key of nodeControllerCert (PKCS#1, PKCS#8 or SEC1)'),
    // The Go operator's fields (GO_OPERATOR_FIELDS), with its types, so that they are stored and
    // answered instead of pruned; validation/go-operator-fields.ts decides each value.
    controllerTLSSecret: {
      type: 'string',
      description:
        "Go operator (PMEM-CSI v1.x) only: the Secret with ca.crt, tls.crt and tls.key of the Go driver's scheduler extender and pod webhook. " +
        `This driver has neither (storage capacity tracking places pods with late-binding PMEM volumes on nodes with room): only "" (or unset) is accepted; ${GO_REFUSED}. The status condition GoOperatorFields reports the decision.`,
    },
    mutatePods: {
      type: 'string',
      enum: MUTATE_PODS_VALUES,
      description:
        "Go operator (PMEM-CSI v1.x) only: how its pod webhook was registered (Always: pod creation fails without the webhook's answer; Try: best effort; Never: no webhook). " +
        `This driver has no pod webhook, so pods are created unchanged: ${MUTATE_PODS_ACCEPTED.join(' and ')} (or unset) are accepted, Always is refused; ${GO_REFUSED}.`,
    },
    schedulerNodePort: {
      type: 'integer',
      format: 'int32',
      description:
        "Go operator (PMEM-CSI v1.x) only: a node port for the Go driver's scheduler extender Service. This driver has no scheduler extender: only 0 (or unset) is accepted; " +
        `${GO_REFUSED}.`,
    },
  },
};
