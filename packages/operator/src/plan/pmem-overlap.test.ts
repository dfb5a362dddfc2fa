import type { V1DaemonSet } from '@kubernetes/client-node';
import { jest } from '@jest/globals';
import {
  DEVICE_MODE_ANNOTATION,
  LABEL_KEYS,
  deploymentObjectNames,
  getCondition,
  type PmemCSIDeploymentSpec,
} from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import { RESOURCES } from '../kube/resources.js';
import type { OwnerDeployment } from '../objects/context.js';
import { NO_NODE_TERM } from './node-exclusion.js';
import { earlierPmemDeployments, placementOf, pmemOverlapPlan, type DeploymentPlacement } from './pmem-overlap.js';
import { TEST_NAMESPACE, testDeployment } from '../testing/fixtures.js';
import { harness, recordLists, type Harness } from '../testing/harness.js';

jest.setTimeout(60_000); // the reconciler tests generate real certificates

const EARLY = '2026-03-01T10:00:00Z';
const LATE = '2026-03-01T10:05:00Z';
const LATER = '2026-03-01T10:10:00Z';

function cr(name: string, created: string, spec: PmemCSIDeploymentSpec = {}): OwnerDeployment {
  const base = testDeployment(spec, name);
  return { ...base, metadata: { ...base.metadata, name, uid: `uid-${name}`, creationTimestamp: created } };
}
const objects = (...crs: OwnerDeployment[]): KubeObject[] => crs as unknown as KubeObject[];
const mineOf = (d: OwnerDeployment): DeploymentPlacement =>
  placementOf(d, {
    deviceMode: d.spec?.deviceMode ?? 'lvm',
    nodeSelector: d.spec?.nodeSelector ?? { storage: 'pmem' },
  });
const node = (name: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { ...labels, 'kubernetes.io/hostname': name } },
});

// The case: an lvm deployment on storage=pmem and, created later, a direct one on pmem-zone=z1.
const LVM = cr('pmem-lvm', EARLY, { deviceMode: 'lvm', nodeSelector: { storage: 'pmem' } });
const DIRECT = cr('pmem-direct', LATE, { deviceMode: 'direct', nodeSelector: { 'pmem-zone': 'z1' } });
const NODES = [
  node('shared-2', { storage: 'pmem', 'pmem-zone': 'z1' }),
  node('shared-0', { storage: 'pmem', 'pmem-zone': 'z1' }),
  node('shared-1', { storage: 'pmem', 'pmem-zone': 'z1' }),
  node('lvm-only-0', { storage: 'pmem' }),
  node('direct-only-0', { 'pmem-zone': 'z1' }),
  node('neither-0', {}),
];
const RULE_SENTENCE =
  "One driver per node's PMEM: the node DaemonSet's required node affinity excludes every node these node selectors match, " +
  'also nodes labelled later; this deployment takes a node over once no earlier one selects it any more.';

