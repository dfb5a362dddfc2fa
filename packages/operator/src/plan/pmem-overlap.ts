// One driver per node's PMEM (issue 32). Two PmemCSIDeployments whose device modes both manage
// PMEM (lvm and direct do) and whose node selectors can match the same node would run two node
// drivers there, both carving namespaces and volume groups out of the same regions; a warning
// (what this module gave before) did not keep them apart. Now only the earlier one runs there, by
// the order of the ownership rule (ownership.ts `precedence`: creationTimestamp, then the name
// that sorts first; api PMEM_OVERLAP_RULE), which every operator replica computes alike from what
// the API server stores. The later one's node DaemonSet gets a required node affinity that keeps
// it off every node an earlier PMEM-managing node selector matches (node-exclusion.ts), so the
// DaemonSet controller never schedules it there — on nodes labelled later too, without waiting for
// a reconcile. The earlier one is never kept off: the order only looks back. Because the earliest
// deployment that matches a node runs there, "matches an earlier selector" is exactly "an earlier
// driver manages this node's PMEM", however many deployments overlap.
// Which deployments count as earlier PMEM-managing ones:
// - lvm or direct by their spec, or by the device mode their node DaemonSet was deployed with (a
//   refused change to emulated keeps an lvm driver running: device-mode-guard.ts);
// - also while being deleted: their node pods run until the garbage collector removed them. Once
//   one is gone, the CR informer's DELETED event requeues every CR, and the later one's affinity
//   drops the exclusion: it takes those nodes over (its node pods roll to the new affinity);
// - not those refused for a name collision (ownership.ts): they write nothing and run nothing; the
//   winner of that collision counts by its own selector. Nor a CR whose names collide with this
//   one: then one of the two is refused anyway.
// emulated (and fake) mode does not count, on either side: such a driver manages no PMEM, only
// sparse files in its own state directory (/var/lib/<driver name>/emulated, distinct for every
// driver name) and the loop devices attached to them (it never touches a loop device whose backing
// file is not its own). It shares nothing with another driver on the same node but the disk, so it
// neither keeps others off nor is kept off.
// The later deployment's status says so: PmemOverlap True (NodesExcluded) naming the earlier
// deployments, how many nodes it is kept off now and the first of them by name (the operator's
// Node informer; no list per reconcile), or True (TooManyExclusionTerms) when the affinity would
// exceed PMEM_OVERLAP_MAX_NODE_SELECTOR_TERMS: then the node driver runs on no node and the
// deployment is refused (phase Failed) — running it without the exclusion would break the rule.
// Like Conflict, the condition stays once seen and turns False (NoOverlap) when the overlap ends.
import {
  PMEM_DEVICE_MODES,
  PMEM_OVERLAP_MAX_NODE_SELECTOR_TERMS,
  SPEC_DEFAULTS,
  formatTimestamp,
  getCondition,
  objectNamesCollide,
  type ConditionUpdate,
  type DeploymentCondition,
} from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import type { V1NodeSelectorTerm } from '@kubernetes/client-node';
import { NO_NODE_TERM, disjoint, matchesSelector, nodeExclusion, type LabelSelector } from './node-exclusion.js';
import { precedence } from './ownership.js';

export const PMEM_OVERLAP_REASONS = {
  excluded: 'NodesExcluded',
  tooMany: 'TooManyExclusionTerms',
  none: 'NoOverlap',
} as const;

/** How many names of nodes kept off the message lists (sorted), before "and K more". */
export const KEPT_OFF_NAMES_SHOWN = 10;

/** Device modes whose node driver manages the node's PMEM (not emulated, not fake). */
const PMEM_MODES: readonly string[] = PMEM_DEVICE_MODES;
export const managesPmem = (mode: string | undefined): boolean => mode !== undefined && PMEM_MODES.includes(mode);

/** A CR as the informer (client model metadata) or the API types (string timestamps) have it. */
interface DeploymentLike {
  readonly metadata: {
    readonly name: string;
    readonly uid?: string | undefined;
    readonly creationTimestamp?: Date | string | undefined;
  };
  readonly spec?: { readonly nodeSelector?: Readonly<Record<string, string>>; readonly deviceMode?: string };
}

const selectorOf = (d: DeploymentLike): LabelSelector => d.spec?.nodeSelector ?? SPEC_DEFAULTS.nodeSelector;
const modeOf = (d: DeploymentLike): string => d.spec?.deviceMode ?? SPEC_DEFAULTS.deviceMode;
const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The deployment whose node driver runs on a node, as far as this one is concerned. */
export interface DeploymentPlacement {
  readonly name: string;
  readonly uid?: string | undefined;
  readonly creationTimestamp?: Date | string | undefined;
  /** The device mode it runs (for an earlier one: its spec's, or the deployed one's when that manages PMEM). */
  readonly deviceMode: string;
  readonly nodeSelector: LabelSelector;
}

