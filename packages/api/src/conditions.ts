// Status conditions in the Kubernetes convention, upserted by type. The Go operator wrote
// condition updates to a copy, so they never changed after being set; here every helper returns a
// new array and lastTransitionTime moves exactly when status changes.
import { CONDITION_MESSAGE_MAX_LENGTH, CONDITION_REASON_MAX_LENGTH, CONDITION_REASON_PATTERN } from './crd/values.js';
import type { ConditionStatus, ConditionType, DeploymentCondition } from './generated/pmemcsideployment.js';

const REASON_RE = new RegExp(CONDITION_REASON_PATTERN);
const TRUNCATED = '…';

export interface ConditionUpdate {
  readonly type: ConditionType;
  readonly status: ConditionStatus;
  /** CamelCase, machine-readable (e.g. `CertificatesCreated`). */
  readonly reason: string;
  readonly message: string;
}

export interface ConditionClock {
  /** metadata.generation of the object whose state the condition describes. */
  readonly generation: number;
  readonly now: Date;
}

/** RFC 3339 with whole seconds, as Kubernetes writes metav1.Time. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** True for reasons the CRD accepts: CamelCase, starting upper-case, at most 1024 characters. */
export function isValidConditionReason(reason: string): boolean {
  return reason.length <= CONDITION_REASON_MAX_LENGTH && REASON_RE.test(reason);
}

/**
 * A new list with `update` applied: replaces the condition of the same type (keeping its
 * position) or appends it. lastTransitionTime changes only when status changes.
 * Throws RangeError for a reason that is not CamelCase: reasons are constants in our code, so a
 * bad one is a bug that must not reach the apiserver (which would reject the whole status).
 */
export function upsertCondition(
  conditions: readonly DeploymentCondition[] | undefined,
  update: ConditionUpdate,
  clock: ConditionClock,
): DeploymentCondition[] {
  if (!isValidConditionReason(update.reason)) {
    throw new RangeError(
      `condition ${update.type}: reason ${JSON.stringify(update.reason)} must be CamelCase (${CONDITION_REASON_PATTERN}, at most ${CONDITION_REASON_MAX_LENGTH} characters)`,
    );
  }
  const list = conditions ?? [];
  const previous = list.find((c) => c.type === update.type);
  const next: DeploymentCondition = {
    type: update.type,
    status: update.status,
    observedGeneration: clock.generation,
    lastTransitionTime:
      previous !== undefined && previous.status === update.status
        ? previous.lastTransitionTime
        : formatTimestamp(clock.now),
    reason: update.reason,
    message: truncate(update.message, CONDITION_MESSAGE_MAX_LENGTH),
  };
  return previous === undefined
    ? [...list.map((c) => ({ ...c })), next]
    : list.map((c) => (c.type === update.type ? next : { ...c }));
}

export function getCondition(
  conditions: readonly DeploymentCondition[] | undefined,
  type: ConditionType,
): DeploymentCondition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isConditionTrue(conditions: readonly DeploymentCondition[] | undefined, type: ConditionType): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

// The CRD caps messages; an over-long one (e.g. a whole TLS error chain) would fail the status write.
function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - TRUNCATED.length)}${TRUNCATED}`;
}
