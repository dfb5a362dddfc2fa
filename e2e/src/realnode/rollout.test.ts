// The rollout checks of the upgrade scenario, on hand-made objects: a check that passed on a
// half-rolled DaemonSet or missed two controllers would make the real-node scenario pass wrongly.
import type { PmemDeployment } from '../cluster/pmem-deployment.js';
import {
  RolloutObserver,
  crRunning,
  daemonSetRolled,
  deploymentRolled,
  isLive,
  parseCriLog,
  podState,
  type RolloutSnapshot,
  type Workload,
} from './rollout.js';
import type { Pod } from './workloads.js';

const A = 'pmem-csi-driver:0.1.0';
const B = 'pmem-csi-driver:0.1.1-e2e';

function pod(name: string, image: string, o: { phase?: string; ready?: boolean; terminating?: boolean } = {}): Pod {
  const ready = o.ready ?? true;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      uid: `uid-${name}`,
      ...(o.terminating === true ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { containers: [{ name: 'pmem-driver', image }] },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: [{ name: 'pmem-driver', ready, restartCount: 0 }],
    },
  };
}

function daemonSet(image: string, status: Workload['status'], generation = 2): Workload {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'ds', generation },
    spec: { template: { spec: { containers: [{ name: 'pmem-driver', image }] } } },
    status,
  };
}

function deployment(image: string, status: Workload['status'], generation = 2): Workload {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'ctl', generation },
    spec: {
      replicas: 1,
      strategy: { type: 'Recreate' },
      template: { spec: { containers: [{ name: 'pmem-driver', image }] } },
    },
    status,
  };
}

const dsDone = {
  observedGeneration: 2,
  desiredNumberScheduled: 1,
  updatedNumberScheduled: 1,
  numberReady: 1,
  numberAvailable: 1,
};
const depDone = { observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 };

describe('daemonSetRolled', () => {
  it('holds only when the new template was observed and its one pod is B and ready', () => {
    expect(daemonSetRolled(daemonSet(B, dsDone), [pod('n2', B)], 'pmem-driver', B)).toBe(true);
    // Not yet observed by the DaemonSet controller: its status still describes the old template.
    expect(daemonSetRolled(daemonSet(B, { ...dsDone, observedGeneration: 1 }), [pod('n2', B)], 'pmem-driver', B)).toBe(
      false,
    );
    expect(
      daemonSetRolled(daemonSet(B, { ...dsDone, updatedNumberScheduled: 0 }), [pod('n1', A)], 'pmem-driver', B),
    ).toBe(false);
    expect(
      daemonSetRolled(daemonSet(B, dsDone), [pod('n1', A, { terminating: true }), pod('n2', B)], 'pmem-driver', B),
    ).toBe(false);
    expect(daemonSetRolled(daemonSet(B, dsDone), [pod('n2', B, { ready: false })], 'pmem-driver', B)).toBe(false);
    expect(daemonSetRolled(daemonSet(A, dsDone), [pod('n1', A)], 'pmem-driver', B)).toBe(false);
    expect(daemonSetRolled(undefined, [], 'pmem-driver', B)).toBe(false);
  });
});

describe('deploymentRolled', () => {
  it('holds only when every replica is updated and ready and no other pod is left', () => {
    expect(deploymentRolled(deployment(B, depDone), [pod('c2', B)], 'pmem-driver', B)).toBe(true);
    expect(
      deploymentRolled(
        deployment(B, { ...depDone, readyReplicas: 0, availableReplicas: 0 }),
        [pod('c2', B, { ready: false })],
        'pmem-driver',
        B,
      ),
    ).toBe(false);
    expect(
      deploymentRolled(deployment(B, depDone), [pod('c1', A, { terminating: true }), pod('c2', B)], 'pmem-driver', B),
    ).toBe(false);
    expect(
      deploymentRolled(deployment(B, { ...depDone, observedGeneration: 1 }), [pod('c2', B)], 'pmem-driver', B),
    ).toBe(false);
  });
});

describe('isLive and crRunning', () => {
  it('count terminating pods as live until they reached a terminal phase', () => {
    expect([
      isLive(pod('a', A, { terminating: true })),
      isLive(pod('b', A, { phase: 'Pending' })),
      isLive(pod('c', A, { phase: 'Succeeded' })),
      isLive(pod('d', A, { phase: 'Failed' })),
    ]).toEqual([true, true, false, false]);
  });

  it('want phase Running and every component Ready', () => {
    const cr = (phase: string, node: string): PmemDeployment =>
      ({
        apiVersion: 'pmem-csi.intel.com/v1beta1',
        kind: 'PmemCSIDeployment',
        metadata: { name: 'x' },
        status: {
          phase,
          driverComponents: [
            { component: 'Controller', status: 'Ready' },
            { component: 'Node', status: node },
          ],
        },
      }) as PmemDeployment;
    expect([
      crRunning(cr('Running', 'Ready')),
      crRunning(cr('Running', 'NotReady')),
      crRunning(cr('', 'Ready')),
      crRunning(undefined),
    ]).toEqual([true, false, false, false]);
  });
});

