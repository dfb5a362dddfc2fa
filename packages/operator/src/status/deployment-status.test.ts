import type { V1DaemonSet, V1Deployment } from '@kubernetes/client-node';
import { getCondition, statusEqual, type PmemCSIDeploymentStatus } from '@pmem-csi/api';
import { nextStatus, statusEvents } from './deployment-status.js';
import { driverComponents } from './driver-components.js';
import { testDeployment } from '../testing/fixtures.js';

const NOW = '2026-01-01T00:00:00Z';
const deployment = (replicas: number, ready: number, observed = 1): V1Deployment => ({
  metadata: { generation: 1 },
  spec: { replicas, selector: {}, template: {} },
  status: { observedGeneration: observed, readyReplicas: ready, updatedReplicas: ready },
});
const daemonSet = (desired: number, ready: number, updated = desired): V1DaemonSet => ({
  metadata: { generation: 2 },
  status: {
    observedGeneration: 2,
    desiredNumberScheduled: desired,
    numberReady: ready,
    updatedNumberScheduled: updated,
    currentNumberScheduled: desired,
    numberMisscheduled: 0,
  },
});
const certsReady = { type: 'CertsReady' as const, status: 'True' as const, reason: 'OperatorIssued', message: 'm' };

describe('driverComponents', () => {
  it('counts ready and updated pods', () => {
    expect(driverComponents(deployment(2, 1), daemonSet(5, 3), NOW)).toEqual([
      {
        component: 'Controller',
        status: 'NotReady',
        reason: '1 of 2 controller pods ready, 1 updated',
        desired: 2,
        ready: 1,
        lastUpdated: NOW,
      },
      {
        component: 'Node',
        status: 'NotReady',
        reason: '3 of 5 node driver pods ready',
        desired: 5,
        ready: 3,
        lastUpdated: NOW,
      },
    ]);
    expect(driverComponents(deployment(1, 1), daemonSet(5, 5, 4), NOW)[1]).toMatchObject({
      status: 'NotReady',
      reason: '5 of 5 node driver pods ready, 4 updated',
    });
    expect(driverComponents(deployment(1, 1), daemonSet(5, 5), NOW).map((c) => c.status)).toEqual(['Ready', 'Ready']);
  });

  it('names the active controller replica while a controller pod is ready', () => {
    const provisioner = { provisioner: 'ctrl-7c9f-x2x' };
    expect(driverComponents(deployment(3, 2), daemonSet(5, 5), NOW, provisioner)[0]).toEqual({
      component: 'Controller',
      status: 'NotReady',
      reason: '2 of 3 controller pods ready, 2 updated, ctrl-7c9f-x2x provisions',
      desired: 3,
      ready: 2,
      active: 'ctrl-7c9f-x2x',
      lastUpdated: NOW,
    });
    expect(driverComponents(deployment(3, 3), daemonSet(5, 5), NOW, provisioner)[0]).toMatchObject({
      status: 'Ready',
      reason: '3 of 3 controller pods ready, ctrl-7c9f-x2x provisions',
    });
    // No ready pod: whatever the Lease still says, nobody provisions.
    const none = driverComponents(deployment(3, 0), daemonSet(5, 5), NOW, provisioner)[0];
    expect(none?.active).toBeUndefined();
    expect(none?.reason).toBe('0 of 3 controller pods ready, 0 updated');
    expect(driverComponents(deployment(3, 3), daemonSet(5, 5), NOW)[0]).not.toHaveProperty('active');
    // The Node component never has one.
    expect(driverComponents(deployment(3, 3), daemonSet(5, 5), NOW, provisioner)[1]).not.toHaveProperty('active');
  });

  it('names the replica that resizes beside the one that provisions: two pods or one', () => {
    const two = driverComponents(deployment(3, 3), daemonSet(5, 5), NOW, { provisioner: 'ctrl-a', resizer: 'ctrl-b' });
    expect(two[0]).toEqual({
      component: 'Controller',
      status: 'Ready',
      reason: '3 of 3 controller pods ready, ctrl-a provisions, ctrl-b resizes',
      desired: 3,
      ready: 3,
      active: 'ctrl-a',
      activeResizer: 'ctrl-b',
      lastUpdated: NOW,
    });
    expect(two[1]).not.toHaveProperty('activeResizer');
    expect(
      driverComponents(deployment(3, 2), daemonSet(5, 5), NOW, { provisioner: 'ctrl-a', resizer: 'ctrl-a' })[0],
    ).toMatchObject({
      reason: '2 of 3 controller pods ready, 2 updated, ctrl-a provisions and resizes',
      active: 'ctrl-a',
      activeResizer: 'ctrl-a',
    });
    // Only the resizer's Lease is held (the provisioner's ran out: a failover in progress).
    const resizerOnly = driverComponents(deployment(2, 2), daemonSet(5, 5), NOW, { resizer: 'ctrl-b' })[0];
    expect(resizerOnly).toMatchObject({
      reason: '2 of 2 controller pods ready, ctrl-b resizes',
      activeResizer: 'ctrl-b',
    });
    expect(resizerOnly).not.toHaveProperty('active');
    // No ready pod: neither holder is reported.
    const none = driverComponents(deployment(2, 0), daemonSet(5, 5), NOW, {
      provisioner: 'ctrl-a',
      resizer: 'ctrl-b',
    })[0];
    expect(none).not.toHaveProperty('active');
    expect(none).not.toHaveProperty('activeResizer');
    expect(none?.reason).toBe('0 of 2 controller pods ready, 0 updated');
  });

  it('is not ready before the workload controllers observed the spec, or without nodes', () => {
    expect(driverComponents(deployment(1, 1, 0), undefined, NOW).map((c) => c.reason)).toEqual([
      'waiting for the Deployment controller to observe the latest spec',
      'waiting for the DaemonSet controller to observe the latest spec',
    ]);
    expect(driverComponents(deployment(1, 1), daemonSet(0, 0), NOW)[1]).toMatchObject({
      status: 'NotReady',
      reason: 'no node driver pods: no node matches the node selector',
    });
  });
});

