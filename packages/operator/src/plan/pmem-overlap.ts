// One driver per node's PMEM. Two PmemCSIDeployments whose device modes both manage PMEM (lvm and
// direct do) and whose node selectors can match the same node would run two node drivers there,
// both managing the same regions and namespaces. emulated mode does not count, on either side: it
// manages no PMEM, only sparse files in its own state directory (/var/lib/<driver name>/emulated,
// distinct for every driver name; names whose object names collide get Conflict instead) and the
// loop devices attached to them (it never touches a loop device whose backing file is not its
// own). An emulated driver beside an lvm or direct one, or beside another emulated one, shares no
// storage with it; both only take space on the node's disk. The operator
// has no cache of Nodes, so "can match the same node" is decided on the label maps alone: two
// nodeSelectors overlap unless they require different values for the same key (a node carrying
// the union of both maps matches both). The deployment created later (ownership.ts precedence:
// creationTimestamp, then name) gets PmemOverlap True naming the earlier one and the labels of a
// node that would match both, and a Warning event; it is a warning, both keep running. What an
// administrator does: give the deployments disjoint node selectors — the same key with different
// values (e.g. storage=pmem-a and storage=pmem-b), and label each node for exactly one of them.
// Like Conflict, the condition stays once seen and turns False (NoOverlap) when the overlap ends.
// CRs whose object names collide are left out (they get Conflict; only one of them runs), and so
// are CRs being deleted.
import {
  PMEM_DEVICE_MODES,
  SPEC_DEFAULTS,
  getCondition,
  objectNamesCollide,
  type ConditionUpdate,
} from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import type { OwnerDeployment } from '../objects/context.js';
import { precedence } from './ownership.js';

export const PMEM_OVERLAP_REASONS = { overlap: 'OverlappingNodeSelector', none: 'NoOverlap' } as const;

/** Device modes whose node driver manages the node's PMEM (not emulated). */
const PMEM_MODES: readonly string[] = PMEM_DEVICE_MODES;

/** A CR as the informer (client model metadata) or the API types (string timestamps) have it. */
interface DeploymentLike {
  readonly metadata: {
    readonly name: string;
    readonly uid?: string | undefined;
    readonly creationTimestamp?: Date | string | undefined;
    readonly deletionTimestamp?: unknown;
  };
  readonly spec?: { readonly nodeSelector?: Readonly<Record<string, string>>; readonly deviceMode?: string };
}

const selectorOf = (d: DeploymentLike): Readonly<Record<string, string>> =>
  d.spec?.nodeSelector ?? SPEC_DEFAULTS.nodeSelector;
const modeOf = (d: DeploymentLike): string => d.spec?.deviceMode ?? SPEC_DEFAULTS.deviceMode;

/**
 * The labels of a node that both selectors match (their union), or undefined when they require
 * different values for the same key and so never match the same node.
 */
export function selectorOverlap(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): Record<string, string> | undefined {
  for (const [key, value] of Object.entries(a)) if (key in b && b[key] !== value) return undefined;
  return Object.fromEntries(Object.entries({ ...a, ...b }).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
}

const describeLabels = (labels: Readonly<Record<string, string>>): string => {
  const terms = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
  return terms.length === 0 ? 'any node (both selectors are empty)' : `a node labelled ${terms.join(',')}`;
};

/**
 * PmemOverlap for `cr` among `deployments`: True when an earlier deployment may run a PMEM-managing
 * driver on the same nodes, False (NoOverlap) when it had the condition and no longer overlaps,
 * undefined when it never had one and does not overlap.
 */
export function pmemOverlap(cr: OwnerDeployment, deployments: readonly KubeObject[]): ConditionUpdate | undefined {
  const mine = selectorOf(cr);
  const earlier = PMEM_MODES.includes(modeOf(cr))
    ? (deployments as readonly DeploymentLike[])
        .filter(
          (d) =>
            d.metadata.uid !== cr.metadata.uid &&
            d.metadata.deletionTimestamp === undefined &&
            !objectNamesCollide(d.metadata.name, cr.metadata.name),
        )
        .filter((d) => PMEM_MODES.includes(modeOf(d)) && precedence(d, cr) < 0)
        .sort(precedence)
        .map((d) => ({ d, node: selectorOverlap(selectorOf(d), mine) }))
        .filter((x): x is { d: DeploymentLike; node: Record<string, string> } => x.node !== undefined)
    : [];
  const [first] = earlier;
  if (first === undefined) {
    return getCondition(cr.status?.conditions, 'PmemOverlap') === undefined
      ? undefined
      : {
          type: 'PmemOverlap',
          status: 'False',
          reason: PMEM_OVERLAP_REASONS.none,
          message: 'no earlier PmemCSIDeployment in a PMEM-managing device mode can run on the nodes of this one',
        };
  }
  const more = earlier.length > 1 ? ` (and ${earlier.length - 1} more earlier deployments overlap)` : '';
  return {
    type: 'PmemOverlap',
    status: 'True',
    reason: PMEM_OVERLAP_REASONS.overlap,
    message:
      `node selector overlaps with PmemCSIDeployment "${first.d.metadata.name}" (device mode ${modeOf(first.d)}, created earlier)${more}: ` +
      `${describeLabels(first.node)} would run both node drivers (${modeOf(cr)} and ${modeOf(first.d)}), and both would manage its PMEM. ` +
      'Both keep running; give the deployments disjoint node selectors (the same key with different values, e.g. storage=pmem-a and storage=pmem-b) and label each node for one of them.',
  };
}