describe('RolloutObserver', () => {
  const snap = (ms: number, controllers: Pod[]): RolloutSnapshot => ({
    ms,
    operatorPods: [],
    controllerPods: controllers,
    nodePods: [],
    deployment: undefined,
    daemonSet: undefined,
    cr: undefined,
    workload: undefined,
  });

  it('records the first time a milestone held, every broken invariant and a timeline line per change', () => {
    const o = new RolloutObserver({
      take: () => Promise.reject(new Error('not sampling in this test')),
      describe: (s) => s.controllerPods.map((p) => `${p.metadata.name}${isLive(p) ? '' : ' done'}`).join(','),
      milestones: [
        { name: 'A gone', holds: (s) => s.controllerPods.every((p) => p.spec.containers[0]?.image !== A) },
        // Depends on the one before, reached in the same sample or earlier.
        { name: 'B there', holds: (s, reached) => reached.has('A gone') && s.controllerPods.length === 1 },
      ],
      invariants: [
        {
          name: 'one controller',
          broken: (s) => (s.controllerPods.filter(isLive).length <= 1 ? undefined : `${s.controllerPods.length} live`),
        },
      ],
    });
    o.record(snap(0, [pod('c1', A)]));
    o.record(snap(250, [pod('c1', A)]));
    o.record(snap(500, [pod('c1', A, { terminating: true }), pod('c2', B, { phase: 'Pending', ready: false })]));
    o.record(snap(750, [pod('c2', B)]));
    o.record(snap(1000, [pod('c1', A)]));
    expect(o.samples).toBe(5);
    expect(o.violations).toEqual(['0.5 s: one controller: 2 live']);
    expect([o.seconds('A gone'), o.seconds('B there')]).toEqual([0.8, 0.8]);
    // Reached stays reached (the last sample has A again).
    expect(o.summary()).toBe('A gone 0.8 s, B there 0.8 s');
    expect(o.lines).toEqual([
      '0.0 s: c1',
      '0.5 s: c1,c2',
      '0.8 s: ** A gone',
      '0.8 s: ** B there',
      '0.8 s: c2',
      '1.0 s: c1',
    ]);
  });

  it('keeps sampling after a failed sample and counts it', async () => {
    let n = 0;
    const o = new RolloutObserver({
      take: () => (++n === 2 ? Promise.reject(new Error('apiserver said 503')) : Promise.resolve(snap(n, []))),
      describe: () => 'same',
      milestones: [],
      invariants: [],
      intervalMs: 5,
    }).start();
    await new Promise((r) => setTimeout(r, 60));
    await o.stop();
    expect(o.failedSamples).toBe(1);
    expect(o.samples).toBeGreaterThanOrEqual(2);
    expect(o.lines.slice(0, 3)).toEqual(['0.0 s: same', 'sample failed: apiserver said 503', '0.0 s: same']);
  });
});

describe('parseCriLog', () => {
  it("reads the kubelet's timestamps to the millisecond and skips other lines", () => {
    const text = [
      '2026-12-01T21:05:01.123456789Z stderr F level=INFO msg="became leader" lease=pmem-csi-operator',
      'not a CRI line',
      '2026-12-01T22:05:02+01:00 stdout P partial',
      '',
    ].join('\n');
    expect(parseCriLog(text)).toEqual([
      { at: Date.parse('2026-12-01T21:05:01.123Z'), text: 'level=INFO msg="became leader" lease=pmem-csi-operator' },
      { at: Date.parse('2026-12-01T21:05:02.000Z'), text: 'partial' },
    ]);
  });
});

describe('podState', () => {
  it('names the image, the state and the exit codes of ended containers', () => {
    const label = (i: string | undefined): string => (i === A ? 'A' : i === B ? 'B' : '?');
    const ended = pod('c1', A, { phase: 'Failed', ready: false, terminating: true });
    ended.status = {
      ...ended.status,
      containerStatuses: [
        { name: 'pmem-driver', ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } },
        { name: 'external-provisioner', ready: false, restartCount: 0, state: { terminated: { exitCode: 2 } } },
      ],
    };
    expect([podState(pod('c2', B), 'pmem-driver', label), podState(ended, 'pmem-driver', label)]).toEqual([
      'B ready',
      'A Failed terminating (exit pmem-driver 0, external-provisioner 2)',
    ]);
  });
});
