// One check per PmemCSIDeployment spec field. The table is typed by the generated spec type, so a
// field added to the schema does not compile until it has a check here.
import { CXL_REGION_POLICIES, OFFERED_DEVICE_MODES } from '../device-modes.js';
import { EMULATED_SIZE_ALLOWED, emulatedSizeBytes } from '../defaults.js';
import { isQuantity } from '../quantity.js';
import {
  IMAGE_PULL_POLICIES,
  LOG_FORMATS,
  LOG_LEVEL_RANGE,
  MAX_UNAVAILABLE_PERCENT_PATTERN,
  CONTROLLER_REPLICAS_NOTE,
  MAX_CONTROLLER_REPLICAS,
  MIN_CONTROLLER_REPLICAS,
  MIN_MAX_UNAVAILABLE,
  PMEM_PERCENTAGE_RANGE,
  PRIVATE_KEY_FIELDS,
  type CertificateField,
} from '../crd/values.js';
import type { PmemCSIDeploymentSpec } from '../generated/pmemcsideployment.js';
import { LABEL_KEYS } from '../names.js';
import { NOT_GO_DRIVER_IMAGE, goOperatorFieldCheck, isGoDriverImage } from './go-operator-fields.js';
import { isPemCertificates, isPemPrivateKey } from './pem.js';
import {
  badKey,
  badSecretValue,
  badValue,
  entryPath,
  isPlainObject,
  unknownField,
  type ValidationProblem,
} from './problem.js';
import { IMAGE_REFERENCE_SYNTAX, isCleanAbsolutePath, isImageReference, isLabelKey, isLabelValue } from './syntax.js';

export type FieldCheck = (value: unknown, path: string) => ValidationProblem[];

const LABEL_KEY_SYNTAX =
  "label keys ([prefix/]name: name at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit; prefix a DNS subdomain)";
const LABEL_VALUE_SYNTAX =
  "label values (at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, or empty)";
const QUANTITY_SYNTAX = 'non-negative quantities such as 100m, 0.5, 250Mi or 1Gi';
const RESERVED_LABEL_KEYS: readonly string[] = Object.values(LABEL_KEYS);
const RESOURCE_REQUIREMENT_FIELDS = ['limits', 'requests'];
const PERCENT_RE = new RegExp(MAX_UNAVAILABLE_PERCENT_PATTERN);

const ok: ValidationProblem[] = [];

function oneOf(allowed: readonly string[]): FieldCheck {
  return (value, path) =>
    typeof value === 'string' && allowed.includes(value) ? ok : [badValue(path, value, allowed.join(', '))];
}

function integer(min: number, max: number | undefined, note = ''): FieldCheck {
  const allowed = max === undefined ? `integers of at least ${min}` : `integers from ${min} to ${max}`;
  return (value, path) =>
    Number.isInteger(value) && (value as number) >= min && (max === undefined || (value as number) <= max)
      ? ok
      : [badValue(path, value, `${allowed}${note}`)];
}

const image: FieldCheck = (value, path) =>
  typeof value === 'string' && isImageReference(value)
    ? ok
    : [badValue(path, value, `an image reference ${IMAGE_REFERENCE_SYNTAX}`)];

/** The driver image: never the Go driver's (a Go user's pinned image, taken over with the CR). */
const driverImage: FieldCheck = (value, path) => {
  const problems = image(value, path);
  if (problems.length > 0 || !isGoDriverImage(value as string)) return problems;
  return [badValue(path, value, NOT_GO_DRIVER_IMAGE)];
};

function labelMap(reserveOperatorKeys: boolean): FieldCheck {
  return (value, path) => {
    if (!isPlainObject(value)) return [badValue(path, value, 'a map of label keys to label values')];
    return Object.entries(value).flatMap(([key, v]): ValidationProblem[] => {
      if (!isLabelKey(key)) return [badKey(path, key, LABEL_KEY_SYNTAX)];
      if (reserveOperatorKeys && RESERVED_LABEL_KEYS.includes(key)) {
        return [
          badKey(path, key, `any label key except those the operator sets itself (${RESERVED_LABEL_KEYS.join(', ')})`),
        ];
      }
      return typeof v === 'string' && isLabelValue(v) ? ok : [badValue(entryPath(path, key), v, LABEL_VALUE_SYNTAX)];
    });
  };
}

