// Turns a user's (possibly sparse) PmemCSIDeployment spec into the fully defaulted spec that the
// operator's builders consume. Pure: the input is never mutated and the result shares no objects
// with it, so callers may freeze, cache or compare either side.
import { EMULATED_SIZE_RANGE, SPEC_DEFAULTS, type GoOperatorField, type ResourceField } from './crd/values.js';
import type {
  DeviceMode,
  ImagePullPolicy,
  LogFormat,
  PmemCSIDeploymentSpec,
  ResourceRequirements,
} from './generated/pmemcsideployment.js';
import { parseQuantityBytes } from './quantity.js';

export const DEFAULT_PROVISIONER_IMAGE = 'registry.k8s.io/sig-storage/csi-provisioner:v5.3.0';
export const DEFAULT_NODE_REGISTRAR_IMAGE = 'registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0';
export const DEFAULT_RESIZER_IMAGE = 'registry.k8s.io/sig-storage/csi-resizer:v2.3.0';

/**
 * Requests only: limits would throttle or OOM-kill a driver in the middle of formatting or
 * erasing a volume, and the sidecars' needs grow with the number of volumes.
 */
export const DEFAULT_RESOURCES: Readonly<Record<ResourceField, ResourceRequirements>> = {
  controllerDriverResources: { requests: { cpu: '12m', memory: '128Mi' } },
  nodeDriverResources: { requests: { cpu: '100m', memory: '250Mi' } },
  provisionerResources: { requests: { cpu: '12m', memory: '128Mi' } },
  nodeRegistrarResources: { requests: { cpu: '12m', memory: '128Mi' } },
  // Like external-provisioner: informers of every PV and PVC, work only when a claim grows.
  resizerResources: { requests: { cpu: '12m', memory: '128Mi' } },
};

type CertificateFields = 'caCert' | 'registryCert' | 'registryKey' | 'nodeControllerCert' | 'nodeControllerKey';

/**
 * A spec in which every field except the optional user certificates has a value. The Go operator's
 * fields have no default either: they are only reported (validation/go-operator-fields.ts).
 */
export type DefaultedSpec = Required<Omit<PmemCSIDeploymentSpec, CertificateFields | GoOperatorField>> &
  Pick<PmemCSIDeploymentSpec, CertificateFields | GoOperatorField>;

export interface DefaultsContext {
  /** The operator's own image: the driver image unless the spec pins one. */
  readonly operatorImage: string;
}

/** A new, fully defaulted copy of `spec` (undefined means an empty spec). */
export function withDefaults(spec: PmemCSIDeploymentSpec | undefined, context: DefaultsContext): DefaultedSpec {
  const defaults: DefaultedSpec = {
    image: context.operatorImage,
    imagePullPolicy: SPEC_DEFAULTS.imagePullPolicy satisfies ImagePullPolicy,
    provisionerImage: DEFAULT_PROVISIONER_IMAGE,
    nodeRegistrarImage: DEFAULT_NODE_REGISTRAR_IMAGE,
    resizerImage: DEFAULT_RESIZER_IMAGE,
    ...structuredClone(DEFAULT_RESOURCES),
    deviceMode: SPEC_DEFAULTS.deviceMode satisfies DeviceMode,
    logLevel: SPEC_DEFAULTS.logLevel,
    logFormat: SPEC_DEFAULTS.logFormat satisfies LogFormat,
    nodeSelector: { ...SPEC_DEFAULTS.nodeSelector },
    pmemPercentage: SPEC_DEFAULTS.pmemPercentage,
    cxlRegions: SPEC_DEFAULTS.cxlRegions,
    emulatedSize: SPEC_DEFAULTS.emulatedSize,
    labels: {},
    kubeletDir: SPEC_DEFAULTS.kubeletDir,
    controllerReplicas: SPEC_DEFAULTS.controllerReplicas,
    maxUnavailable: SPEC_DEFAULTS.maxUnavailable,
  };
  // Field by field, a set value wins as a whole: an explicit nodeSelector {} means "every node",
  // and explicit resources replace the default requests instead of merging with them.
  return { ...defaults, ...setFields(spec ?? {}) };
}

// A deep copy (independent of the input, unfrozen even when the input is frozen) without the
// fields that are unset; null is unset too, as the apiserver prunes it before defaulting.
function setFields(spec: PmemCSIDeploymentSpec): PmemCSIDeploymentSpec {
  return Object.fromEntries(
    Object.entries(structuredClone(spec)).filter(([, value]) => value !== undefined && value !== null),
  ) as PmemCSIDeploymentSpec;
}

/** The percentage of each region that lvm mode may use: 0 (and unset) mean 100, as in the Go driver. */
export function effectivePmemPercentage(pmemPercentage: number | undefined): number {
  return pmemPercentage === undefined || pmemPercentage === 0 ? 100 : pmemPercentage;
}

/** What spec.emulatedSize accepts, for messages. */
export const EMULATED_SIZE_ALLOWED = `quantities from ${EMULATED_SIZE_RANGE.min} (${EMULATED_SIZE_RANGE.minBytes} bytes) to ${EMULATED_SIZE_RANGE.max} (${EMULATED_SIZE_RANGE.maxBytes} bytes), e.g. 4Gi or 512Mi`;

/**
 * Bytes of an emulatedSize value (a quantity string or a whole number of bytes), or undefined when
 * it is not a quantity of bytes within EMULATED_SIZE_RANGE.
 */
export function emulatedSizeBytes(value: unknown): number | undefined {
  let bytes: number;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return undefined;
    bytes = value;
  } else if (typeof value === 'string') {
    const parsed = parseQuantityBytes(value);
    if (!parsed.ok) return undefined;
    bytes = parsed.value;
  } else {
    return undefined;
  }
  return bytes >= EMULATED_SIZE_RANGE.minBytes && bytes <= EMULATED_SIZE_RANGE.maxBytes ? bytes : undefined;
}
