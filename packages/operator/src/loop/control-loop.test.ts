import { jest } from '@jest/globals';
import type { V1DaemonSet } from '@kubernetes/client-node';
import {
  DEVICE_MODE_ANNOTATION,
  LABEL_KEYS,
  deploymentObjectNames,
  getCondition,
  type DriverComponentStatus,
} from '@pmem-csi/api';
import { nullLogger } from '@pmem-csi/runtime';
import { KubeApiError } from '../kube/kube-errors.js';
import type { KubeObject } from '../kube/kube-port.js';
import { Operator, ownerKey, watchedKinds } from './control-loop.js';
import { RESOURCES } from '../kube/resources.js';
import { TEST_NAMESPACE } from '../testing/fixtures.js';
import { CR_NAME, NAMES, harness, recordLists, type Harness } from '../testing/harness.js';
import { settle } from '../testing/manual-clock.js';

jest.setTimeout(60_000);

/** Wait (in real time: certificates are generated on the thread pool) until `check` holds. */
async function eventually(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await settle();
    await new Promise((r) => setTimeout(r, 20));
  }
}

const dsRef = { ...RESOURCES.daemonSet, namespace: TEST_NAMESPACE, name: NAMES.nodeDaemonSet };

function start(h: Harness, reconciles: string[] = []): Operator {
  // The reconciler reads the CR list and the owned objects from the operator's informer caches, as in main.ts.
  const reconciler = h.reconciler({
    deployments: () => op.deployments(),
    owned: (type, crName) => op.ownedObjects(type, crName),
    leases: () => op.leases(),
    nodes: () => op.nodes(),
  });
  const op: Operator = new Operator({
    kube: h.kube,
    namespace: TEST_NAMESPACE,
    reconcile: async (name) => {
      reconciles.push(name);
      return reconciler.reconcile(name);
    },
    clock: h.clock,
    log: nullLogger,
    informer: { relistIntervalMs: 600_000, stallTimeoutMs: 180_000 },
    queue: { baseBackoffMs: 1000, maxBackoffMs: 60_000 },
  });
  op.start();
  return op;
}

