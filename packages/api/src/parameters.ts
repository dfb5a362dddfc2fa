// The one parser of volume parameters, by origin: StorageClass parameters (CreateVolume),
// ephemeral inline volume attributes (NodePublishVolume) and the volume context that CreateVolume
// returned (NodePublishVolume of a persistent volume). Key strings are API: StorageClasses and PVs
// written for the Go driver must keep working. Unknown keys are rejected, except the ones
// Kubernetes adds itself (csi.storage.k8s.io/*, the provisioner identity), which pass through.
import { VOLUME_DEVICE_MODES, type VolumeDeviceMode } from './device-modes.js';
import { parseQuantityBytes } from './quantity.js';

export type VolumeParameterOrigin = 'createVolume' | 'ephemeral' | 'volumeContext';
export const VOLUME_USAGES = ['AppDirect', 'FileIO'] as const;
/** AppDirect: fsdax, mounted with -o dax. FileIO: sector mode, a plain block device without dax. */
export type VolumeUsage = (typeof VOLUME_USAGES)[number];

export const PARAMETER_KEYS = {
  eraseAfter: 'eraseafter',
  kataContainers: 'kataContainers',
  usage: 'usage',
  size: 'size',
  /** Only `normal` is accepted, for StorageClasses and PVs made for the Go driver. */
  persistencyModel: 'persistencyModel',
  /** Belonged to cache volumes, which are not supported: always rejected with that reason. */
  cacheSize: 'cacheSize',
  name: 'name',
  deviceMode: 'deviceMode',
} as const;
/** Keys under this prefix come from Kubernetes (pod info, PVC/PV names) and pass through. */
export const POD_INFO_PREFIX = 'csi.storage.k8s.io/';
/** Set to "true" by the kubelet in NodePublishVolume of an ephemeral inline volume. */
export const EPHEMERAL_CONTEXT_KEY = 'csi.storage.k8s.io/ephemeral';
/** Added to every PV's volume attributes by external-provisioner. */
export const PROVISIONER_IDENTITY_KEY = 'storage.kubernetes.io/csiProvisionerIdentity';

export interface VolumeParameters {
  /** Erase the data when the volume is deleted (default true). */
  readonly eraseAfter: boolean;
  /** Prepare the filesystem for Kata Containers (default false). */
  readonly kataContainers: boolean;
  readonly usage: VolumeUsage;
  /** Bytes; ephemeral volumes only, where it is required. */
  readonly size?: number;
  /** Volume context only: the mode of the node that created the volume. */
  readonly deviceMode?: VolumeDeviceMode;
  /** Volume context only: the CreateVolume name, for logs and ListVolumes. */
  readonly name?: string;
  /** Kubernetes-provided keys, unchanged. */
  readonly passthrough: Readonly<Record<string, string>>;
}

export interface ParameterProblem {
  readonly key: string;
  readonly message: string;
}

/** Either the typed parameters, or every problem found (and one message joining them). */
export type ParameterResult =
  | { readonly ok: true; readonly value: VolumeParameters }
  | { readonly ok: false; readonly problems: readonly ParameterProblem[]; readonly message: string };

const K = PARAMETER_KEYS;
const ALLOWED_KEYS: Readonly<Record<VolumeParameterOrigin, readonly string[]>> = {
  createVolume: [K.eraseAfter, K.kataContainers, K.usage, K.persistencyModel],
  ephemeral: [K.size, K.eraseAfter, K.kataContainers, K.usage],
  volumeContext: [
    K.eraseAfter,
    K.kataContainers,
    K.usage,
    K.persistencyModel,
    K.name,
    K.deviceMode,
    PROVISIONER_IDENTITY_KEY,
  ],
};
const ORIGIN_LABELS: Readonly<Record<VolumeParameterOrigin, string>> = {
  createVolume: 'StorageClass parameters',
  ephemeral: 'ephemeral volume attributes',
  volumeContext: 'the volume context',
};
// strconv.ParseBool's spellings: the Go driver accepted them, so existing StorageClasses may use them.
const TRUE_VALUES = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_VALUES = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);
const SIZE_HINT = 'a Kubernetes quantity, e.g. 1Gi, 100Mi, 2G or 1073741824';

type Mutable<T> = { -readonly [P in keyof T]: T[P] };
type Draft = Mutable<Omit<VolumeParameters, 'passthrough'>> & { passthrough: Record<string, string> };
// Applies one value to the draft; returns the problem (without the key prefix) if it is bad.
type Handler = (value: string, draft: Draft) => string | undefined;

