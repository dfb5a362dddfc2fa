import type { KubeObject } from '../kube/kube-port.js';
import { activeController, leaseHolderIdentity } from './active-controller.js';

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