describe('Operator', () => {
  it('watches the CR, every built kind and every kind an older version built', () => {
    expect(watchedKinds().map((k) => k.kind)).toEqual([
      'Secret',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'Service',
      'CSIDriver',
      'Deployment',
      'DaemonSet',
      'PodDisruptionBudget',
      'StatefulSet',
      'MutatingWebhookConfiguration',
    ]);
  });

  it('maps an owned object to its CR', () => {
    expect(
      ownerKey({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 's',
          ownerReferences: [
            {
              apiVersion: 'pmem-csi.intel.com/v1beta1',
              kind: 'PmemCSIDeployment',
              name: 'x',
              uid: 'u',
              controller: true,
            },
          ],
        },
      }),
    ).toBe('x');
  });

  it('deploys a new CR and brings back a deleted child through its watch event', async () => {
    const h = harness();
    const op = start(h);
    h.putCr();
    await eventually(
      () => h.object('daemonSet', NAMES.nodeDaemonSet) !== undefined && h.cr().status?.observedGeneration === 1,
    );
    expect(op.synced).toBe(true);
    await h.kube.delete(dsRef);
    await eventually(() => h.object('daemonSet', NAMES.nodeDaemonSet) !== undefined);
    await op.stop();
  });

  it('restarts a stalled watch and repairs what it missed by relisting', async () => {
    const h = harness();
    const op = start(h);
    h.putCr();
    await eventually(
      () => h.object('daemonSet', NAMES.nodeDaemonSet) !== undefined && h.cr().status?.observedGeneration === 1,
    );
    const restartsBefore = op.informers.reduce((n, i) => n + i.restarts, 0);
    h.kube.stallWatches();
    await h.kube.delete(dsRef); // the stalled watch never tells
    await settle();
    expect(h.object('daemonSet', NAMES.nodeDaemonSet)).toBeUndefined();
    await h.clock.advance(180_000);
    await eventually(() => h.object('daemonSet', NAMES.nodeDaemonSet) !== undefined);
    expect(op.informers.reduce((n, i) => n + i.restarts, 0)).toBeGreaterThanOrEqual(
      restartsBefore + op.informers.length,
    );
    expect(op.informers.every((i) => i.restartsByReason.stalled >= 1)).toBe(true);
    await op.stop();
  });

  it('keeps a quiet but healthy watch (bookmarks) and restarts one that fails', async () => {
    const h = harness();
    const op = start(h);
    await eventually(() => op.synced);
    const watches = h.kube.watchCount;
    for (let i = 0; i < 5; i++) {
      h.kube.bookmark();
      await h.clock.advance(60_000);
    }
    expect(op.informers.reduce((n, i) => n + i.restarts, 0)).toBe(0);
    h.kube.breakWatches(new KubeApiError(410, 'too old resource version'));
    await eventually(() => h.kube.watchCount === watches);
    expect(op.informers.every((i) => i.restarts === 1)).toBe(true);
    expect(op.informers.map((i) => i.restartsByReason)).toEqual(
      op.informers.map(() => ({ closed: 0, expired: 1, failed: 0, stalled: 0, relist: 0 })),
    );
    h.kube.breakWatches(new KubeApiError(500, 'internal error'));
    await eventually(() => h.kube.watchCount === watches);
    h.kube.breakWatches();
    await eventually(() => h.kube.watchCount === watches);
    expect(op.informers.map((i) => i.restartsByReason)).toEqual(
      op.informers.map(() => ({ closed: 1, expired: 1, failed: 1, stalled: 0, relist: 0 })),
    );
    await op.stop();
    expect(h.kube.watchCount).toBe(0);
  });

  it('retries a failing reconcile with exponential backoff', async () => {
    const h = harness();
    const reconciles: string[] = [];
    h.kube.failOn('list', new KubeApiError(503, 'apiserver overloaded'), {
      match: (d) => d.startsWith('Secret'),
      times: 3,
    });
    h.putCr();
    const op = start(h, reconciles);
    // The Secret informer's own list fails too and backs off; the CR informer triggers the reconcile.
    await eventually(() => reconciles.length >= 1 && op.queue.runningCount === 0);
    const failuresAfterFirst = op.queue.failures(CR_NAME);
    expect(failuresAfterFirst).toBeGreaterThanOrEqual(1);
    const runs = reconciles.length;
    await h.clock.advance(999);
    expect(reconciles.length).toBe(runs);
    await h.clock.advance(60_000);
    await eventually(
      () => h.object('daemonSet', NAMES.nodeDaemonSet) !== undefined && op.queue.failures(CR_NAME) === 0,
    );
    await op.stop();
  });

  it('requeues CRs whose object names collide: the refused one takes over as soon as the older one and its objects are gone', async () => {
    const h = harness();
    const newer = 'pmem-csi-intel-com';
    const op = start(h);
    h.putCr({}, CR_NAME, { creationTimestamp: '2026-03-01T10:00:00Z' });
    await eventually(() => h.cr().status?.observedGeneration === 1 && op.queue.runningCount === 0);
    const objectWrites = (): string[] => h.kube.writes.filter((w) => !w.startsWith('status '));
    const before = objectWrites().length;
    h.putCr({}, newer, { creationTimestamp: '2026-03-01T10:05:00Z' });
    await eventually(
      () => getCondition(h.cr(newer).status?.conditions, 'Conflict')?.status === 'True' && op.queue.runningCount === 0,
    );
    expect(getCondition(h.cr(newer).status?.conditions, 'Conflict')?.reason).toBe('NameCollision');
    expect(objectWrites().slice(before)).toEqual([]);

    // No manual reconcile and no clock advance: the deletions alone requeue the refused CR.
    await h.kube.delete({ ...RESOURCES.pmemCsiDeployment, name: CR_NAME });
    expect(h.kube.collectGarbage()).toBe(18);
    await eventually(
      () => h.object('daemonSet', NAMES.nodeDaemonSet)?.metadata.labels?.[LABEL_KEYS.instance] === newer,
    );
    await eventually(() => getCondition(h.cr(newer).status?.conditions, 'Conflict')?.status === 'False');
    expect(getCondition(h.cr(newer).status?.conditions, 'Conflict')?.reason).toBe('Resolved');
    await op.stop();
  });

  describe('two CRs with colliding object names created in the same second (issue 32)', () => {
    const SAME_SECOND = '2026-03-01T10:00:07Z';
    const WINNER = 'pmem-csi-intel-com'; // '-' sorts before '.'
    const LOSER = CR_NAME; // pmem-csi.intel.com
    const objectWrites = (h: Harness): string[] => h.kube.writes.filter((w) => !w.startsWith('status '));
    const dsController = (h: Harness): string | undefined =>
      h.object<KubeObject>('daemonSet', NAMES.nodeDaemonSet)?.metadata.ownerReferences?.[0]?.name;
    const settled = (h: Harness, op: Operator): boolean =>
      op.queue.runningCount === 0 &&
      getCondition(h.cr(LOSER).status?.conditions, 'Conflict')?.reason === 'NameCollision' &&
      getCondition(h.cr(WINNER).status?.conditions, 'DriverDeployed')?.status === 'True' &&
      dsController(h) === WINNER;

    it('after an operator restart in between, the winner takes over what the loser deployed; a further restart changes nothing', async () => {
      const h = harness();
      let op = start(h);
      h.putCr({}, LOSER, { creationTimestamp: SAME_SECOND });
      await eventually(() => dsController(h) === LOSER && op.queue.runningCount === 0);
      await op.stop();
      // While no operator runs, the winner by the rule appears.
      h.putCr({}, WINNER, { creationTimestamp: SAME_SECOND });
      op = start(h);
      await eventually(() => settled(h, op));
      expect(getCondition(h.cr(LOSER).status?.conditions, 'Conflict')?.message).toContain(
        'both were created in the same second (2026-03-01T10:00:07Z) and "pmem-csi-intel-com" sorts first.',
      );
      await op.stop();
      const before = objectWrites(h).length;
      op = start(h);
      await eventually(() => op.synced && settled(h, op));
      await settle();
      expect(objectWrites(h).slice(before)).toEqual([]);
      await op.stop();
    });

    it("takes back at once an object that the loser wrote in a race (the loser's reconcile began before it saw the winner)", async () => {
      const h = harness();
      const op = start(h);
      h.putCr({}, WINNER, { creationTimestamp: SAME_SECOND });
      h.putCr({}, LOSER, { creationTimestamp: SAME_SECOND });
      await eventually(() => settled(h, op));
      // The DaemonSet as the loser's reconcile would have applied it, without having seen the winner.
      const ds = h.object<KubeObject>('daemonSet', NAMES.nodeDaemonSet) as KubeObject;
      h.kube.put({
        ...ds,
        metadata: {
          ...ds.metadata,
          labels: { ...ds.metadata.labels, [LABEL_KEYS.instance]: LOSER },
          ownerReferences: (ds.metadata.ownerReferences ?? []).map((r) => ({
            ...r,
            name: LOSER,
            uid: h.cr(LOSER).metadata.uid,
          })),
        },
      });
      expect(dsController(h)).toBe(LOSER);
      // No clock advance (no resync): the object's watch event requeues the winner too.
      await eventually(() => settled(h, op));
      await op.stop();
    });
  });

  it('requeues every CR when one is added or changes its spec (PmemOverlap depends on the others), but not on status writes', async () => {
    const h = harness();
    const reconciles: string[] = [];
    const later = 'pmem-b.example.com';
    const op = start(h, reconciles);
    h.putCr({}, CR_NAME, { creationTimestamp: '2026-03-01T10:00:00Z' });
    await eventually(() => h.cr().status?.observedGeneration === 1 && op.queue.runningCount === 0);
    h.putCr({}, later, { creationTimestamp: '2026-03-01T10:05:00Z' });
    await eventually(
      () =>
        getCondition(h.cr(later).status?.conditions, 'PmemOverlap')?.status === 'True' && op.queue.runningCount === 0,
    );
    await settle();
    const n = reconciles.length;
    // A spec change of the earlier one (now disjoint) requeues the later one, which clears its warning.
    h.putCr({ nodeSelector: { storage: 'pmem-a' } }, CR_NAME);
    await eventually(
      () =>
        getCondition(h.cr(later).status?.conditions, 'PmemOverlap')?.status === 'False' && op.queue.runningCount === 0,
    );
    await settle();
    expect(reconciles.slice(n).filter((name) => name === later).length).toBeGreaterThanOrEqual(1);
    // Quiet now: the status writes of that round did not requeue anything further.
    const m = reconciles.length;
    await settle();
    await new Promise((r) => setTimeout(r, 200));
    expect(reconciles.length).toBe(m);
    await op.stop();
  });

  it('serves reconciles from its informer caches: no list at steady state or during a node rollout', async () => {
    const h = harness();
    const reconciles: string[] = [];
    h.putCr();
    const op = start(h, reconciles);
    await eventually(() => h.cr().status?.observedGeneration === 1 && op.queue.runningCount === 0 && op.synced);
    const lists = recordLists(h.kube);
    const n = reconciles.length;
    // A rollout over 20 nodes, one pod at a time: each DaemonSet status update is one watch event.
    for (let updated = 0; updated <= 20; updated++) {
      const before = reconciles.length;
      h.kube.setStatus(dsRef, {
        desiredNumberScheduled: 20,
        currentNumberScheduled: 20,
        numberReady: updated === 20 ? 20 : 19,
        updatedNumberScheduled: updated,
        numberMisscheduled: 0,
      });
      await eventually(() => reconciles.length > before && op.queue.runningCount === 0);
    }
    expect(reconciles.length - n).toBeGreaterThanOrEqual(21);
    expect(h.cr().status?.driverComponents?.find((c) => c.component === 'Node')).toMatchObject({
      ready: 20,
      desired: 20,
    });
    expect(lists).toEqual([]);
    await op.stop();
  });

  it('requeues a CR when another controller replica takes its provisioner Lease, not on renewals, and lists nothing', async () => {
    const h = harness();
    const reconciles: string[] = [];
    h.putCr({ controllerReplicas: 2 });
    const op = start(h, reconciles);
    await eventually(() => h.cr().status?.observedGeneration === 1 && op.queue.runningCount === 0 && op.synced);
    h.workloadsReady();
    await eventually(() => h.cr().status?.phase === 'Running' && op.queue.runningCount === 0);
    const lists = recordLists(h.kube);
    const controller = (): DriverComponentStatus | undefined =>
      h.cr().status?.driverComponents?.find((c) => c.component === 'Controller');
    const lease = (holder: string, renewedAgoMs = 0): void =>
      void h.kube.put({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'pmem-csi-intel-com', namespace: TEST_NAMESPACE },
        spec: {
          holderIdentity: holder,
          leaseDurationSeconds: 8,
          renewTime: new Date(h.clock.now() - renewedAgoMs).toISOString(),
        },
      } as KubeObject);

    const quiet = async (): Promise<void> => {
      // The status write of a reconcile is a CR event too: one more reconcile, which writes nothing.
      await settle();
      await new Promise((r) => setTimeout(r, 200));
      await eventually(() => op.queue.runningCount === 0);
    };
    lease('ctrl-a');
    await eventually(() => controller()?.active === 'ctrl-a' && op.queue.runningCount === 0);
    await quiet();
    // Renewals by the same holder: no reconcile.
    const n = reconciles.length;
    for (let i = 1; i <= 5; i++) {
      await h.clock.advance(2000);
      lease('ctrl-a');
    }
    await quiet();
    expect(reconciles.length).toBe(n);
    // The Lease of another driver in the namespace (and the operator's own) changes nothing here.
    h.kube.put({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'other-example-com', namespace: TEST_NAMESPACE },
      spec: { holderIdentity: 'x', leaseDurationSeconds: 8, renewTime: new Date(h.clock.now()).toISOString() },
    } as KubeObject);
    await quiet();
    expect(reconciles.length).toBe(n);
    // Failover: a standby holds it now.
    lease('ctrl-b');
    await eventually(() => controller()?.active === 'ctrl-b' && op.queue.runningCount === 0);
    expect(reconciles.length).toBeGreaterThan(n);
    expect(controller()?.reason).toBe('2 of 2 controller pods ready, ctrl-b provisions');
    expect(lists).toEqual([]);
    await op.stop();
  });

  it("requeues a CR when its resizer Lease gets another holder, independently of the provisioner's, not on renewals", async () => {
    const h = harness();
    const reconciles: string[] = [];
    h.putCr({ controllerReplicas: 2 });
    const op = start(h, reconciles);
    await eventually(() => h.cr().status?.observedGeneration === 1 && op.queue.runningCount === 0 && op.synced);
    h.workloadsReady();
    await eventually(() => h.cr().status?.phase === 'Running' && op.queue.runningCount === 0);
    const lists = recordLists(h.kube);
    const controller = (): DriverComponentStatus | undefined =>
      h.cr().status?.driverComponents?.find((c) => c.component === 'Controller');
    const lease = (name: string, holder: string): void =>
      void h.kube.put({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace: TEST_NAMESPACE },
        spec: { holderIdentity: holder, leaseDurationSeconds: 8, renewTime: new Date(h.clock.now()).toISOString() },
      } as KubeObject);
    const quiet = async (): Promise<void> => {
      await settle();
      await new Promise((r) => setTimeout(r, 200));
      await eventually(() => op.queue.runningCount === 0);
    };
    lease('pmem-csi-intel-com', 'ctrl-a');
    lease('external-resizer-pmem-csi-intel-com', 'ctrl-a');
    await eventually(() => controller()?.activeResizer === 'ctrl-a' && op.queue.runningCount === 0);
    expect(controller()?.reason).toBe('2 of 2 controller pods ready, ctrl-a provisions and resizes');
    await quiet();
    const n = reconciles.length;
    for (let i = 1; i <= 3; i++) {
      await h.clock.advance(2000);
      lease('pmem-csi-intel-com', 'ctrl-a');
      lease('external-resizer-pmem-csi-intel-com', 'ctrl-a');
    }
    await quiet();
    expect(reconciles.length).toBe(n);
    // The resizer's sidecar on the other replica takes its Lease; the provisioner's stays.
    lease('external-resizer-pmem-csi-intel-com', 'ctrl-b');
    await eventually(() => controller()?.activeResizer === 'ctrl-b' && op.queue.runningCount === 0);
    expect(reconciles.length).toBeGreaterThan(n);
    expect(controller()).toMatchObject({
      active: 'ctrl-a',
      reason: '2 of 2 controller pods ready, ctrl-a provisions, ctrl-b resizes',
    });
    expect(lists).toEqual([]);
    await op.stop();
  });

  describe("one driver per node's PMEM (issue 32)", () => {
    const node = (name: string, labels: Record<string, string>, heartbeat = 0): KubeObject =>
      ({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels },
        status: {
          conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: `2026-03-01T10:00:0${heartbeat}Z` }],
        },
      }) as KubeObject;
    const overlap = (h: Harness, name: string): { status: string; reason: string; message: string } | undefined =>
      getCondition(h.cr(name).status?.conditions, 'PmemOverlap');
    const affinity = (h: Harness, name: string): unknown =>
      h.object<V1DaemonSet>('daemonSet', deploymentObjectNames(name).nodeDaemonSet)?.spec?.template.spec?.affinity;

    it('keeps the later DaemonSet off the shared nodes, follows node labels (not heartbeats) and drops the exclusion once the earlier one is deleted, listing nothing', async () => {
      const h = harness();
      h.kube.put(node('shared-0', { storage: 'pmem', 'pmem-zone': 'z1' }));
      h.kube.put(node('shared-1', { storage: 'pmem', 'pmem-zone': 'z1' }));
      h.kube.put(node('lvm-only', { storage: 'pmem' }));
      h.kube.put(node('direct-only', { 'pmem-zone': 'z1' }));
      h.putCr({ deviceMode: 'lvm', nodeSelector: { storage: 'pmem' } }, 'pmem-lvm', {
        creationTimestamp: '2026-03-01T10:00:00Z',
      });
      h.putCr({ deviceMode: 'direct', nodeSelector: { 'pmem-zone': 'z1' } }, 'pmem-direct', {
        creationTimestamp: '2026-03-01T10:05:00Z',
      });
      const reconciles: string[] = [];
      const op = start(h, reconciles);
      await eventually(() => overlap(h, 'pmem-direct')?.status === 'True' && op.queue.runningCount === 0 && op.synced);
      expect(overlap(h, 'pmem-direct')?.message).toMatch(/^kept off 2 nodes .* Nodes kept off: shared-0, shared-1\. /);
      expect(affinity(h, 'pmem-direct')).toEqual({
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'storage', operator: 'NotIn', values: ['pmem'] }] }],
          },
        },
      });
      expect(affinity(h, 'pmem-lvm')).toBeUndefined();
      // The cache keeps names and labels only.
      expect(op.nodes()?.find((n) => n.metadata.name === 'shared-0')).toEqual({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: expect.objectContaining({ name: 'shared-0', labels: { storage: 'pmem', 'pmem-zone': 'z1' } }),
      });
      const lists = recordLists(h.kube);
      await settle();
      // A heartbeat (same labels) requeues nothing.
      const n = reconciles.length;
      h.kube.put(node('shared-0', { storage: 'pmem', 'pmem-zone': 'z1' }, 5));
      await settle();
      await new Promise((r) => setTimeout(r, 100));
      expect(reconciles.slice(n)).toEqual([]);
      // A node labelled for both now: the CR with PmemOverlap True is requeued and names it.
      h.kube.put(node('direct-only', { storage: 'pmem', 'pmem-zone': 'z1' }));
      await eventually(() => overlap(h, 'pmem-direct')?.message.startsWith('kept off 3 nodes') === true);
      expect(overlap(h, 'pmem-direct')?.message).toContain('Nodes kept off: direct-only, shared-0, shared-1. ');
      // Only the CR with PmemOverlap True (once more after its own status write), not the earlier one.
      expect([...new Set(reconciles.slice(n))]).toEqual(['pmem-direct']);
      // The earlier one goes: the later one takes its nodes over at once (no resync).
      await h.kube.delete({ ...RESOURCES.pmemCsiDeployment, name: 'pmem-lvm' });
      await eventually(() => overlap(h, 'pmem-direct')?.status === 'False' && op.queue.runningCount === 0);
      expect(affinity(h, 'pmem-direct')).toBeUndefined();
      expect(overlap(h, 'pmem-direct')?.reason).toBe('NoOverlap');
      expect(lists).toEqual([]);
      await op.stop();
    });

    it("drops the exclusion when the earlier driver is redeployed emulated (its DaemonSet's device mode), without a resync", async () => {
      const h = harness();
      h.putCr({ deviceMode: 'lvm' }, 'pmem-early', { creationTimestamp: '2026-03-01T10:00:00Z' });
      h.putCr({ deviceMode: 'direct' }, 'pmem-late', { creationTimestamp: '2026-03-01T10:05:00Z' });
      const op = start(h);
      await eventually(() => affinity(h, 'pmem-late') !== undefined && op.queue.runningCount === 0 && op.synced);
      h.putCr({ deviceMode: 'emulated' }, 'pmem-early');
      await eventually(
        () =>
          h.object<V1DaemonSet>('daemonSet', deploymentObjectNames('pmem-early').nodeDaemonSet)?.metadata
            ?.annotations?.[DEVICE_MODE_ANNOTATION] === 'emulated' &&
          affinity(h, 'pmem-late') === undefined &&
          op.queue.runningCount === 0,
      );
      expect(overlap(h, 'pmem-late')).toMatchObject({ status: 'False', reason: 'NoOverlap' });
      await op.stop();
    });
  });

  it('resyncs every CR periodically', async () => {
    const h = harness();
    const reconciles: string[] = [];
    h.putCr();
    const op = start(h, reconciles);
    await eventually(() => h.cr().status?.observedGeneration === 1 && op.queue.runningCount === 0);
    await settle();
    const n = reconciles.length;
    await h.clock.advance(10 * 60 * 1000);
    await eventually(() => reconciles.length > n);
    await op.stop();
  });
});
