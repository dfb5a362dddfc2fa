// The status side of taking over a PmemCSIDeployment from the Go operator (PMEM-CSI v1.x):
// - GoOperatorFields, the decision about its spec fields that this driver has no counterpart for
//   (@pmem-csi/api goOperatorFieldFindings): True (Accepted) when every value meant what this
//   driver does anyway, True (Refused) when one needs its scheduler extender or pod webhook (the
//   spec is then invalid: DriverDeployed False, InvalidSpec), False (NotSet) once none is left;
//   absent when the spec never had one. Events GoOperatorFieldsAccepted (Normal) and
//   GoOperatorFieldsRefused (Warning) when it turns True or changes its reason.
// - The Go operator's status conditions: it wrote DriverDeployed (and in v0.x CertsReady,
//   CertsVerified) with a sentence as reason, lastUpdateTime and no lastTransitionTime or message,
//   which our CRD requires. Such conditions are dropped before ours are upserted (a condition
//   kept with its missing lastTransitionTime would make the status write invalid), with one event
//   GoOperatorStatusConverted naming them.
import {
  CONDITION_TYPES,
  getCondition,
  goOperatorFieldFindings,
  isValidConditionReason,
  type ConditionUpdate,
  type DeploymentCondition,
  type PmemCSIDeploymentSpec,
  type PmemCSIDeploymentStatus,
} from '@pmem-csi/api';

export const GO_FIELDS_REASONS = { accepted: 'Accepted', refused: 'Refused', notSet: 'NotSet' } as const;

const NOT_SET_MESSAGE =
  'the spec carries no field of the Go operator (controllerTLSSecret, mutatePods, schedulerNodePort) any more';

/** GoOperatorFields for `spec`, given the conditions so far; undefined when it is not to be written. */
export function goOperatorFieldsCondition(
  spec: PmemCSIDeploymentSpec | undefined,
  previous: readonly DeploymentCondition[] | undefined,
): ConditionUpdate | undefined {
  const findings = goOperatorFieldFindings(spec ?? {});
  if (findings.length === 0) {
    return getCondition(previous, 'GoOperatorFields') === undefined
      ? undefined
      : { type: 'GoOperatorFields', status: 'False', reason: GO_FIELDS_REASONS.notSet, message: NOT_SET_MESSAGE };
  }
  const refused = findings.filter((f) => !f.accepted);
  if (refused.length > 0) {
    return {
      type: 'GoOperatorFields',
      status: 'True',
      reason: GO_FIELDS_REASONS.refused,
      message:
        `refused: ${refused.map((f) => f.message).join('; ')}. Nothing of this deployment is written until then; a Go driver still deployed keeps running` +
        (refused.length < findings.length
          ? `. Accepted: ${findings
              .filter((f) => f.accepted)
              .map((f) => f.message)
              .join('; ')}`
          : ''),
    };
  }
  return {
    type: 'GoOperatorFields',
    status: 'True',
    reason: GO_FIELDS_REASONS.accepted,
    message: `${findings.map((f) => f.message).join('; ')}. Nothing to do; the fields may be removed`,
  };
}

const KNOWN_TYPES: readonly string[] = CONDITION_TYPES;

/**
 * The conditions of `status` that this operator did not write: of a type it does not know, or
 * without the fields its CRD requires (lastTransitionTime, a CamelCase reason, a message).
 */
export function foreignConditions(status: PmemCSIDeploymentStatus | undefined): DeploymentCondition[] {
  return (status?.conditions ?? []).filter(
    (c) =>
      !KNOWN_TYPES.includes(c.type) ||
      typeof c.lastTransitionTime !== 'string' ||
      typeof c.message !== 'string' ||
      typeof c.reason !== 'string' ||
      !isValidConditionReason(c.reason),
  );
}

/** `status` without its foreign conditions (unchanged when it has none). */
export function withoutForeignConditions(
  status: PmemCSIDeploymentStatus | undefined,
): PmemCSIDeploymentStatus | undefined {
  const foreign = foreignConditions(status);
  if (status === undefined || foreign.length === 0) return status;
  return { ...status, conditions: (status.conditions ?? []).filter((c) => !foreign.includes(c)) };
}

/** The message of the GoOperatorStatusConverted event: each dropped condition with its reason. */
export function describeConvertedConditions(foreign: readonly DeploymentCondition[]): string {
  const shown = foreign.map((c) => `${c.type}=${c.status} (${JSON.stringify(c.reason ?? '')})`).join(', ');
  return `replaced ${foreign.length} status condition(s) in the Go operator's shape (a sentence as reason, no lastTransitionTime or message): ${shown}`;
}