describe('earlierPmemDeployments', () => {
  it('names the earlier PMEM-managing deployments whose node selectors can match the same nodes, first first; never the other way round', () => {
    const third = cr('third', LATER, { deviceMode: 'lvm', nodeSelector: {} });
    const all = objects(third, DIRECT, LVM);
    expect(earlierPmemDeployments(mineOf(third), all).map((d) => d.name)).toEqual(['pmem-lvm', 'pmem-direct']);
    expect(earlierPmemDeployments(mineOf(DIRECT), all).map((d) => d.name)).toEqual(['pmem-lvm']);
    expect(earlierPmemDeployments(mineOf(LVM), all)).toEqual([]);
  });

  it('orders deployments created in the same second by name, whichever arrived first', () => {
    const a = cr('a-pmem', LATE, { deviceMode: 'direct' });
    const b = cr('b-pmem', LATE, { deviceMode: 'lvm' });
    for (const all of [objects(a, b), objects(b, a)]) {
      expect(earlierPmemDeployments(mineOf(b), all).map((d) => d.name)).toEqual(['a-pmem']);
      expect(earlierPmemDeployments(mineOf(a), all)).toEqual([]);
    }
  });

  it('leaves out emulated deployments on both sides, disjoint selectors, colliding names and losers of a name collision', () => {
    const emulatedEarly = cr('emulated-early', EARLY, { deviceMode: 'emulated' });
    const emulatedLate = cr('emulated-late', LATE, { deviceMode: 'emulated' });
    const lvmLate = cr('lvm-late', LATE, { deviceMode: 'lvm' });
    expect(earlierPmemDeployments(mineOf(lvmLate), objects(emulatedEarly, lvmLate))).toEqual([]);
    expect(earlierPmemDeployments(mineOf(emulatedLate), objects(LVM, emulatedLate))).toEqual([]);
    const disjoint = cr('disjoint', LATE, { nodeSelector: { storage: 'pmem-b' } });
    expect(earlierPmemDeployments(mineOf(disjoint), objects(LVM, disjoint))).toEqual([]);
    // Colliding object names: one of the two is refused with Conflict anyway.
    const colliding = cr('pmem.lvm', LATE);
    expect(earlierPmemDeployments(mineOf(colliding), objects(LVM, colliding))).toEqual([]);
    // A collision's loser (pmem.lvm, later than pmem-lvm) runs nothing: only its winner counts.
    const winner = cr('x-pmem', EARLY, { nodeSelector: { rack: '1' } });
    const loser = cr('x.pmem', EARLY, { nodeSelector: { storage: 'pmem' } });
    expect(earlierPmemDeployments(mineOf(lvmLate), objects(winner, loser, lvmLate)).map((d) => d.name)).toEqual([
      'x-pmem',
    ]);
  });

  it('counts an earlier deployment still being deleted (its node pods run until collected), and one whose driver runs lvm while its spec says emulated', () => {
    const deleting = { ...LVM, metadata: { ...LVM.metadata, deletionTimestamp: LATER } };
    expect(earlierPmemDeployments(mineOf(DIRECT), objects(deleting, DIRECT)).map((d) => d.name)).toEqual(['pmem-lvm']);
    const refusedSwitch = cr('pmem-lvm', EARLY, { deviceMode: 'emulated', nodeSelector: { storage: 'pmem' } });
    const deployed = (name: string): string | undefined => (name === 'pmem-lvm' ? 'lvm' : undefined);
    expect(earlierPmemDeployments(mineOf(DIRECT), objects(refusedSwitch, DIRECT))).toEqual([]);
    expect(earlierPmemDeployments(mineOf(DIRECT), objects(refusedSwitch, DIRECT), deployed)).toMatchObject([
      { name: 'pmem-lvm', deviceMode: 'lvm' },
    ]);
  });
});