describe('nextStatus', () => {
  const now = new Date(NOW);

  it('is Running only with both components ready', () => {
    const cr = testDeployment();
    const waiting = nextStatus(
      cr,
      { kind: 'applied', conditions: [certsReady], deployment: deployment(1, 1), daemonSet: daemonSet(3, 2) },
      now,
    );
    expect(waiting.phase).toBe('');
    expect(waiting.reason).toBe(
      'waiting for driver pods (Controller: 1 of 1 controller pods ready; Node: 2 of 3 node driver pods ready)',
    );
    const running = nextStatus(
      cr,
      { kind: 'applied', conditions: [certsReady], deployment: deployment(1, 1), daemonSet: daemonSet(3, 3) },
      now,
    );
    expect(running).toMatchObject({ phase: 'Running', observedGeneration: 1, lastUpdated: NOW });
    expect(getCondition(running.conditions, 'DriverDeployed')).toEqual({
      type: 'DriverDeployed',
      status: 'True',
      reason: 'AllObjectsApplied',
      message: 'all driver objects are applied',
      observedGeneration: 1,
      lastTransitionTime: NOW,
    });
  });

  it('keeps lastTransitionTime while a condition keeps its status, and moves it on a flip', () => {
    const first = nextStatus(
      testDeployment(),
      { kind: 'applied', conditions: [certsReady], deployment: undefined, daemonSet: undefined },
      now,
    );
    const later = new Date('2026-01-02T00:00:00Z');
    const cr = { ...testDeployment(), status: first };
    const same = nextStatus(
      cr,
      { kind: 'applied', conditions: [certsReady], deployment: undefined, daemonSet: undefined },
      later,
    );
    expect(getCondition(same.conditions, 'DriverDeployed')?.lastTransitionTime).toBe(NOW);
    const failed = nextStatus(cr, { kind: 'apply-failed', error: 'boom', conditions: [] }, later);
    expect(getCondition(failed.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'ApplyFailed',
      lastTransitionTime: '2026-01-02T00:00:00Z',
    });
    expect(failed).toMatchObject({ phase: 'Failed', reason: 'applying the driver objects failed: boom' });
    // A failed reconcile did not read the workloads: no stale counts.
    expect(first.driverComponents).toHaveLength(2);
    expect(failed.driverComponents).toBeUndefined();
  });

  it('lists the first five validation problems and counts the rest', () => {
    const problems = Array.from({ length: 7 }, (_, i) => ({ path: `spec.f${i}`, message: `spec.f${i}: bad` }));
    expect(nextStatus(testDeployment(), { kind: 'invalid-spec', problems }, now).reason).toBe(
      'invalid spec: spec.f0: bad; spec.f1: bad; spec.f2: bad; spec.f3: bad; spec.f4: bad; and 2 more',
    );
  });

  it('drops CertsVerified when the spec no longer has user certificates', () => {
    const verified = {
      type: 'CertsVerified' as const,
      status: 'True' as const,
      reason: 'HandshakeSucceeded',
      message: '',
    };
    const withUser = nextStatus(
      testDeployment(),
      { kind: 'applied', conditions: [verified, certsReady], deployment: undefined, daemonSet: undefined },
      now,
    );
    expect(getCondition(withUser.conditions, 'CertsVerified')).toBeDefined();
    const cr = { ...testDeployment(), status: withUser };
    expect(
      getCondition(
        nextStatus(cr, { kind: 'applied', conditions: [certsReady], deployment: undefined, daemonSet: undefined }, now)
          .conditions,
        'CertsVerified',
      ),
    ).toBeUndefined();
  });
});

