import type { KubeObject } from '../kube/kube-port.js';
import { activeController, activeReplicas, leaseHolderIdentity } from './active-controller.js';

const NOW = Date.parse('2026-01-01T00:00:10Z');

/** A Lease as external-provisioner's leader election writes it (MicroTime with six digits). */
const lease = (spec: Record<string, unknown>): KubeObject =>
  ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'pmem-csi-intel-com', namespace: 'pmem-csi' },
    spec,
  }) as KubeObject;

const held = (renewTime: string | Date, extra: Record<string, unknown> = {}): KubeObject =>
  lease({ holderIdentity: 'ctrl-a', leaseDurationSeconds: 8, renewTime, ...extra });

describe('activeController', () => {
  it('is the holder while its Lease runs, up to and including the last instant', () => {
    expect(activeController(held('2026-01-01T00:00:07.000000Z'), NOW)).toBe('ctrl-a');
    expect(activeController(held('2026-01-01T00:00:02.000000Z'), NOW)).toBe('ctrl-a');
    expect(activeController(held(new Date('2026-01-01T00:00:05Z')), NOW)).toBe('ctrl-a');
  });

  it('is nobody once the Lease ran out (the holder died, no standby took over yet)', () => {
    expect(activeController(held('2026-01-01T00:00:01.999999Z'), NOW)).toBeUndefined();
    expect(leaseHolderIdentity(held('2026-01-01T00:00:01.999999Z'))).toBe('ctrl-a');
  });

  it('uses acquireTime when the Lease was never renewed', () => {
    const acquired = lease({ holderIdentity: 'ctrl-b', leaseDurationSeconds: 8, acquireTime: '2026-01-01T00:00:09Z' });
    expect(activeController(acquired, NOW)).toBe('ctrl-b');
  });

  it('is nobody without a Lease, a holder, a time or a duration', () => {
    expect(activeController(undefined, NOW)).toBeUndefined();
    expect(activeController(lease({}), NOW)).toBeUndefined();
    expect(activeController(held('2026-01-01T00:00:09Z', { holderIdentity: '' }), NOW)).toBeUndefined();
    expect(activeController(lease({ holderIdentity: 'ctrl-a', leaseDurationSeconds: 8 }), NOW)).toBeUndefined();
    expect(activeController(held('not a time'), NOW)).toBeUndefined();
    expect(activeController(held('2026-01-01T00:00:09Z', { leaseDurationSeconds: undefined }), NOW)).toBeUndefined();
    expect(leaseHolderIdentity(undefined)).toBeUndefined();
    expect(leaseHolderIdentity(lease({ holderIdentity: '' }))).toBeUndefined();
  });
});

describe('activeReplicas', () => {
  const at = (holder: string, renewTime: string): KubeObject =>
    lease({ holderIdentity: holder, leaseDurationSeconds: 8, renewTime });

  it('names the holder of each Lease: two pods, or one pod in both roles', () => {
    const live = '2026-01-01T00:00:09.000000Z';
    expect(activeReplicas({ provisioner: at('ctrl-a', live), resizer: at('ctrl-b', live) }, NOW)).toEqual({
      provisioner: 'ctrl-a',
      resizer: 'ctrl-b',
    });
    expect(activeReplicas({ provisioner: at('ctrl-a', live), resizer: at('ctrl-a', live) }, NOW)).toEqual({
      provisioner: 'ctrl-a',
      resizer: 'ctrl-a',
    });
  });

  it('leaves out a role whose Lease is absent, unheld or ran out, each on its own', () => {
    const live = '2026-01-01T00:00:09.000000Z';
    const ranOut = '2026-01-01T00:00:01.999999Z';
    expect(activeReplicas({ provisioner: at('ctrl-a', live), resizer: undefined }, NOW)).toEqual({
      provisioner: 'ctrl-a',
    });
    expect(activeReplicas({ provisioner: at('ctrl-a', live), resizer: at('ctrl-b', ranOut) }, NOW)).toEqual({
      provisioner: 'ctrl-a',
    });
    expect(activeReplicas({ provisioner: at('ctrl-a', ranOut), resizer: at('ctrl-b', live) }, NOW)).toEqual({
      resizer: 'ctrl-b',
    });
    expect(activeReplicas({ provisioner: undefined, resizer: at('', live) }, NOW)).toEqual({});
  });
});