describe('pmemOverlapPlan', () => {
  it('keeps the later deployment off the shared nodes and names the earlier one, the count and the nodes, sorted', () => {
    const mine = mineOf(DIRECT);
    const plan = pmemOverlapPlan(mine, earlierPmemDeployments(mine, objects(LVM, DIRECT)), NODES, undefined);
    expect(plan).toEqual({
      nodeExclusion: [{ matchExpressions: [{ key: 'storage', operator: 'NotIn', values: ['pmem'] }] }],
      condition: {
        type: 'PmemOverlap',
        status: 'True',
        reason: 'NodesExcluded',
        message:
          'kept off 3 nodes where an earlier PmemCSIDeployment manages PMEM: "pmem-lvm" (lvm on storage=pmem, created first, 2026-03-01T10:00:00Z). ' +
          `Nodes kept off: shared-0, shared-1, shared-2. ${RULE_SENTENCE}`,
      },
    });
  });

  it('names two earlier deployments (multi-label selectors: their terms multiplied) and shows the first 10 nodes and how many more', () => {
    const zoned = cr('zoned', LATE, { deviceMode: 'direct', nodeSelector: { 'pmem-zone': 'z1', rack: 'r1' } });
    const mine = mineOf(cr('last', LATER, { deviceMode: 'lvm', nodeSelector: {} }));
    const nodes = Array.from({ length: 13 }, (_, i) => node(`n-${String(i).padStart(2, '0')}`, { storage: 'pmem' }));
    const plan = pmemOverlapPlan(mine, earlierPmemDeployments(mine, objects(LVM, zoned)), nodes, undefined);
    expect(plan.nodeExclusion).toEqual([
      {
        matchExpressions: [
          { key: 'pmem-zone', operator: 'NotIn', values: ['z1'] },
          { key: 'storage', operator: 'NotIn', values: ['pmem'] },
        ],
      },
      {
        matchExpressions: [
          { key: 'rack', operator: 'NotIn', values: ['r1'] },
          { key: 'storage', operator: 'NotIn', values: ['pmem'] },
        ],
      },
    ]);
    expect(plan.condition?.message).toBe(
      'kept off 13 nodes where 2 earlier PmemCSIDeployments manage PMEM: "pmem-lvm" (lvm on storage=pmem, created first, 2026-03-01T10:00:00Z), ' +
        '"zoned" (direct on pmem-zone=z1,rack=r1, created first, 2026-03-01T10:05:00Z). ' +
        `Nodes kept off: n-00, n-01, n-02, n-03, n-04, n-05, n-06, n-07, n-08, n-09 and 3 more. ${RULE_SENTENCE}`,
    );
  });

  it('says why a deployment of the same second comes first, and keeps the later one off every node when the earlier selector covers its own', () => {
    const same = cr('b-same', EARLY, { deviceMode: 'direct', nodeSelector: { storage: 'pmem', 'pmem-zone': 'z1' } });
    const first = cr('a-same', EARLY, { deviceMode: 'lvm', nodeSelector: { storage: 'pmem' } });
    const mine = mineOf(same);
    const plan = pmemOverlapPlan(mine, earlierPmemDeployments(mine, objects(same, first)), NODES, undefined);
    expect(plan.nodeExclusion).toEqual([NO_NODE_TERM]);
    expect(plan.condition?.message).toBe(
      'kept off 3 nodes where an earlier PmemCSIDeployment manages PMEM: "a-same" (lvm on storage=pmem, created in the same second, its name sorts first). ' +
        `Nodes kept off: shared-0, shared-1, shared-2. ${RULE_SENTENCE}`,
    );
    expect(plan.refusal).toBeUndefined();
  });

  it('refuses past the term limit: the node driver on no node, with a message that says why and what to do', () => {
    const six = (p: string): Record<string, string> =>
      Object.fromEntries([1, 2, 3, 4, 5, 6].map((i) => [`${p}${i}`, 'x']));
    const a = cr('wide-a', EARLY, { nodeSelector: six('a') });
    const b = cr('wide-b', LATE, { nodeSelector: six('b') });
    const mine = mineOf(cr('last', LATER, { nodeSelector: {} }));
    const plan = pmemOverlapPlan(
      mine,
      earlierPmemDeployments(mine, objects(a, b)),
      [node('x', { ...six('a') })],
      undefined,
    );
    const message =
      'the node selectors of 2 earlier PmemCSIDeployments in a PMEM-managing device mode overlap this one\'s ("wide-a" (lvm on a1=x,a2=x,a3=x,a4=x,a5=x,a6=x, created first, 2026-03-01T10:00:00Z), ' +
      '"wide-b" (lvm on b1=x,b2=x,b3=x,b4=x,b5=x,b6=x, created first, 2026-03-01T10:05:00Z)) and keeping off their nodes would need more than 32 node selector terms ' +
      '(an earlier node selector with n labels this one lacks takes n terms, several multiply): the node driver runs on no node (of the nodes it selects, 1 are theirs: x). ' +
      'Give the deployments disjoint node selectors (the same key with different values, e.g. storage=pmem-a and storage=pmem-b), or the earlier ones fewer labels.';
    expect(plan).toEqual({
      nodeExclusion: [NO_NODE_TERM],
      condition: { type: 'PmemOverlap', status: 'True', reason: 'TooManyExclusionTerms', message },
      refusal: message,
    });
  });

  it('turns False (NoOverlap) once seen and gone; says nothing when never seen', () => {
    const mine = mineOf(DIRECT);
    expect(pmemOverlapPlan(mine, [], NODES, undefined)).toEqual({});
    const seen = [
      {
        type: 'PmemOverlap' as const,
        status: 'True' as const,
        reason: 'NodesExcluded',
        message: 'm',
        lastTransitionTime: EARLY,
      },
    ];
    expect(pmemOverlapPlan(mine, [], NODES, seen)).toEqual({
      condition: {
        type: 'PmemOverlap',
        status: 'False',
        reason: 'NoOverlap',
        message: 'no earlier PmemCSIDeployment in a PMEM-managing device mode can run on the nodes of this one',
      },
    });
  });
});