describe('nextStatus with a highly available controller', () => {
  const applied = (provisioner: string, resizer?: string): Parameters<typeof nextStatus>[1] => ({
    kind: 'applied',
    conditions: [certsReady],
    deployment: deployment(2, 2),
    daemonSet: daemonSet(3, 3),
    active: { provisioner, ...(resizer === undefined ? {} : { resizer }) },
  });

  it('writes a new status when another replica takes over, and none while the same one holds on', () => {
    const cr = testDeployment({ controllerReplicas: 2 });
    const first = nextStatus(cr, applied('ctrl-a'), new Date(NOW));
    expect(first.phase).toBe('Running');
    expect(first.driverComponents?.[0]?.active).toBe('ctrl-a');
    const withStatus = { ...cr, status: first };
    expect(statusEqual(first, nextStatus(withStatus, applied('ctrl-a'), new Date('2026-01-01T00:05:00Z')))).toBe(true);
    const failover = nextStatus(withStatus, applied('ctrl-b'), new Date('2026-01-01T00:05:00Z'));
    expect(statusEqual(first, failover)).toBe(false);
    expect(failover.driverComponents?.[0]).toMatchObject({ active: 'ctrl-b', status: 'Ready' });
    expect(statusEvents(first, failover)).toEqual([]);
  });

  it("writes a new status when only the resizer's Lease changes hands, and drops activeResizer when it runs out", () => {
    const cr = testDeployment({ controllerReplicas: 2 });
    const first = nextStatus(cr, applied('ctrl-a', 'ctrl-a'), new Date(NOW));
    expect(first.driverComponents?.[0]).toMatchObject({
      active: 'ctrl-a',
      activeResizer: 'ctrl-a',
      reason: '2 of 2 controller pods ready, ctrl-a provisions and resizes',
    });
    expect(first.reason).toBe(
      'driver is running (Controller: 2 of 2 controller pods ready, ctrl-a provisions and resizes; Node: 3 of 3 node driver pods ready)',
    );
    const withStatus = { ...cr, status: first };
    const later = new Date('2026-01-01T00:05:00Z');
    expect(statusEqual(first, nextStatus(withStatus, applied('ctrl-a', 'ctrl-a'), later))).toBe(true);
    const moved = nextStatus(withStatus, applied('ctrl-a', 'ctrl-b'), later);
    expect(statusEqual(first, moved)).toBe(false);
    expect(moved.driverComponents?.[0]).toMatchObject({ active: 'ctrl-a', activeResizer: 'ctrl-b', status: 'Ready' });
    expect(statusEvents(first, moved)).toEqual([]);
    const expired = nextStatus({ ...cr, status: moved }, applied('ctrl-a'), later);
    expect(statusEqual(moved, expired)).toBe(false);
    expect(expired.driverComponents?.[0]).not.toHaveProperty('activeResizer');
    expect(expired.driverComponents?.[0]?.reason).toBe('2 of 2 controller pods ready, ctrl-a provisions');
  });
});