/** This deployment as it will be deployed: the effective (defaulted, possibly guarded) spec. */
export function placementOf(
  cr: DeploymentLike,
  spec: { readonly deviceMode: string; readonly nodeSelector: LabelSelector },
): DeploymentPlacement {
  return {
    name: cr.metadata.name,
    uid: cr.metadata.uid,
    creationTimestamp: cr.metadata.creationTimestamp,
    deviceMode: spec.deviceMode,
    nodeSelector: spec.nodeSelector,
  };
}

const asCreated = (p: DeploymentPlacement): { metadata: { name: string; creationTimestamp?: Date | string } } => ({
  metadata: {
    name: p.name,
    ...(p.creationTimestamp === undefined ? {} : { creationTimestamp: p.creationTimestamp }),
  },
});

/** True when another CR in `deployments` keeps `d`'s object names (ownership.ts): `d` runs nothing. */
function refusedForNames(d: DeploymentLike, deployments: readonly DeploymentLike[]): boolean {
  return deployments.some((o) => objectNamesCollide(o.metadata.name, d.metadata.name) && precedence(o, d) < 0);
}

/**
 * The deployments in `deployments` that come before `mine` by the ownership order, manage PMEM and
 * whose node selectors can match a node that `mine` selects, first first. Empty when `mine` itself
 * manages no PMEM. `deployedMode` answers the device mode a CR's node DaemonSet was deployed with.
 */
export function earlierPmemDeployments(
  mine: DeploymentPlacement,
  deployments: readonly KubeObject[],
  deployedMode: (crName: string) => string | undefined = () => undefined,
): DeploymentPlacement[] {
  if (!managesPmem(mine.deviceMode)) return [];
  const all = deployments as readonly DeploymentLike[];
  return all
    .filter(
      (d) =>
        d.metadata.uid !== mine.uid &&
        d.metadata.name !== mine.name &&
        !objectNamesCollide(d.metadata.name, mine.name) &&
        precedence(d, asCreated(mine)) < 0 &&
        !refusedForNames(d, all) &&
        !disjoint(selectorOf(d), mine.nodeSelector),
    )
    .map((d) => {
      const deployed = deployedMode(d.metadata.name);
      const deviceMode =
        deployed !== undefined && managesPmem(deployed) && !managesPmem(modeOf(d)) ? deployed : modeOf(d);
      return placementOf(d, { deviceMode, nodeSelector: selectorOf(d) });
    })
    .filter((d) => managesPmem(d.deviceMode))
    .sort((a, b) => precedence(asCreated(a), asCreated(b)));
}

/** What the overlap means for one reconcile: the node DaemonSet's exclusion and the PmemOverlap condition. */
export interface PmemOverlapPlan {
  /** Required node affinity terms that keep the node DaemonSet off the earlier deployments' nodes; undefined: none. */
  readonly nodeExclusion?: readonly V1NodeSelectorTerm[];
  readonly condition?: ConditionUpdate;
  /** Set when the exclusion cannot be expressed: why the deployment is refused (its node driver runs on no node). */
  readonly refusal?: string;
}

/** One earlier deployment as the message names it, e.g. `"pmem-lvm" (lvm on storage=pmem, created first)`. */
function describeEarlier(d: DeploymentPlacement, mine: DeploymentPlacement): string {
  const labels = Object.entries(d.nodeSelector)
    .sort(([a], [b]) => byCodeUnit(a, b))
    .map(([k, v]) => `${k}=${v}`);
  const where = labels.length === 0 ? 'on every node' : `on ${labels.join(',')}`;
  const stamp = (t: Date | string | undefined): string =>
    t === undefined || Number.isNaN(new Date(t).getTime()) ? 'unknown' : formatTimestamp(new Date(t));
  const why =
    stamp(d.creationTimestamp) === stamp(mine.creationTimestamp)
      ? `created in the same second, its name sorts first`
      : `created first, ${stamp(d.creationTimestamp)}`;
  return `"${d.name}" (${d.deviceMode} ${where}, ${why})`;
}

