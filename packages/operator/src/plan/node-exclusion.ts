// The required node affinity that keeps a node DaemonSet off the nodes of earlier PMEM-managing
// deployments (plan/pmem-overlap.ts decides which ones). A node selector is a conjunction of
// labels; the pod's own nodeSelector stays as it is and the affinity is ANDed with it, so the
// affinity only has to say "matches none of the earlier selectors":
//   NOT (a=1 AND b=2)  =  a NotIn [1]  OR  b NotIn [2]        (one clause per earlier selector)
// and for several earlier selectors the AND of those clauses. nodeSelectorTerms are ORed and the
// matchExpressions of one term ANDed, i.e. the affinity is in disjunctive normal form, so the
// clauses are multiplied out: one literal of every clause per term. NotIn also matches nodes
// without the label, which is what "not a=1" means.
// Simplifications before multiplying, so that common cases stay small and the bound is reached
// only by genuinely complex selectors:
// - an earlier selector that requires another value for a key of the own selector never matches
//   the same node: no clause (the two are disjoint);
// - a literal on a key the own selector requires with the same value can never hold together with
//   the nodeSelector: dropped; a clause left empty means that the earlier selector matches every
//   node the own one matches: the DaemonSet is kept off every node (NO_NODE_TERM);
// - a clause that contains another one is implied by it: dropped; a term whose expressions include
//   another term's (same keys, at least those values) is implied by it: dropped.
// The terms are built clause by clause and the work stops as soon as they exceed the limit, so a
// pathological set of selectors costs at most limit × labels term operations.
import type { V1NodeSelectorRequirement, V1NodeSelectorTerm } from '@kubernetes/client-node';
import { API_GROUP } from '@pmem-csi/api';

export type LabelSelector = Readonly<Record<string, string>>;

/** What keeps a node DaemonSet off the nodes of earlier selectors. */
export type NodeExclusion =
  /** Nothing to exclude: no affinity. */
  | { readonly kind: 'none' }
  /** Required node affinity terms (ORed) that match exactly the nodes no earlier selector matches. */
  | { readonly kind: 'terms'; readonly terms: readonly V1NodeSelectorTerm[] }
  /** An earlier selector matches every node the own one matches: no node is left. */
  | { readonly kind: 'no-node' }
  /** The terms would exceed `limit`; refused. */
  | { readonly kind: 'too-many'; readonly limit: number };

/**
 * A term no node matches: a label that exists and does not exist. Written for "kept off every
 * node" (and for a refused exclusion), because an affinity needs at least one term and an empty
 * nodeSelectorTerms list is invalid. The key says why when someone reads the DaemonSet.
 */
export const NO_NODE_KEY = `${API_GROUP}/kept-off-for-earlier-pmem-deployment`;
export const NO_NODE_TERM: V1NodeSelectorTerm = {
  matchExpressions: [
    { key: NO_NODE_KEY, operator: 'Exists' },
    { key: NO_NODE_KEY, operator: 'DoesNotExist' },
  ],
};

/** key -> excluded values (NotIn), the AND of one term. */
type Term = ReadonlyMap<string, ReadonlySet<string>>;
/** [key, value]: "key NotIn [value]", one literal of a clause (the clauses are ANDed, literals ORed). */
type Literal = readonly [string, string];

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const literalKey = ([k, v]: Literal): string => JSON.stringify([k, v]);

/** True when the two selectors require different values for a common key (they never match one node). */
export function disjoint(a: LabelSelector, b: LabelSelector): boolean {
  return Object.entries(a).some(([key, value]) => key in b && b[key] !== value);
}

/** The clause excluding `earlier` given `own`: undefined when disjoint, [] when it matches all of `own`'s nodes. */
function clauseOf(own: LabelSelector, earlier: LabelSelector): Literal[] | undefined {
  if (disjoint(own, earlier)) return undefined;
  return Object.entries(earlier)
    .filter(([key]) => !(key in own))
    .sort(([a], [b]) => byCodeUnit(a, b));
}

/** The clauses without those implied by another one (a clause's literals include another's). */
function minimalClauses(clauses: readonly Literal[][]): Literal[][] {
  const sets = clauses.map((c) => new Set(c.map(literalKey)));
  const includes = (outer: Set<string>, inner: Set<string>): boolean => [...inner].every((l) => outer.has(l));
  return clauses.filter((_, i) =>
    sets.every((other, j) => {
      const mine = sets[i] ?? new Set<string>();
      if (j === i || !includes(mine, other)) return true;
      // Equal clauses: keep the first. A strict superset is implied by the smaller one: drop it.
      return other.size === mine.size && j > i;
    }),
  );
}

const termKey = (t: Term): string =>
  JSON.stringify([...t.entries()].sort(([a], [b]) => byCodeUnit(a, b)).map(([k, vs]) => [k, [...vs].sort(byCodeUnit)]));

/** True when every node matching `b` matches `a` too (a's expressions are among b's): b is redundant. */
function implies(b: Term, a: Term): boolean {
  return [...a].every(([key, values]) => {
    const other = b.get(key);
    return other !== undefined && [...values].every((v) => other.has(v));
  });
}

/** The terms without duplicates and without those another term implies. */
function minimalTerms(terms: readonly Term[]): Term[] {
  const unique = [...new Map(terms.map((t) => [termKey(t), t])).values()];
  return unique.filter((t) => !unique.some((other) => other !== t && implies(t, other)));
}

function withLiteral(term: Term, [key, value]: Literal): Term {
  const next = new Map(term);
  next.set(key, new Set([...(term.get(key) ?? []), value]));
  return next;
}

function toSelectorTerm(term: Term): V1NodeSelectorTerm {
  const expressions: V1NodeSelectorRequirement[] = [...term.entries()]
    .sort(([a], [b]) => byCodeUnit(a, b))
    .map(([key, values]) => ({ key, operator: 'NotIn', values: [...values].sort(byCodeUnit) }));
  return { matchExpressions: expressions };
}

/**
 * The exclusion that keeps a DaemonSet whose pods select `own` off every node that one of the
 * `earlier` selectors matches, in at most `limit` node selector terms.
 */
export function nodeExclusion(own: LabelSelector, earlier: readonly LabelSelector[], limit: number): NodeExclusion {
  const clauses: Literal[][] = [];
  for (const selector of earlier) {
    const clause = clauseOf(own, selector);
    if (clause === undefined) continue;
    if (clause.length === 0) return { kind: 'no-node' };
    clauses.push(clause);
  }
  if (clauses.length === 0) return { kind: 'none' };
  let terms: Term[] = [new Map()];
  for (const clause of minimalClauses(clauses)) {
    terms = minimalTerms(terms.flatMap((t) => clause.map((literal) => withLiteral(t, literal))));
    if (terms.length > limit) return { kind: 'too-many', limit };
  }
  return {
    kind: 'terms',
    terms: terms.map(toSelectorTerm).sort((a, b) => byCodeUnit(JSON.stringify(a), JSON.stringify(b))),
  };
}

/** True when a node with `labels` matches `selector` (every key with that value). */
export function matchesSelector(labels: LabelSelector, selector: LabelSelector): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}