describe('Reconciler with overlapping PMEM deployments (issue 32)', () => {
  const crs = (h: Harness) => (): KubeObject[] =>
    [...h.kube.objects.values()].filter((o) => o.kind === 'PmemCSIDeployment');
  const nodes = (): KubeObject[] => NODES;
  const daemonSet = (h: Harness, name: string): V1DaemonSet | undefined =>
    h.object<V1DaemonSet>('daemonSet', deploymentObjectNames(name).nodeDaemonSet);
  /** The informer cache of owned objects, as main.ts wires it. */
  const owned =
    (h: Harness) =>
    (type: { kind: string }, crName: string): KubeObject[] =>
      [...h.kube.objects.values()].filter(
        (o) => o.kind === type.kind && o.metadata.labels?.[LABEL_KEYS.instance] === crName,
      );
  const affinity = (h: Harness, name: string): unknown =>
    daemonSet(h, name)?.spec?.template.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;

  it("keeps the later DaemonSet off the earlier one's nodes with an exact status, never the earlier one; the exclusion goes with the earlier deployment", async () => {
    const h = harness();
    h.putCr({ deviceMode: 'lvm', nodeSelector: { storage: 'pmem' } }, 'pmem-lvm', { creationTimestamp: EARLY });
    h.putCr({ deviceMode: 'direct', nodeSelector: { 'pmem-zone': 'z1' } }, 'pmem-direct', { creationTimestamp: LATE });
    const r = h.reconciler({ deployments: crs(h), nodes });
    await r.reconcile('pmem-direct');
    await r.reconcile('pmem-lvm');
    await r.reconcile('pmem-direct');
    expect(affinity(h, 'pmem-lvm')).toBeUndefined();
    expect(getCondition(h.cr('pmem-lvm').status?.conditions, 'PmemOverlap')).toBeUndefined();
    expect(affinity(h, 'pmem-direct')).toEqual({
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'storage', operator: 'NotIn', values: ['pmem'] }] }],
    });
    expect(daemonSet(h, 'pmem-direct')?.spec?.template.spec?.nodeSelector).toEqual({ 'pmem-zone': 'z1' });
    expect(getCondition(h.cr('pmem-direct').status?.conditions, 'PmemOverlap')).toMatchObject({
      status: 'True',
      reason: 'NodesExcluded',
      message:
        'kept off 3 nodes where an earlier PmemCSIDeployment manages PMEM: "pmem-lvm" (lvm on storage=pmem, created first, 2026-03-01T10:00:00Z). ' +
        `Nodes kept off: shared-0, shared-1, shared-2. ${RULE_SENTENCE}`,
    });
    expect(getCondition(h.cr('pmem-direct').status?.conditions, 'DriverDeployed')).toMatchObject({ status: 'True' });
    expect(h.events.filter((e) => e.reason === 'PmemOverlap').map((e) => [e.deployment, e.type])).toEqual([
      ['pmem-direct', 'Warning'],
    ]);
    // At rest: nothing more is written.
    const writes = h.kube.writes.length;
    await r.reconcile('pmem-direct');
    expect(h.kube.writes.slice(writes)).toEqual([]);

    // The earlier one goes: the next reconcile drops the exclusion (the later one takes its nodes over).
    await h.kube.delete({ ...RESOURCES.pmemCsiDeployment, name: 'pmem-lvm' });
    await r.reconcile('pmem-direct');
    expect(affinity(h, 'pmem-direct')).toBeUndefined();
    expect(daemonSet(h, 'pmem-direct')?.spec?.template.spec?.affinity).toBeUndefined();
    expect(getCondition(h.cr('pmem-direct').status?.conditions, 'PmemOverlap')).toMatchObject({
      status: 'False',
      reason: 'NoOverlap',
    });
    const after = h.kube.writes.length;
    await r.reconcile('pmem-direct');
    expect(h.kube.writes.slice(after)).toEqual([]);
  });

  it.each([
    ['a-same first', ['a-same', 'b-same']],
    ['b-same first', ['b-same', 'a-same']],
  ])(
    'same creationTimestamp, %s: the name that sorts first runs everywhere, the other is kept off',
    async (_, order) => {
      const h = harness();
      for (const name of order)
        h.putCr({ deviceMode: name === 'a-same' ? 'direct' : 'lvm' }, name, { creationTimestamp: EARLY });
      const r = h.reconciler({ deployments: crs(h), nodes });
      for (const name of [...order, ...order]) await r.reconcile(name);
      expect(affinity(h, 'a-same')).toBeUndefined();
      expect(affinity(h, 'b-same')).toEqual({ nodeSelectorTerms: [NO_NODE_TERM] });
      expect(getCondition(h.cr('b-same').status?.conditions, 'PmemOverlap')?.message).toBe(
        'kept off 4 nodes where an earlier PmemCSIDeployment manages PMEM: "a-same" (direct on storage=pmem, created in the same second, its name sorts first). ' +
          `Nodes kept off: lvm-only-0, shared-0, shared-1, shared-2. ${RULE_SENTENCE}`,
      );
      expect(getCondition(h.cr('a-same').status?.conditions, 'PmemOverlap')).toBeUndefined();
      // Kept off every node: NodesSelected says why once the DaemonSet controller reported no pod.
      h.kube.setStatus(
        { ...RESOURCES.daemonSet, namespace: TEST_NAMESPACE, name: deploymentObjectNames('b-same').nodeDaemonSet },
        {
          desiredNumberScheduled: 0,
          currentNumberScheduled: 0,
          numberReady: 0,
          numberMisscheduled: 0,
          observedGeneration: 1,
        },
      );
      await r.reconcile('b-same');
      expect(getCondition(h.cr('b-same').status?.conditions, 'NodesSelected')?.message).toBe(
        'no node matches the node selector storage=pmem apart from the nodes kept for earlier PMEM-managing deployments (PmemOverlap) ' +
          '(or every matching node has taints the driver does not tolerate): the node driver has no pods; label the nodes with PMEM or change spec.nodeSelector',
      );
    },
  );

  it('refuses a deployment whose exclusion exceeds the term limit: phase Failed, DriverDeployed False, the node driver on no node', async () => {
    const h = harness();
    const six = (p: string): Record<string, string> =>
      Object.fromEntries([1, 2, 3, 4, 5, 6].map((i) => [`${p}${i}`, 'x']));
    h.putCr({ nodeSelector: six('a') }, 'wide-a', { creationTimestamp: EARLY });
    h.putCr({ nodeSelector: six('b') }, 'wide-b', { creationTimestamp: LATE });
    h.putCr({ nodeSelector: {} }, 'last', { creationTimestamp: LATER });
    const r = h.reconciler({ deployments: crs(h), nodes });
    await r.reconcile('last');
    const status = h.cr('last').status;
    const overlap = getCondition(status?.conditions, 'PmemOverlap');
    expect(overlap).toMatchObject({ status: 'True', reason: 'TooManyExclusionTerms' });
    expect(getCondition(status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'TooManyExclusionTerms',
      message: overlap?.message,
    });
    expect(status?.phase).toBe('Failed');
    expect(status?.reason).toBe(overlap?.message);
    expect(affinity(h, 'last')).toEqual({ nodeSelectorTerms: [NO_NODE_TERM] });
  });

  it('follows the device mode an earlier driver really runs: a refused switch to emulated keeps the later one off', async () => {
    const h = harness();
    h.putCr({ deviceMode: 'emulated' }, 'pmem-early', { creationTimestamp: EARLY });
    h.putCr({ deviceMode: 'direct' }, 'pmem-late', { creationTimestamp: LATE });
    const r = h.reconciler({ deployments: crs(h), nodes, owned: owned(h) });
    await r.reconcile('pmem-early');
    await r.reconcile('pmem-late');
    expect(daemonSet(h, 'pmem-early')?.metadata?.annotations?.[DEVICE_MODE_ANNOTATION]).toBe('emulated');
    expect(affinity(h, 'pmem-late')).toBeUndefined();
    // Deployed as lvm (a change to emulated that the device-mode guard refused keeps it so).
    const ds = daemonSet(h, 'pmem-early') as unknown as KubeObject;
    h.kube.put({
      ...ds,
      metadata: { ...ds.metadata, annotations: { ...ds.metadata.annotations, [DEVICE_MODE_ANNOTATION]: 'lvm' } },
    });
    await r.reconcile('pmem-late');
    expect(affinity(h, 'pmem-late')).toEqual({ nodeSelectorTerms: [NO_NODE_TERM] });
  });

  it('reads the nodes from the cache (no list), and lists them without one only when an earlier deployment overlaps', async () => {
    const h = harness();
    for (const n of NODES) h.kube.put(n);
    h.putCr({ deviceMode: 'lvm', nodeSelector: { storage: 'pmem' } }, 'pmem-lvm', { creationTimestamp: EARLY });
    h.putCr({ deviceMode: 'direct', nodeSelector: { 'pmem-zone': 'z1' } }, 'pmem-direct', { creationTimestamp: LATE });
    const leases = (): KubeObject[] => [];
    const cached = h.reconciler({ deployments: crs(h), owned: owned(h), leases, nodes });
    await cached.reconcile('pmem-lvm');
    await cached.reconcile('pmem-direct');
    const lists = recordLists(h.kube);
    await cached.reconcile('pmem-direct');
    await cached.reconcile('pmem-lvm');
    expect(lists).toEqual([]);
    const uncached = h.reconciler({ deployments: crs(h), owned: owned(h), leases });
    await uncached.reconcile('pmem-lvm');
    expect(lists).toEqual([]);
    await uncached.reconcile('pmem-direct');
    expect(lists).toEqual(['Node']);
    expect(getCondition(h.cr('pmem-direct').status?.conditions, 'PmemOverlap')?.message).toContain(
      'Nodes kept off: shared-0, shared-1, shared-2.',
    );
  });
});