/** "a, b, c and 4 more" of the sorted names, or "none now". */
function describeNodes(names: readonly string[]): string {
  if (names.length === 0) return 'none now';
  const shown = names.slice(0, KEPT_OFF_NAMES_SHOWN).join(', ');
  return names.length > KEPT_OFF_NAMES_SHOWN ? `${shown} and ${names.length - KEPT_OFF_NAMES_SHOWN} more` : shown;
}

/** The nodes `mine` selects that an earlier selector matches, sorted by name. */
export function nodesKeptOff(
  mine: DeploymentPlacement,
  earlier: readonly DeploymentPlacement[],
  nodes: readonly KubeObject[],
): string[] {
  return nodes
    .filter((n) => {
      const labels = n.metadata.labels ?? {};
      return matchesSelector(labels, mine.nodeSelector) && earlier.some((d) => matchesSelector(labels, d.nodeSelector));
    })
    .map((n) => n.metadata.name)
    .sort(byCodeUnit);
}

function keptOffMessage(mine: DeploymentPlacement, earlier: readonly DeploymentPlacement[], keptOff: string[]): string {
  const who =
    earlier.length === 1
      ? 'an earlier PmemCSIDeployment manages'
      : `${earlier.length} earlier PmemCSIDeployments manage`;
  return (
    `kept off ${keptOff.length} ${keptOff.length === 1 ? 'node' : 'nodes'} where ${who} PMEM: ` +
    `${earlier.map((d) => describeEarlier(d, mine)).join(', ')}. Nodes kept off: ${describeNodes(keptOff)}. ` +
    "One driver per node's PMEM: the node DaemonSet's required node affinity excludes every node these node selectors match, " +
    'also nodes labelled later; this deployment takes a node over once no earlier one selects it any more.'
  );
}

function tooManyMessage(mine: DeploymentPlacement, earlier: readonly DeploymentPlacement[], keptOff: string[]): string {
  return (
    `the node selectors of ${earlier.length} earlier PmemCSIDeployments in a PMEM-managing device mode overlap this one's ` +
    `(${earlier.map((d) => describeEarlier(d, mine)).join(', ')}) and keeping off their nodes would need more than ` +
    `${PMEM_OVERLAP_MAX_NODE_SELECTOR_TERMS} node selector terms (an earlier node selector with n labels this one lacks takes n terms, several multiply): ` +
    `the node driver runs on no node (of the nodes it selects, ${keptOff.length} are theirs: ${describeNodes(keptOff)}). ` +
    'Give the deployments disjoint node selectors (the same key with different values, e.g. storage=pmem-a and storage=pmem-b), or the earlier ones fewer labels.'
  );
}

/**
 * The node DaemonSet's exclusion and PmemOverlap for `mine` after `earlier`
 * (earlierPmemDeployments) on `nodes`. Without earlier deployments: no affinity, and PmemOverlap
 * False (NoOverlap) when `conditions` had one, else no condition.
 */
export function pmemOverlapPlan(
  mine: DeploymentPlacement,
  earlier: readonly DeploymentPlacement[],
  nodes: readonly KubeObject[],
  conditions: readonly DeploymentCondition[] | undefined,
): PmemOverlapPlan {
  if (earlier.length === 0) {
    if (getCondition(conditions, 'PmemOverlap') === undefined) return {};
    return {
      condition: {
        type: 'PmemOverlap',
        status: 'False',
        reason: PMEM_OVERLAP_REASONS.none,
        message: 'no earlier PmemCSIDeployment in a PMEM-managing device mode can run on the nodes of this one',
      },
    };
  }
  const exclusion = nodeExclusion(
    mine.nodeSelector,
    earlier.map((d) => d.nodeSelector),
    PMEM_OVERLAP_MAX_NODE_SELECTOR_TERMS,
  );
  const keptOff = nodesKeptOff(mine, earlier, nodes);
  if (exclusion.kind === 'too-many') {
    const message = tooManyMessage(mine, earlier, keptOff);
    return {
      nodeExclusion: [NO_NODE_TERM],
      condition: { type: 'PmemOverlap', status: 'True', reason: PMEM_OVERLAP_REASONS.tooMany, message },
      refusal: message,
    };
  }
  const condition: ConditionUpdate = {
    type: 'PmemOverlap',
    status: 'True',
    reason: PMEM_OVERLAP_REASONS.excluded,
    message: keptOffMessage(mine, earlier, keptOff),
  };
  if (exclusion.kind === 'no-node') return { nodeExclusion: [NO_NODE_TERM], condition };
  // 'none' cannot follow from overlapping earlier selectors; kept for the type's sake.
  return exclusion.kind === 'terms' ? { nodeExclusion: exclusion.terms, condition } : { condition };
}