const HANDLERS: Readonly<Record<string, Handler>> = {
  [K.eraseAfter]: (value, d) => parseBool(value, (b) => (d.eraseAfter = b)),
  [K.kataContainers]: (value, d) => parseBool(value, (b) => (d.kataContainers = b)),
  [K.usage]: (value, d) => oneOf(value, VOLUME_USAGES, (u) => (d.usage = u)),
  [K.deviceMode]: (value, d) => oneOf(value, VOLUME_DEVICE_MODES, (m) => (d.deviceMode = m)),
  [K.persistencyModel]: (value) =>
    value === 'normal'
      ? undefined
      : `${quote(value)} is not supported${value === 'cache' ? ' (cache volumes were removed)' : ''}; allowed values: normal`,
  [K.name]: (value, d) => {
    if (value === '') return 'must not be empty';
    d.name = value;
    return undefined;
  },
  [K.size]: (value, d) => {
    const size = parseQuantityBytes(value);
    if (!size.ok) return size.message;
    if (size.value === 0) return `${quote(value)} must be greater than 0 bytes`;
    d.size = size.value;
    return undefined;
  },
  [PROVISIONER_IDENTITY_KEY]: (value, d) => {
    d.passthrough[PROVISIONER_IDENTITY_KEY] = value;
    return undefined;
  },
};

/** Parses `params` as given in `origin`; reports every bad key, not just the first. */
export function parseVolumeParameters(
  params: Readonly<Record<string, string>>,
  origin: VolumeParameterOrigin,
): ParameterResult {
  const draft: Draft = { eraseAfter: true, kataContainers: false, usage: 'AppDirect', passthrough: {} };
  const problems: ParameterProblem[] = [];
  for (const key of Object.keys(params).sort()) {
    const problem = applyParameter(key, params[key] ?? '', origin, draft);
    if (problem !== undefined) problems.push({ key, message: problem });
  }
  if (origin === 'ephemeral' && draft.size === undefined && !(K.size in params)) {
    problems.push({ key: K.size, message: `parameter "${K.size}" is required for ephemeral volumes (${SIZE_HINT})` });
  }
  if (problems.length > 0) {
    return {
      ok: false,
      problems,
      message: `invalid ${ORIGIN_LABELS[origin]}: ${problems.map((p) => p.message).join('; ')}`,
    };
  }
  return { ok: true, value: draft };
}

function applyParameter(key: string, value: string, origin: VolumeParameterOrigin, draft: Draft): string | undefined {
  if (key.startsWith(POD_INFO_PREFIX)) {
    draft.passthrough[key] = value;
    return undefined;
  }
  if (key === K.cacheSize) {
    return `parameter "${K.cacheSize}" is not supported: cache persistency was removed; omit it and use persistencyModel "normal" (or no persistencyModel)`;
  }
  const handler = HANDLERS[key];
  if (handler === undefined || !ALLOWED_KEYS[origin].includes(key)) {
    return `parameter ${quote(key)} is not allowed in ${ORIGIN_LABELS[origin]}; allowed keys: ${[...ALLOWED_KEYS[origin], `${POD_INFO_PREFIX}*`].join(', ')}`;
  }
  const problem = handler(value, draft);
  return problem === undefined ? undefined : `parameter ${quote(key)}: ${problem}`;
}

/**
 * The volume_context that CreateVolume returns: the parsed settings plus name and deviceMode when
 * set. Parsing it with origin 'volumeContext' yields the same settings. Size and pass-through keys
 * are not copied (the kubelet adds its own pod info at publish time).
 */
export function formatVolumeContext(params: VolumeParameters): Record<string, string> {
  return {
    [K.eraseAfter]: String(params.eraseAfter),
    [K.kataContainers]: String(params.kataContainers),
    [K.usage]: params.usage,
    ...(params.name === undefined ? {} : { [K.name]: params.name }),
    ...(params.deviceMode === undefined ? {} : { [K.deviceMode]: params.deviceMode }),
  };
}

/** True when NodePublishVolume's volume context is that of an ephemeral inline volume. */
export function isEphemeralVolumeContext(context: Readonly<Record<string, string>>): boolean {
  return TRUE_VALUES.has(context[EPHEMERAL_CONTEXT_KEY] ?? '');
}

function parseBool(value: string, set: (b: boolean) => void): string | undefined {
  if (TRUE_VALUES.has(value)) set(true);
  else if (FALSE_VALUES.has(value)) set(false);
  else return `${quote(value)} is not a boolean; allowed values: true, false`;
  return undefined;
}

function oneOf<T extends string>(value: string, allowed: readonly T[], set: (v: T) => void): string | undefined {
  const match = allowed.find((a) => a === value);
  if (match === undefined) return `${quote(value)} is not supported; allowed values: ${allowed.join(', ')}`;
  set(match);
  return undefined;
}

function quote(value: string): string {
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 61)}...` : value);
}
