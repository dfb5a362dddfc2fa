import { NotFoundError } from '@pmem-csi/runtime';
import { NodeRegistry, type NodeCapacity } from './node-registry.js';

const cap = (max: number): NodeCapacity => ({ maxVolumeSize: max, available: max, managed: max, total: max });

describe('NodeRegistry', () => {
  let now = 1_000_000;
  const registry = () => new NodeRegistry({ leaseSeconds: 30, now: () => now });
  const input = { nodeId: 'n1', endpoint: 'h:1', capacity: cap(5), deviceMode: 'lvm', version: 'v1' };

  it('is syncing until its volumes are listed, then available until the lease runs out', () => {
    const r = registry();
    const reg = r.register(input);
    expect(reg.registrationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.view('n1')?.state).toBe('syncing');
    expect(r.markListed('n1', reg.registrationId)).toBe(true);
    expect(r.view('n1')).toMatchObject({ state: 'available', reason: undefined, volumesKnown: true });
    now += 20_000;
    r.renew('n1', reg.registrationId, cap(3));
    expect(r.view('n1')?.capacity.maxVolumeSize).toBe(3);
    now += 29_999;
    expect(r.view('n1')?.state).toBe('available');
    now += 1;
    expect(r.view('n1')).toMatchObject({ state: 'unavailable', reason: `the lease expired at ${new Date(now).toISOString()} without renewal` });
  });

  it('refuses renewals of unknown or expired registrations with NOT_FOUND', () => {
    const r = registry();
    const reg = r.register(input);
    const expected = new NotFoundError('unknown registration for node "n1"; register again');
    expect(() => r.renew('n1', 'other', undefined)).toThrow(expected);
    expect(() => r.renew('n2', reg.registrationId, undefined)).toThrow(new NotFoundError('unknown registration for node "n2"; register again'));
    now += 30_000;
    expect(() => r.renew('n1', reg.registrationId, undefined)).toThrow(expected);
    expect(r.view('n1')).toMatchObject({ state: 'unavailable', reason: 'the lease expired before it was renewed; waiting for the node to register again' });
  });

  it('a re-registration supersedes the old one; revoke and unregister keep the node known', () => {
    const r = registry();
    const first = r.register(input);
    const second = r.register({ ...input, endpoint: 'h:2' });
    expect(second.previousEndpoint).toBe('h:1');
    expect(r.markListed('n1', first.registrationId)).toBe(false);
    expect(r.revoke('n1', second.registrationId, 'listing failed')).toBe(true);
    expect(r.view('n1')).toMatchObject({ state: 'unavailable', reason: 'listing failed', endpoint: 'h:2' });
    const third = r.register(input);
    r.unregister('n1', third.registrationId);
    expect(r.view('n1')).toMatchObject({ state: 'unregistered', reason: 'the node unregistered (shut down)' });
    expect(r.list().map((n) => n.nodeId)).toEqual(['n1']);
  });
});
