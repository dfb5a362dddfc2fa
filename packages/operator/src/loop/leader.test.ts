import { nullLogger } from '@pmem-csi/runtime';
import { KubeApiError } from '../kube/kube-errors.js';
import type { KubeApi } from '../kube/kube-port.js';
import { LeaderElector } from './leader.js';
import { FakeKube } from '../testing/fake-kube.js';
import { ManualClock } from '../testing/manual-clock.js';

interface Replica {
  readonly elector: LeaderElector;
  readonly log: string[];
}

function replica(kube: KubeApi, clock: ManualClock, identity: string): Replica {
  const log: string[] = [];
  const elector = new LeaderElector({
    kube,
    namespace: 'pmem-csi',
    name: 'pmem-csi-operator',
    identity,
    clock,
    log: nullLogger,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  });
  elector.start({ onStartedLeading: () => log.push('started'), onStoppedLeading: () => log.push('stopped') });
  return { elector, log };
}

describe('LeaderElector', () => {
  it('lets exactly one of two replicas lead, and hands over at once on release', async () => {
    const kube = new FakeKube();
    const clock = new ManualClock();
    const a = replica(kube, clock, 'a');
    const b = replica(kube, clock, 'b');
    for (let i = 0; i < 20; i++) {
      await clock.advance(1_000);
      expect([a.elector.isLeader, b.elector.isLeader].filter(Boolean)).toHaveLength(1);
    }
    const [leader, other] = a.elector.isLeader ? [a, b] : [b, a];
    expect(kube.leases.get('pmem-csi/pmem-csi-operator')?.holderIdentity).toBe(leader === a ? 'a' : 'b');
    await leader.elector.stop();
    expect(kube.leases.get('pmem-csi/pmem-csi-operator')?.holderIdentity).toBe('');
    await clock.advance(2_000);
    expect(other.elector.isLeader).toBe(true);
    expect(other.log).toEqual(['started']);
    expect(leader.log).toEqual(['started']);
    expect(kube.leases.get('pmem-csi/pmem-csi-operator')?.leaseTransitions).toBe(1);
    await other.elector.stop();
  });

  it('takes over from a partitioned leader only after it stepped down and a lease duration passed', async () => {
    const kube = new FakeKube();
    const clock = new ManualClock();
    let aIsDown = false;
    // Replica a's own view of the apiserver, which a network partition cuts off.
    const aKube = new Proxy(kube, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          aIsDown
            ? Promise.reject(new KubeApiError(0, 'connection refused'))
            : (value as (...a: unknown[]) => unknown).apply(target, args);
      },
    });
    const a = replica(aKube, clock, 'a');
    await clock.advance(100);
    const b = replica(kube, clock, 'b');
    await clock.advance(4_000);
    expect([a.elector.isLeader, b.elector.isLeader]).toEqual([true, false]);
    aIsDown = true;
    let aSteppedDownAt = 0;
    let bLeadsAt = 0;
    for (let t = 0; t < 30_000; t += 500) {
      await clock.advance(500);
      expect(a.elector.isLeader && b.elector.isLeader).toBe(false);
      if (!a.elector.isLeader && aSteppedDownAt === 0) aSteppedDownAt = t;
      if (b.elector.isLeader && bLeadsAt === 0) bLeadsAt = t;
    }
    expect(aSteppedDownAt).toBeGreaterThan(0);
    expect(bLeadsAt).toBeGreaterThan(aSteppedDownAt);
    expect(bLeadsAt).toBeGreaterThanOrEqual(15_000 - 4_000);
    expect(a.log).toEqual(['started', 'stopped']);
    expect(b.log).toEqual(['started']);
    await Promise.all([a.elector.stop(), b.elector.stop()]);
  });

  it('gives up leadership when it cannot renew within the renew deadline', async () => {
    const kube = new FakeKube();
    const clock = new ManualClock();
    const a = replica(kube, clock, 'a');
    await clock.advance(100);
    expect(a.elector.isLeader).toBe(true);
    kube.failOn('getLease', new KubeApiError(0, 'connection refused'), { times: 100 });
    await clock.advance(8_000);
    expect(a.elector.isLeader).toBe(true);
    await clock.advance(4_000);
    expect(a.elector.isLeader).toBe(false);
    expect(a.log).toEqual(['started', 'stopped']);
    await a.elector.stop();
  });
});
