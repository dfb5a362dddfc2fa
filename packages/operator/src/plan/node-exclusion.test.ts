import type { V1NodeSelectorTerm } from '@kubernetes/client-node';
import { NO_NODE_TERM, disjoint, matchesSelector, nodeExclusion, type LabelSelector } from './node-exclusion.js';

const notIn = (key: string, ...values: string[]): { key: string; operator: string; values: string[] } => ({
  key,
  operator: 'NotIn',
  values,
});

/** Whether a node with `labels` satisfies the terms (ORed terms, ANDed NotIn expressions), as the scheduler judges. */
function admits(terms: readonly V1NodeSelectorTerm[], labels: LabelSelector): boolean {
  return terms.some((t) =>
    (t.matchExpressions ?? []).every((e) => {
      const value = labels[e.key];
      if (e.operator === 'NotIn') return value === undefined || !(e.values ?? []).includes(value);
      if (e.operator === 'Exists') return value !== undefined;
      if (e.operator === 'DoesNotExist') return value === undefined;
      throw new Error(`unexpected operator ${e.operator}`);
    }),
  );
}

/** Every node over `keys` with values from '1', '2' or absent. */
function allNodes(keys: readonly string[]): LabelSelector[] {
  return keys.reduce<LabelSelector[]>(
    (nodes, key) => nodes.flatMap((n) => [n, { ...n, [key]: '1' }, { ...n, [key]: '2' }]),
    [{}],
  );
}

describe('nodeExclusion', () => {
  it('excludes a one-label earlier selector with one NotIn term', () => {
    expect(nodeExclusion({ storage: 'pmem' }, [{ 'pmem-zone': 'z1' }], 32)).toEqual({
      kind: 'terms',
      terms: [{ matchExpressions: [notIn('pmem-zone', 'z1')] }],
    });
  });

  it('excludes a multi-label selector {a: 1, b: 2} with (a NotIn [1]) OR (b NotIn [2]), each term ANDed with the own selector', () => {
    expect(nodeExclusion({ storage: 'pmem' }, [{ a: '1', b: '2' }], 32)).toEqual({
      kind: 'terms',
      terms: [{ matchExpressions: [notIn('a', '1')] }, { matchExpressions: [notIn('b', '2')] }],
    });
  });

  it('multiplies the clauses of two earlier selectors into terms, merging NotIn values of one key', () => {
    const result = nodeExclusion(
      {},
      [
        { a: '1', b: '2' },
        { a: '3', c: '4' },
      ],
      32,
    );
    expect(result).toEqual({
      kind: 'terms',
      terms: [
        { matchExpressions: [notIn('a', '1', '3')] },
        { matchExpressions: [notIn('a', '1'), notIn('c', '4')] },
        { matchExpressions: [notIn('a', '3'), notIn('b', '2')] },
        { matchExpressions: [notIn('b', '2'), notIn('c', '4')] },
      ],
    });
  });

  it('matches exactly the nodes the own selector matches and no earlier one does (every node over 4 keys)', () => {
    const own: LabelSelector = { a: '1' };
    const earlier: LabelSelector[] = [{ b: '1', c: '2' }, { a: '1', d: '1' }, { c: '1' }, { b: '2', a: '2' }];
    const result = nodeExclusion(own, earlier, 32);
    if (result.kind !== 'terms') throw new Error(`expected terms, got ${result.kind}`);
    for (const node of allNodes(['a', 'b', 'c', 'd'])) {
      const expected = matchesSelector(node, own) && !earlier.some((e) => matchesSelector(node, e));
      expect({ node, runs: matchesSelector(node, own) && admits(result.terms, node) }).toEqual({
        node,
        runs: expected,
      });
    }
  });

  it('leaves out disjoint selectors, literals the own selector already requires, and clauses implied by others', () => {
    // Disjoint: the same key, another value.
    expect(disjoint({ storage: 'pmem-a' }, { storage: 'pmem-b' })).toBe(true);
    expect(nodeExclusion({ storage: 'pmem-a' }, [{ storage: 'pmem-b', zone: 'z1' }], 32)).toEqual({ kind: 'none' });
    // storage=pmem is required by both: only zone tells the nodes apart.
    expect(nodeExclusion({ storage: 'pmem' }, [{ storage: 'pmem', zone: 'z1' }], 32)).toEqual({
      kind: 'terms',
      terms: [{ matchExpressions: [notIn('zone', 'z1')] }],
    });
    // {a: 1} excludes every node {a: 1, b: 2} would: one term, not two.
    expect(nodeExclusion({}, [{ a: '1', b: '2' }, { a: '1' }], 32)).toEqual({
      kind: 'terms',
      terms: [{ matchExpressions: [notIn('a', '1')] }],
    });
    expect(nodeExclusion({}, [{ a: '1' }, { a: '1' }], 32)).toEqual({
      kind: 'terms',
      terms: [{ matchExpressions: [notIn('a', '1')] }],
    });
  });

  it('keeps off every node when an earlier selector matches all nodes of the own one', () => {
    expect(nodeExclusion({ storage: 'pmem', zone: 'z1' }, [{ storage: 'pmem' }], 32)).toEqual({ kind: 'no-node' });
    expect(nodeExclusion({ storage: 'pmem' }, [{}], 32)).toEqual({ kind: 'no-node' });
    expect(admits([NO_NODE_TERM], {})).toBe(false);
    expect(admits([NO_NODE_TERM], { 'pmem-csi.intel.com/kept-off-for-earlier-pmem-deployment': 'x' })).toBe(false);
  });

  it('refuses past the limit: two earlier selectors of 6 labels need 36 terms', () => {
    const six = (p: string): LabelSelector => Object.fromEntries([1, 2, 3, 4, 5, 6].map((i) => [`${p}${i}`, 'x']));
    expect(nodeExclusion({}, [six('a'), six('b')], 32)).toEqual({ kind: 'too-many', limit: 32 });
    expect(nodeExclusion({}, [six('a'), six('b')], 36)).toMatchObject({ kind: 'terms' });
    // Bounded work: 20 earlier selectors of 8 labels each stop at the second clause.
    const many = Array.from({ length: 20 }, (_, i) =>
      Object.fromEntries([1, 2, 3, 4, 5, 6, 7, 8].map((j) => [`k${i}-${j}`, 'v'])),
    );
    expect(nodeExclusion({}, many, 32)).toEqual({ kind: 'too-many', limit: 32 });
  });
});