describe('phase transitions', () => {
  const at = (day: number): Date => new Date(`2026-01-0${day}T00:00:00Z`);
  type Workloads = { deployment: V1Deployment | undefined; daemonSet: V1DaemonSet | undefined };
  const applied = (
    w: Workloads,
  ): {
    kind: 'applied';
    conditions: (typeof certsReady)[];
    deployment: V1Deployment | undefined;
    daemonSet: V1DaemonSet | undefined;
  } => ({ kind: 'applied', conditions: [certsReady], ...w });
  /** Run the outcomes in order, each on the status the previous one left; the statuses and the events of each step. */
  function run(
    ...steps: Array<Parameters<typeof nextStatus>[1]>
  ): Array<{ status: PmemCSIDeploymentStatus; events: string[] }> {
    let cr = testDeployment();
    return steps.map((outcome, i) => {
      const status = nextStatus(cr, outcome, at(i + 1));
      const events = statusEvents(cr.status, status).map((e) => `${e.type} ${e.reason}`);
      cr = { ...cr, status };
      return { status, events };
    });
  }

  it('keeps Running during a node join and a node driver rollout, with one Running event', () => {
    const [first, join, rollout, done] = run(
      applied({ deployment: deployment(1, 1), daemonSet: daemonSet(3, 3) }),
      applied({ deployment: deployment(1, 1), daemonSet: daemonSet(5, 3) }),
      applied({ deployment: deployment(1, 1), daemonSet: daemonSet(5, 4, 2) }),
      applied({ deployment: deployment(1, 1), daemonSet: daemonSet(5, 5) }),
    );
    expect([first, join, rollout, done].map((s) => s?.status.phase)).toEqual([
      'Running',
      'Running',
      'Running',
      'Running',
    ]);
    expect([first, join, rollout, done].map((s) => s?.events)).toEqual([
      ['Normal NewDeployment', 'Normal Running'],
      [],
      [],
      [],
    ]);
    expect(join?.status.reason).toBe(
      'driver is running, some pods are starting or updating (Controller: 1 of 1 controller pods ready; Node: 3 of 5 node driver pods ready)',
    );
    expect(rollout?.status.driverComponents?.[1]).toMatchObject({
      status: 'NotReady',
      reason: '4 of 5 node driver pods ready, 2 updated',
      desired: 5,
      ready: 4,
    });
    expect(done?.status.reason).toBe(
      'driver is running (Controller: 1 of 1 controller pods ready; Node: 5 of 5 node driver pods ready)',
    );
  });

  it('does not enter Running before every pod is ready, and leaves it when no controller pod or no node pod is ready', () => {
    const steps = run(
      applied({ deployment: deployment(1, 1), daemonSet: daemonSet(5, 3) }),
      applied({ deployment: deployment(1, 1), daemonSet: daemonSet(5, 5) }),
      applied({ deployment: deployment(1, 0), daemonSet: daemonSet(5, 5) }),
      applied({ deployment: deployment(1, 1), daemonSet: daemonSet(5, 5) }),
      applied({ deployment: deployment(1, 1), daemonSet: daemonSet(5, 0) }),
    );
    expect(steps.map((s) => s.status.phase)).toEqual(['', 'Running', '', 'Running', '']);
    expect(steps.map((s) => s.events)).toEqual([
      ['Normal NewDeployment'],
      ['Normal Running'],
      ['Warning NotRunning'],
      ['Normal Running'],
      ['Warning NotRunning'],
    ]);
    expect(steps[2]?.status.reason).toBe(
      'waiting for driver pods (Controller: 0 of 1 controller pods ready, 0 updated; Node: 5 of 5 node driver pods ready)',
    );
  });

  it('says so when no node matches the node selector (NodesSelected False, one event), and recovers when one does', () => {
    const selecting = (desired: number, ready: number): V1DaemonSet => ({
      ...daemonSet(desired, ready),
      spec: { selector: {}, template: { spec: { containers: [], nodeSelector: { storage: 'pmem', zone: 'a' } } } },
    });
    const [none, still, matched] = run(
      applied({ deployment: deployment(1, 1), daemonSet: selecting(0, 0) }),
      applied({ deployment: deployment(1, 1), daemonSet: selecting(0, 0) }),
      applied({ deployment: deployment(1, 1), daemonSet: selecting(2, 2) }),
    );
    const message =
      'no node matches the node selector storage=pmem,zone=a (or every matching node has taints the driver does not tolerate): the node driver has no pods; label the nodes with PMEM or change spec.nodeSelector';
    expect(none?.status).toMatchObject({
      phase: '',
      reason: `${message} (Controller: 1 of 1 controller pods ready; Node: no node driver pods: no node matches the node selector)`,
    });
    expect(getCondition(none?.status.conditions, 'NodesSelected')).toEqual({
      type: 'NodesSelected',
      status: 'False',
      reason: 'NoMatchingNodes',
      message,
      observedGeneration: 1,
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    expect(none?.events).toEqual(['Normal NewDeployment', 'Warning NoMatchingNodes']);
    expect(still?.events).toEqual([]);
    expect(matched?.status.phase).toBe('Running');
    expect(getCondition(matched?.status.conditions, 'NodesSelected')).toMatchObject({
      status: 'True',
      reason: 'NodesMatch',
      message: 'the node driver runs on 2 nodes',
      lastTransitionTime: '2026-01-03T00:00:00Z',
    });
    expect(matched?.events).toEqual(['Normal Running']);
  });

  it('does not judge NodesSelected before the DaemonSet controller observed the latest spec', () => {
    const stale: V1DaemonSet = {
      metadata: { generation: 3 },
      status: {
        observedGeneration: 2,
        desiredNumberScheduled: 0,
        numberReady: 0,
        currentNumberScheduled: 0,
        numberMisscheduled: 0,
      },
    };
    const [s] = run(applied({ deployment: deployment(1, 1), daemonSet: stale }));
    expect(getCondition(s?.status.conditions, 'NodesSelected')).toBeUndefined();
    expect(s?.status.reason).toBe(
      'waiting for driver pods (Controller: 1 of 1 controller pods ready; Node: waiting for the DaemonSet controller to observe the latest spec)',
    );
  });

  it('goes from Running to Failed without component counts, and back to Running with fresh ones', () => {
    const steps = run(
      applied({ deployment: deployment(1, 1), daemonSet: daemonSet(3, 3) }),
      { kind: 'apply-failed', error: 'DaemonSet pmem-csi/x: 500 etcd timeout', conditions: [] },
      { kind: 'apply-failed', error: 'DaemonSet pmem-csi/x: 500 etcd timeout', conditions: [] },
      applied({ deployment: deployment(1, 1), daemonSet: daemonSet(3, 3) }),
    );
    expect(steps.map((s) => s.status.phase)).toEqual(['Running', 'Failed', 'Failed', 'Running']);
    expect(steps.map((s) => s.events)).toEqual([
      ['Normal NewDeployment', 'Normal Running'],
      ['Warning Failed'],
      [],
      ['Normal Running'],
    ]);
    expect(steps.map((s) => s.status.driverComponents?.map((c) => `${c.component} ${c.ready}/${c.desired}`))).toEqual([
      ['Controller 1/1', 'Node 3/3'],
      undefined,
      undefined,
      ['Controller 1/1', 'Node 3/3'],
    ]);
    expect(getCondition(steps[1]?.status.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'ApplyFailed',
    });
    expect(getCondition(steps[3]?.status.conditions, 'DriverDeployed')).toMatchObject({
      status: 'True',
      reason: 'AllObjectsApplied',
      lastTransitionTime: '2026-01-04T00:00:00Z',
    });
  });
});

describe('nextStatus with conflicts', () => {
  const now = new Date(NOW);
  const later = new Date('2026-01-02T00:00:00Z');
  const conflict = { kind: 'conflict' as const, reason: 'NameCollision' as const, message: 'names collide' };

  it('sets Conflict True, DriverDeployed False and phase Failed, keeping the conditions it did not judge and dropping the component counts', () => {
    const verified = {
      type: 'CertsVerified' as const,
      status: 'True' as const,
      reason: 'HandshakeSucceeded',
      message: '',
    };
    const deployed = nextStatus(
      testDeployment(),
      { kind: 'applied', conditions: [verified, certsReady], deployment: deployment(1, 1), daemonSet: daemonSet(3, 3) },
      now,
    );
    const refused = nextStatus({ ...testDeployment(), status: deployed }, conflict, later);
    expect(refused).toMatchObject({ phase: 'Failed', reason: 'names collide', observedGeneration: 1 });
    expect(getCondition(refused.conditions, 'Conflict')).toEqual({
      type: 'Conflict',
      status: 'True',
      reason: 'NameCollision',
      message: 'names collide',
      observedGeneration: 1,
      lastTransitionTime: '2026-01-02T00:00:00Z',
    });
    expect(getCondition(refused.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'Conflict',
      message: 'names collide',
    });
    expect(getCondition(refused.conditions, 'CertsVerified')).toMatchObject({ status: 'True' });
    expect(deployed.driverComponents).toHaveLength(2);
    expect(refused.driverComponents).toBeUndefined();
  });

  it('turns Conflict False (Resolved) at the first reconcile that is not refused, and adds none where there never was one', () => {
    const refused = nextStatus(testDeployment(), conflict, now);
    const resolved = nextStatus(
      { ...testDeployment(), status: refused },
      { kind: 'applied', conditions: [certsReady], deployment: undefined, daemonSet: undefined },
      later,
    );
    expect(getCondition(resolved.conditions, 'Conflict')).toEqual({
      type: 'Conflict',
      status: 'False',
      reason: 'Resolved',
      message: 'no other deployment or controller owns the objects of this deployment any more',
      observedGeneration: 1,
      lastTransitionTime: '2026-01-02T00:00:00Z',
    });
    const invalid = nextStatus(
      { ...testDeployment(), status: refused },
      { kind: 'invalid-spec', problems: [{ path: 'spec.x', message: 'spec.x: bad' }] },
      later,
    );
    expect(getCondition(invalid.conditions, 'Conflict')).toMatchObject({ status: 'False', reason: 'Resolved' });
    const never = nextStatus(
      testDeployment(),
      { kind: 'applied', conditions: [certsReady], deployment: undefined, daemonSet: undefined },
      now,
    );
    expect(getCondition(never.conditions, 'Conflict')).toBeUndefined();
  });
});

describe('statusEvents', () => {
  const s = (o: PmemCSIDeploymentStatus): PmemCSIDeploymentStatus => ({ observedGeneration: 1, ...o });
  it('announces a new deployment, Running once, and each new failure reason', () => {
    expect(statusEvents(undefined, s({ phase: '' })).map((e) => e.reason)).toEqual(['NewDeployment']);
    expect(statusEvents(s({ phase: '' }), s({ phase: 'Running', reason: 'r' }))).toEqual([
      { type: 'Normal', reason: 'Running', message: 'r' },
    ]);
    expect(statusEvents(s({ phase: 'Running' }), s({ phase: 'Running' }))).toEqual([]);
    expect(statusEvents(s({ phase: 'Running' }), s({ phase: 'Failed', reason: 'x' }))).toEqual([
      { type: 'Warning', reason: 'Failed', message: 'x' },
    ]);
    expect(statusEvents(s({ phase: 'Failed', reason: 'x' }), s({ phase: 'Failed', reason: 'x' }))).toEqual([]);
    expect(statusEvents(s({ phase: 'Failed', reason: 'x' }), s({ phase: 'Failed', reason: 'y' }))).toHaveLength(1);
  });

  it('announces a conflict as Conflict (not Failed), once, and its end as ConflictResolved', () => {
    const c = (status: 'True' | 'False'): PmemCSIDeploymentStatus['conditions'] => [
      {
        type: 'Conflict',
        status,
        reason: status === 'True' ? 'NameCollision' : 'Resolved',
        message: 'm',
        lastTransitionTime: NOW,
      },
    ];
    const refused = s({ phase: 'Failed', reason: 'names collide', conditions: c('True') });
    expect(statusEvents(undefined, refused)).toEqual([
      { type: 'Normal', reason: 'NewDeployment', message: 'processing new driver deployment' },
      { type: 'Warning', reason: 'Conflict', message: 'names collide' },
    ]);
    expect(statusEvents(refused, refused)).toEqual([]);
    expect(statusEvents(refused, s({ phase: 'Running', reason: 'r', conditions: c('False') }))).toEqual([
      {
        type: 'Normal',
        reason: 'ConflictResolved',
        message: 'no other deployment or controller owns the objects of this deployment any more',
      },
      { type: 'Normal', reason: 'Running', message: 'r' },
    ]);
    expect(
      statusEvents(
        s({ phase: '', conditions: c('False') }),
        s({ phase: 'Running', reason: 'r', conditions: c('False') }),
      ),
    ).toEqual([{ type: 'Normal', reason: 'Running', message: 'r' }]);
  });

  it('warns once that emulated volumes are not PMEM: when EmulatedPmem turns True, not while it stays, not when it turns False', () => {
    const e = (status: 'True' | 'False'): PmemCSIDeploymentStatus['conditions'] => [
      {
        type: 'EmulatedPmem',
        status,
        reason: status === 'True' ? 'LoopBackedFiles' : 'PmemDeviceMode',
        message: `emulated ${status}`,
        lastTransitionTime: NOW,
      },
    ];
    expect(statusEvents(undefined, s({ phase: '', conditions: e('True') }))).toEqual([
      { type: 'Normal', reason: 'NewDeployment', message: 'processing new driver deployment' },
      { type: 'Warning', reason: 'EmulatedPmem', message: 'emulated True' },
    ]);
    expect(statusEvents(s({ phase: '', conditions: e('True') }), s({ phase: '', conditions: e('True') }))).toEqual([]);
    expect(statusEvents(s({ phase: '', conditions: e('True') }), s({ phase: '', conditions: e('False') }))).toEqual([]);
    expect(statusEvents(s({ phase: '', conditions: e('False') }), s({ phase: '', conditions: e('True') }))).toEqual([
      { type: 'Warning', reason: 'EmulatedPmem', message: 'emulated True' },
    ]);
  });
});
