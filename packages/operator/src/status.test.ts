import type { V1DaemonSet, V1Deployment } from '@kubernetes/client-node';
import { getCondition, type PmemCSIDeploymentStatus } from '@pmem-csi/api';
import { driverComponents, nextStatus, statusEvents } from './status.js';
import { testDeployment } from './testing/fixtures.js';

const NOW = '2026-01-01T00:00:00Z';
const deployment = (replicas: number, ready: number, observed = 1): V1Deployment => ({ metadata: { generation: 1 }, spec: { replicas, selector: {}, template: {} }, status: { observedGeneration: observed, readyReplicas: ready, updatedReplicas: ready } });
const daemonSet = (desired: number, ready: number, updated = desired): V1DaemonSet => ({
  metadata: { generation: 2 },
  status: { observedGeneration: 2, desiredNumberScheduled: desired, numberReady: ready, updatedNumberScheduled: updated, currentNumberScheduled: desired, numberMisscheduled: 0 },
});
const certsReady = { type: 'CertsReady' as const, status: 'True' as const, reason: 'OperatorIssued', message: 'm' };

describe('driverComponents', () => {
  it('counts ready and updated pods', () => {
    expect(driverComponents(deployment(2, 1), daemonSet(5, 3), NOW)).toEqual([
      { component: 'Controller', status: 'NotReady', reason: '1 of 2 controller pods ready, 1 updated', desired: 2, ready: 1, lastUpdated: NOW },
      { component: 'Node', status: 'NotReady', reason: '3 of 5 node driver pods ready', desired: 5, ready: 3, lastUpdated: NOW },
    ]);
    expect(driverComponents(deployment(1, 1), daemonSet(5, 5, 4), NOW)[1]).toMatchObject({ status: 'NotReady', reason: '5 of 5 node driver pods ready, 4 updated' });
    expect(driverComponents(deployment(1, 1), daemonSet(5, 5), NOW).map((c) => c.status)).toEqual(['Ready', 'Ready']);
  });

  it('is not ready before the workload controllers observed the spec, or without nodes', () => {
    expect(driverComponents(deployment(1, 1, 0), undefined, NOW).map((c) => c.reason)).toEqual([
      'waiting for the Deployment controller to observe the latest spec',
      'waiting for the DaemonSet controller to observe the latest spec',
    ]);
    expect(driverComponents(deployment(1, 1), daemonSet(0, 0), NOW)[1]).toMatchObject({ status: 'NotReady', reason: 'no node driver pods: no node matches the node selector' });
  });
});

describe('nextStatus', () => {
  const now = new Date(NOW);

  it('is Running only with both components ready', () => {
    const cr = testDeployment();
    const waiting = nextStatus(cr, { kind: 'applied', conditions: [certsReady], deployment: deployment(1, 1), daemonSet: daemonSet(3, 2) }, now);
    expect(waiting.phase).toBe('');
    expect(waiting.reason).toBe('waiting for driver pods (Controller: 1 of 1 controller pods ready; Node: 2 of 3 node driver pods ready)');
    const running = nextStatus(cr, { kind: 'applied', conditions: [certsReady], deployment: deployment(1, 1), daemonSet: daemonSet(3, 3) }, now);
    expect(running).toMatchObject({ phase: 'Running', observedGeneration: 1, lastUpdated: NOW });
    expect(getCondition(running.conditions, 'DriverDeployed')).toEqual({ type: 'DriverDeployed', status: 'True', reason: 'AllObjectsApplied', message: 'all driver objects are applied', observedGeneration: 1, lastTransitionTime: NOW });
  });

  it('keeps lastTransitionTime while a condition keeps its status, and moves it on a flip', () => {
    const first = nextStatus(testDeployment(), { kind: 'applied', conditions: [certsReady], deployment: undefined, daemonSet: undefined }, now);
    const later = new Date('2026-01-02T00:00:00Z');
    const cr = { ...testDeployment(), status: first };
    const same = nextStatus(cr, { kind: 'applied', conditions: [certsReady], deployment: undefined, daemonSet: undefined }, later);
    expect(getCondition(same.conditions, 'DriverDeployed')?.lastTransitionTime).toBe(NOW);
    const failed = nextStatus(cr, { kind: 'apply-failed', error: 'boom', conditions: [] }, later);
    expect(getCondition(failed.conditions, 'DriverDeployed')).toMatchObject({ status: 'False', reason: 'ApplyFailed', lastTransitionTime: '2026-01-02T00:00:00Z' });
    expect(failed).toMatchObject({ phase: 'Failed', reason: 'applying the driver objects failed: boom' });
    // Components are kept from before when a reconcile did not get to read them.
    expect(failed.driverComponents).toEqual(first.driverComponents);
  });

  it('lists the first five validation problems and counts the rest', () => {
    const problems = Array.from({ length: 7 }, (_, i) => ({ path: `spec.f${i}`, message: `spec.f${i}: bad` }));
    expect(nextStatus(testDeployment(), { kind: 'invalid-spec', problems }, now).reason).toBe('invalid spec: spec.f0: bad; spec.f1: bad; spec.f2: bad; spec.f3: bad; spec.f4: bad; and 2 more');
  });

  it('drops CertsVerified when the spec no longer has user certificates', () => {
    const verified = { type: 'CertsVerified' as const, status: 'True' as const, reason: 'HandshakeSucceeded', message: '' };
    const withUser = nextStatus(testDeployment(), { kind: 'applied', conditions: [verified, certsReady], deployment: undefined, daemonSet: undefined }, now);
    expect(getCondition(withUser.conditions, 'CertsVerified')).toBeDefined();
    const cr = { ...testDeployment(), status: withUser };
    expect(getCondition(nextStatus(cr, { kind: 'applied', conditions: [certsReady], deployment: undefined, daemonSet: undefined }, now).conditions, 'CertsVerified')).toBeUndefined();
  });
});