function quantityMap(value: unknown, path: string): ValidationProblem[] {
  if (!isPlainObject(value)) return [badValue(path, value, 'a map of resource names to quantities')];
  return Object.entries(value).flatMap(([name, q]) => {
    if (!isLabelKey(name))
      return [badKey(path, name, 'resource names such as cpu, memory, ephemeral-storage or hugepages-2Mi')];
    const valid =
      typeof q === 'string' ? isQuantity(q) && !q.startsWith('-') : Number.isInteger(q) && (q as number) >= 0;
    return valid ? ok : [badValue(entryPath(path, name), q, QUANTITY_SYNTAX)];
  });
}

const resources: FieldCheck = (value, path) => {
  if (!isPlainObject(value)) return [badValue(path, value, 'an object with limits and/or requests')];
  return Object.entries(value).flatMap(([field, v]) =>
    RESOURCE_REQUIREMENT_FIELDS.includes(field)
      ? quantityMap(v, `${path}.${field}`)
      : [unknownField(`${path}.${field}`, RESOURCE_REQUIREMENT_FIELDS)],
  );
};

const emulatedSize: FieldCheck = (value, path) =>
  emulatedSizeBytes(value) === undefined ? [badValue(path, value, EMULATED_SIZE_ALLOWED)] : ok;

const kubeletDir: FieldCheck = (value, path) =>
  typeof value === 'string' && isCleanAbsolutePath(value)
    ? ok
    : [badValue(path, value, "an absolute path without '.' or '..' segments")];

const maxUnavailable: FieldCheck = (value, path) => {
  const valid =
    typeof value === 'string'
      ? PERCENT_RE.test(value)
      : Number.isInteger(value) && (value as number) >= MIN_MAX_UNAVAILABLE;
  return valid
    ? ok
    : [badValue(path, value, `an integer of at least ${MIN_MAX_UNAVAILABLE} or a percentage from 1% to 100%`)];
};

/** Shape of one certificate field; empty means unset (see certificateSet in validate.ts). */
function pem(field: CertificateField): FieldCheck {
  const isKey = PRIVATE_KEY_FIELDS.includes(field);
  const allowed = isKey
    ? 'an unencrypted PEM-encoded private key (BEGIN PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)'
    : 'PEM-encoded certificates (BEGIN CERTIFICATE)';
  return (value, path) => {
    if (value === '') return ok;
    const valid = typeof value === 'string' && (isKey ? isPemPrivateKey(value) : isPemCertificates(value));
    return valid ? ok : [badSecretValue(path, allowed)];
  };
}

export const SPEC_FIELD_CHECKS: Readonly<Record<keyof PmemCSIDeploymentSpec, FieldCheck>> = {
  image: driverImage,
  imagePullPolicy: oneOf(IMAGE_PULL_POLICIES),
  provisionerImage: image,
  nodeRegistrarImage: image,
  resizerImage: image,
  controllerDriverResources: resources,
  nodeDriverResources: resources,
  provisionerResources: resources,
  nodeRegistrarResources: resources,
  resizerResources: resources,
  deviceMode: oneOf(OFFERED_DEVICE_MODES),
  logLevel: integer(LOG_LEVEL_RANGE.min, LOG_LEVEL_RANGE.max),
  logFormat: oneOf(LOG_FORMATS),
  nodeSelector: labelMap(false),
  pmemPercentage: integer(PMEM_PERCENTAGE_RANGE.min, PMEM_PERCENTAGE_RANGE.max, ' (0 means 100)'),
  cxlRegions: oneOf(CXL_REGION_POLICIES),
  emulatedSize,
  labels: labelMap(true),
  kubeletDir,
  controllerReplicas: integer(MIN_CONTROLLER_REPLICAS, MAX_CONTROLLER_REPLICAS, CONTROLLER_REPLICAS_NOTE),
  maxUnavailable,
  caCert: pem('caCert'),
  registryCert: pem('registryCert'),
  registryKey: pem('registryKey'),
  nodeControllerCert: pem('nodeControllerCert'),
  nodeControllerKey: pem('nodeControllerKey'),
  controllerTLSSecret: goOperatorFieldCheck('controllerTLSSecret'),
  mutatePods: goOperatorFieldCheck('mutatePods'),
  schedulerNodePort: goOperatorFieldCheck('schedulerNodePort'),
};
