// The Go operator's spec fields that this driver has no counterpart for (GO_OPERATOR_FIELDS): the
// TLS Secret of its scheduler extender and pod webhook (controllerTLSSecret; the Go operator
// started both only with one), how it registered the webhook (mutatePods: Always made pod
// creation fail without the webhook's answer, Try was best effort, Never none; default Try, and
// ignored without controllerTLSSecret), and a node port for the extender's Service
// (schedulerNodePort, 0 = a cluster Service). This driver places pods with storage capacity
// tracking instead, so a value that meant "off" here is accepted and reported, and one that needs
// the extender or the webhook is refused, naming the field, the value and what to do: never
// accepted and then ignored.
import { GO_OPERATOR_FIELDS, MUTATE_PODS_ACCEPTED, type GoOperatorField } from '../crd/values.js';
import { badValue, describe, isPlainObject, type ValidationProblem } from './problem.js';

/** The decision about one Go operator field of a spec. */
export interface GoOperatorFieldFinding {
  readonly field: GoOperatorField;
  /** Dotted path, e.g. `spec.mutatePods`. */
  readonly path: string;
  readonly value: unknown;
  readonly accepted: boolean;
  /** One sentence: accepted and why, or the refusal in the validation message format. */
  readonly message: string;
}

const NO_EXTENDER =
  'this driver has no scheduler extender and no pod webhook: storage capacity tracking (CSIStorageCapacity) lets the default kube-scheduler place pods with late-binding PMEM volumes on nodes with room';
const REMOVE_EXTENDER =
  "remove the field; if the kube-scheduler's configuration names the Go driver's extender (the <prefix>-scheduler Service), remove it there first, as the Service goes with the Go driver";

type Decide = (value: unknown, path: string) => Omit<GoOperatorFieldFinding, 'field' | 'path' | 'value'>;

const accept = (path: string, value: unknown, why: string): ReturnType<Decide> => ({
  accepted: true,
  message: `${path}: ${describe(value)} accepted: ${why}`,
});

const refuse = (path: string, value: unknown, allowed: string): ReturnType<Decide> => ({
  accepted: false,
  message: badValue(path, value, allowed).message,
});

const DECISIONS: Readonly<Record<GoOperatorField, Decide>> = {
  controllerTLSSecret: (value, path) =>
    value === ''
      ? accept(
          path,
          value,
          'without a Secret the Go operator started neither its scheduler extender nor its pod webhook, as here',
        )
      : refuse(path, value, `"" or unset (${NO_EXTENDER}); ${REMOVE_EXTENDER}`),
  mutatePods: (value, path) =>
    typeof value === 'string' && (MUTATE_PODS_ACCEPTED as readonly string[]).includes(value)
      ? accept(
          path,
          value,
          value === 'Never'
            ? 'no pod webhook, as this driver has none'
            : 'the Go webhook was best effort (pods were created when it did not answer); this driver has none, pods are created unchanged',
        )
      : refuse(
          path,
          value,
          `${MUTATE_PODS_ACCEPTED.join(', ')} or unset ("Always" made pod creation fail without the Go driver's pod webhook; ${NO_EXTENDER}); remove the field or set it to Never`,
        ),
  schedulerNodePort: (value, path) =>
    value === 0
      ? accept(path, value, 'no node port for a scheduler extender, as this driver has none')
      : refuse(path, value, `0 or unset (${NO_EXTENDER}); ${REMOVE_EXTENDER}`),
};

/** The decision about every Go operator field that `spec` sets (null counts as unset), in GO_OPERATOR_FIELDS order. */
export function goOperatorFieldFindings(spec: unknown, path = 'spec'): GoOperatorFieldFinding[] {
  if (!isPlainObject(spec)) return [];
  return GO_OPERATOR_FIELDS.flatMap((field) => {
    const value = spec[field];
    if (value === undefined || value === null) return [];
    const fieldPath = `${path}.${field}`;
    return [{ field, path: fieldPath, value, ...DECISIONS[field](value, fieldPath) }];
  });
}

/** The spec-field check of one Go operator field: its refusal, if refused. */
export function goOperatorFieldCheck(field: GoOperatorField): (value: unknown, path: string) => ValidationProblem[] {
  return (value, path) => {
    const decision = DECISIONS[field](value, path);
    return decision.accepted ? [] : [{ path, message: decision.message }];
  };
}

/** The Go driver's image repository (Docker Hub) and the tags of its releases (v0.x, v1.x). */
export const GO_DRIVER_IMAGE_REPOSITORY = 'intel/pmem-csi-driver';
const GO_RELEASE_TAG = /^v?[01]\./;

/**
 * True for an image of a Go driver release (its repository on Docker Hub or a mirror of it, tagged
 * v0.x or v1.x): a Go user's pinned spec.image, a different program that does not take this
 * driver's flags. Other tags of that repository are left alone (this driver may be published there).
 */
export function isGoDriverImage(reference: string): boolean {
  const name = reference.split('@')[0] ?? '';
  const tag = /:([^/:]+)$/.exec(name)?.[1];
  if (tag === undefined || !GO_RELEASE_TAG.test(tag)) return false;
  const parts = name.slice(0, -tag.length - 1).split('/');
  const first = parts[0] ?? '';
  // A first part with '.' or ':' (or localhost) is a registry, as container tools read references.
  const registry = parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
  return (registry ? parts.slice(1) : parts).join('/') === GO_DRIVER_IMAGE_REPOSITORY;
}

/** What spec.image allows beyond the reference syntax. */
export const NOT_GO_DRIVER_IMAGE = `an image of this driver, or unset for the operator's own (${GO_DRIVER_IMAGE_REPOSITORY} with a v0.x or v1.x tag is the Go driver's image, which does not take this driver's flags: its pods would fail to start); remove the field`;