describe('nextStatus with conflicts', () => {
  const now = new Date(NOW);
  const later = new Date('2026-01-02T00:00:00Z');
  const conflict = { kind: 'conflict' as const, reason: 'NameCollision' as const, message: 'names collide' };

  it('sets Conflict True, DriverDeployed False and phase Failed, keeping what it did not judge', () => {
    const verified = { type: 'CertsVerified' as const, status: 'True' as const, reason: 'HandshakeSucceeded', message: '' };
    const deployed = nextStatus(testDeployment(), { kind: 'applied', conditions: [verified, certsReady], deployment: deployment(1, 1), daemonSet: daemonSet(3, 3) }, now);
    const refused = nextStatus({ ...testDeployment(), status: deployed }, conflict, later);
    expect(refused).toMatchObject({ phase: 'Failed', reason: 'names collide', observedGeneration: 1 });
    expect(getCondition(refused.conditions, 'Conflict')).toEqual({ type: 'Conflict', status: 'True', reason: 'NameCollision', message: 'names collide', observedGeneration: 1, lastTransitionTime: '2026-01-02T00:00:00Z' });
    expect(getCondition(refused.conditions, 'DriverDeployed')).toMatchObject({ status: 'False', reason: 'Conflict', message: 'names collide' });
    expect(getCondition(refused.conditions, 'CertsVerified')).toMatchObject({ status: 'True' });
    expect(refused.driverComponents).toEqual(deployed.driverComponents);
  });

  it('turns Conflict False (Resolved) at the first reconcile that is not refused, and adds none where there never was one', () => {
    const refused = nextStatus(testDeployment(), conflict, now);
    const resolved = nextStatus({ ...testDeployment(), status: refused }, { kind: 'applied', conditions: [certsReady], deployment: undefined, daemonSet: undefined }, later);
    expect(getCondition(resolved.conditions, 'Conflict')).toEqual({
      type: 'Conflict',
      status: 'False',
      reason: 'Resolved',
      message: 'no other deployment or controller owns the objects of this deployment any more',
      observedGeneration: 1,
      lastTransitionTime: '2026-01-02T00:00:00Z',
    });
    const invalid = nextStatus({ ...testDeployment(), status: refused }, { kind: 'invalid-spec', problems: [{ path: 'spec.x', message: 'spec.x: bad' }] }, later);
    expect(getCondition(invalid.conditions, 'Conflict')).toMatchObject({ status: 'False', reason: 'Resolved' });
    const never = nextStatus(testDeployment(), { kind: 'applied', conditions: [certsReady], deployment: undefined, daemonSet: undefined }, now);
    expect(getCondition(never.conditions, 'Conflict')).toBeUndefined();
  });
});

describe('statusEvents', () => {
  const s = (o: PmemCSIDeploymentStatus): PmemCSIDeploymentStatus => ({ observedGeneration: 1, ...o });
  it('announces a new deployment, Running once, and each new failure reason', () => {
    expect(statusEvents(undefined, s({ phase: '' })).map((e) => e.reason)).toEqual(['NewDeployment']);
    expect(statusEvents(s({ phase: '' }), s({ phase: 'Running', reason: 'r' }))).toEqual([{ type: 'Normal', reason: 'Running', message: 'r' }]);
    expect(statusEvents(s({ phase: 'Running' }), s({ phase: 'Running' }))).toEqual([]);
    expect(statusEvents(s({ phase: 'Running' }), s({ phase: 'Failed', reason: 'x' }))).toEqual([{ type: 'Warning', reason: 'Failed', message: 'x' }]);
    expect(statusEvents(s({ phase: 'Failed', reason: 'x' }), s({ phase: 'Failed', reason: 'x' }))).toEqual([]);
    expect(statusEvents(s({ phase: 'Failed', reason: 'x' }), s({ phase: 'Failed', reason: 'y' }))).toHaveLength(1);
  });

  it('announces a conflict as Conflict (not Failed), once, and its end as ConflictResolved', () => {
    const c = (status: 'True' | 'False'): PmemCSIDeploymentStatus['conditions'] => [{ type: 'Conflict', status, reason: status === 'True' ? 'NameCollision' : 'Resolved', message: 'm', lastTransitionTime: NOW }];
    const refused = s({ phase: 'Failed', reason: 'names collide', conditions: c('True') });
    expect(statusEvents(undefined, refused)).toEqual([
      { type: 'Normal', reason: 'NewDeployment', message: 'processing new driver deployment' },
      { type: 'Warning', reason: 'Conflict', message: 'names collide' },
    ]);
    expect(statusEvents(refused, refused)).toEqual([]);
    expect(statusEvents(refused, s({ phase: 'Running', reason: 'r', conditions: c('False') }))).toEqual([
      { type: 'Normal', reason: 'ConflictResolved', message: 'no other deployment or controller owns the objects of this deployment any more' },
      { type: 'Normal', reason: 'Running', message: 'r' },
    ]);
    expect(statusEvents(s({ phase: '', conditions: c('False') }), s({ phase: 'Running', reason: 'r', conditions: c('False') }))).toEqual([{ type: 'Normal', reason: 'Running', message: 'r' }]);
  });
});
