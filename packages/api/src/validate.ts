// Validation of a PmemCSIDeployment beyond what the CRD schema can express, and a second line of
// defence for what it can (objects may predate a schema change, tests build objects directly).
// Returns every problem at once so that a user fixes a spec in one round, not one per reconcile.
import { API_GROUP_VERSION, KIND } from './identity.js';
import { specSchema } from './crd/spec-schema.js';
import { CERTIFICATE_FIELDS, DRIVER_NAME_MAX_LENGTH, DRIVER_NAME_PATTERN, SPEC_DEFAULTS } from './crd/values.js';
import { PMEM_DEVICE_MODES } from './device-modes.js';
import type { PmemCSIDeploymentSpec } from './generated/pmemcsideployment.js';
import { OPERATOR_LEASE_NAME, RESIZER_LEASE_PREFIX, provisionerLeaseName } from './names.js';
import { badValue, isPlainObject, unknownField, type ValidationProblem } from './validation/problem.js';
import { SPEC_FIELD_CHECKS } from './validation/spec-fields.js';

export type { ValidationProblem } from './validation/problem.js';
export { goOperatorFieldFindings, type GoOperatorFieldFinding } from './validation/go-operator-fields.js';

const SPEC_FIELDS: readonly string[] = Object.keys(specSchema.properties ?? {});
const DRIVER_NAME_RE = new RegExp(DRIVER_NAME_PATTERN);
const DRIVER_NAME_SYNTAX = `a DNS subdomain of at most ${DRIVER_NAME_MAX_LENGTH} characters (lowercase letters, digits, '-' and '.') starting with a letter, because it is the CSI driver name and prefixes Service names`;

const LEASE_CLASH = `${DRIVER_NAME_SYNTAX}, except names that external-provisioner's leader election would turn into the operator's own Lease name "${OPERATOR_LEASE_NAME}" ('.' becomes '-')`;
const RESIZER_LEASE_CLASH = `${DRIVER_NAME_SYNTAX}, except names starting with "${RESIZER_LEASE_PREFIX.slice(0, -1)}" and '-' or '.', whose external-provisioner Lease would be the external-resizer Lease of the driver named by the rest`;

/** Every problem of a whole PmemCSIDeployment object (apiVersion, kind, metadata.name, spec). */
export function validateDeployment(obj: unknown): ValidationProblem[] {
  if (!isPlainObject(obj)) return [badValue('object', obj, `a ${KIND} object`)];
  const problems: ValidationProblem[] = [];
  // Absent in some list responses; when present they must be ours.
  if (obj.apiVersion !== undefined && obj.apiVersion !== API_GROUP_VERSION) {
    problems.push(badValue('apiVersion', obj.apiVersion, API_GROUP_VERSION));
  }
  if (obj.kind !== undefined && obj.kind !== KIND) problems.push(badValue('kind', obj.kind, KIND));
  const name = isPlainObject(obj.metadata) ? obj.metadata.name : undefined;
  if (!isDriverName(name)) problems.push(badValue('metadata.name', name, DRIVER_NAME_SYNTAX));
  else {
    const clash = leaseClash(name);
    if (clash !== undefined) problems.push(badValue('metadata.name', name, clash));
  }
  problems.push(...validateSpec(obj.spec ?? {}));
  return problems;
}

/**
 * Why a driver name would share a leader-election Lease with someone else in the operator's
 * namespace, where every driver's sidecars and the operator keep their Leases; whoever shares a
 * Lease takes it from the other, and only the holder works. external-resizer's Lease
 * ("external-resizer-<driver>", resizerLeaseName) can never be the operator's: it starts with
 * that prefix. It can be another driver's provisioner Lease, which is named after that driver alone.
 */
function leaseClash(name: string): string | undefined {
  const provisionerLease = provisionerLeaseName(name);
  // Operator replicas and this driver's controller replicas would take one Lease from each other.
  if (provisionerLease === OPERATOR_LEASE_NAME) return LEASE_CLASH;
  // "external-resizer.foo" provisions under the Lease with which driver "foo" resizes.
  if (provisionerLease.startsWith(RESIZER_LEASE_PREFIX)) return RESIZER_LEASE_CLASH;
  return undefined;
}

/** True when `name` is usable as a PmemCSIDeployment name (= CSI driver name). */
export function isDriverName(name: unknown): name is string {
  return typeof name === 'string' && name.length <= DRIVER_NAME_MAX_LENGTH && DRIVER_NAME_RE.test(name);
}

/** Every problem of a spec; `path` prefixes the reported paths. An empty spec is valid. */
export function validateSpec(spec: unknown, path = 'spec'): ValidationProblem[] {
  if (!isPlainObject(spec)) return [badValue(path, spec, 'an object')];
  const problems: ValidationProblem[] = [];
  for (const [field, value] of Object.entries(spec)) {
    const fieldPath = `${path}.${field}`;
    if (!isSpecField(field)) {
      problems.push(unknownField(fieldPath, SPEC_FIELDS));
    } else if (value !== undefined && value !== null) {
      // null counts as unset: the apiserver prunes it before defaulting.
      problems.push(...SPEC_FIELD_CHECKS[field](value, fieldPath));
    }
  }
  problems.push(...checkCertificatesComplete(spec, path));
  problems.push(...checkCxlRegionsMode(spec, path));
  return problems;
}

// The node driver assembles CXL regions only in the modes that use regions: in emulated mode the
// setting would be accepted and then do nothing.
function checkCxlRegionsMode(spec: Record<string, unknown>, path: string): ValidationProblem[] {
  const mode = spec['deviceMode'] ?? SPEC_DEFAULTS.deviceMode;
  if (spec['cxlRegions'] !== 'assemble' || (PMEM_DEVICE_MODES as readonly unknown[]).includes(mode)) return [];
  const fieldPath = `${path}.cxlRegions`;
  return [
    {
      path: fieldPath,
      message: `${fieldPath}: "assemble" needs deviceMode ${PMEM_DEVICE_MODES.join(' or ')} (deviceMode ${JSON.stringify(mode)} uses no PMEM regions); allowed values here: manual`,
    },
  ];
}

function isSpecField(field: string): field is keyof PmemCSIDeploymentSpec {
  return SPEC_FIELDS.includes(field) && Object.hasOwn(SPEC_FIELD_CHECKS, field);
}

// Half a set of certificates cannot work: the operator would mix its own CA with the user's.
function checkCertificatesComplete(spec: Record<string, unknown>, path: string): ValidationProblem[] {
  const missing = CERTIFICATE_FIELDS.filter((f) => !isSet(spec[f]));
  if (missing.length === 0 || missing.length === CERTIFICATE_FIELDS.length) return [];
  const allowed = `all of ${CERTIFICATE_FIELDS.join(', ')}, or none`;
  return missing.map((field) => {
    const fieldPath = `${path}.${field}`;
    return {
      path: fieldPath,
      message: `${fieldPath}: required because another certificate field is set; allowed values: ${allowed}`,
    };
  });
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** The five user-supplied PEM strings when the spec has them (empty strings count as unset). */
export type UserCertificates = Readonly<Record<(typeof CERTIFICATE_FIELDS)[number], string>>;

export function userCertificates(spec: PmemCSIDeploymentSpec | undefined): UserCertificates | undefined {
  if (spec === undefined) return undefined;
  const entries = CERTIFICATE_FIELDS.map((f) => [f, spec[f]] as const);
  if (!entries.every(([, v]) => typeof v === 'string' && v !== '')) return undefined;
  return Object.fromEntries(entries) as UserCertificates;
}
