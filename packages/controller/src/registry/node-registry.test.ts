import { type Capacity, NotFoundError } from '@pmem-csi/csi';
import { NodeRegistry } from './node-registry.js';

const cap = (max: number): Capacity => ({ maxVolumeSize: max, available: max, managed: max, total: max });

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
    expect(r.view('n1')).toMatchObject({
      state: 'unavailable',
      reason: `the lease expired at ${new Date(now).toISOString()} without renewal`,
    });
  });

  it('refuses renewals of unknown or expired registrations with NOT_FOUND', () => {
    const r = registry();
    const reg = r.register(input);
    const expected = new NotFoundError('unknown registration for node "n1"; register again');
    expect(() => r.renew('n1', 'other', undefined)).toThrow(expected);
    expect(() => r.renew('n2', reg.registrationId, undefined)).toThrow(
      new NotFoundError('unknown registration for node "n2"; register again'),
    );
    now += 30_000;
    expect(() => r.renew('n1', reg.registrationId, undefined)).toThrow(expected);
    expect(r.view('n1')).toMatchObject({
      state: 'unavailable',
      reason: 'the lease expired before it was renewed; waiting for the node to register again',
    });
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

  describe('placement order', () => {
    /** Register and list nodes with the given maximum volume sizes. */
    function cluster(sizes: Record<string, number>): { r: NodeRegistry; regs: Map<string, string> } {
      const r = registry();
      const regs = new Map<string, string>();
      for (const [nodeId, max] of Object.entries(sizes)) {
        const reg = r.register({ ...input, nodeId, capacity: cap(max) });
        r.markListed(nodeId, reg.registrationId);
        regs.set(nodeId, reg.registrationId);
      }
      return { r, regs };
    }
    const order = (r: NodeRegistry, minSize = 0, allow?: (id: string) => boolean) =>
      [...r.largestFirst(minSize, allow)].map((n) => n.nodeId);

    it('is largest maximum volume size first, ties by node id in code-unit order (not locale order)', () => {
      const { r } = cluster({ b: 5, a: 5, B: 5, c: 9, ä: 5, d: 1 });
      expect(order(r)).toEqual(['c', 'B', 'a', 'b', 'ä', 'd']);
      expect(order(r, 5)).toEqual(['c', 'B', 'a', 'b', 'ä']);
      expect(order(r, 10)).toEqual([]);
      expect(order(r, 0, (id) => id === 'a' || id === 'd')).toEqual(['a', 'd']);
    });

    it('follows renewals, reports and local adjustments', () => {
      const { r, regs } = cluster({ n1: 5, n2: 7, n3: 3 });
      r.renew('n3', regs.get('n3') ?? '', cap(8));
      expect(order(r)).toEqual(['n3', 'n2', 'n1']);
      r.updateCapacity('n2', cap(1));
      expect(order(r)).toEqual(['n3', 'n1', 'n2']);
      r.adjustCapacity('n3', -6);
      expect(r.view('n3')?.capacity).toEqual({ maxVolumeSize: 2, available: 2, managed: 8, total: 8 });
      expect(order(r)).toEqual(['n1', 'n3', 'n2']);
      r.adjustCapacity('n3', 6);
      expect(order(r)).toEqual(['n3', 'n1', 'n2']);
      r.register({ ...input, nodeId: 'n1', capacity: cap(20) }); // re-registration: syncing, not offered
      expect(order(r)).toEqual(['n3', 'n2']);
    });

    it('does not apply a create or delete twice when the node reported its capacity during the call', () => {
      // A node pushes a renewal with its capacity right after each create or delete (every replica must
      // learn the volume); it can arrive before the create's answer. Subtracting the volume again from
      // that fresh report made a node with room look full (1024 - 700 reported as 324, then 0).
      const { r, regs } = cluster({ n1: 1024 });
      const before = r.capacityReports('n1');
      r.renew('n1', regs.get('n1') ?? '', { maxVolumeSize: 324, available: 324, managed: 1024, total: 1024 });
      expect(r.adjustCapacity('n1', -700, before)).toBe(false);
      expect(r.view('n1')?.capacity.available).toBe(324);
      // Without a report in between the local adjustment applies, as before.
      const quiet = r.capacityReports('n1');
      expect(r.adjustCapacity('n1', -24, quiet)).toBe(true);
      expect(r.view('n1')?.capacity.available).toBe(300);
      expect(r.adjustCapacity('n1', 24, quiet)).toBe(true); // a local adjustment is not a report
      expect(r.view('n1')?.capacity.available).toBe(324);
      r.updateCapacity('n1', cap(1024)); // a refresh answer is a report too
      expect(r.adjustCapacity('n1', 100, quiet)).toBe(false);
    });

    it('offers only available nodes: not syncing, expired, revoked or unregistered ones', () => {
      const { r, regs } = cluster({ n1: 5, n2: 6, n3: 7, n4: 8 });
      r.register({ ...input, nodeId: 'n5', capacity: cap(9) }); // syncing
      r.revoke('n4', regs.get('n4') ?? '', 'listing failed');
      r.unregister('n3', regs.get('n3') ?? '');
      expect(order(r)).toEqual(['n2', 'n1']);
      now += 20_000;
      r.renew('n1', regs.get('n1') ?? '', undefined);
      now += 10_000;
      expect(order(r)).toEqual(['n1']);
      expect(r.isAvailable('n1')).toBe(true);
      expect(r.isAvailable('n2')).toBe(false);
      expect(r.nodesNotAvailable().map((n) => [n.nodeId, n.state])).toEqual([
        ['n2', 'unavailable'],
        ['n3', 'unregistered'],
        ['n4', 'unavailable'],
        ['n5', 'unavailable'],
      ]);
    });

    it('an iteration keeps the order it started with while capacities change between steps', () => {
      const { r } = cluster({ n1: 5, n2: 7, n3: 3 });
      const it = r.largestFirst(2);
      expect(it.next().value?.nodeId).toBe('n2');
      r.updateCapacity('n3', cap(10)); // moves to the front of the order, behind this iteration
      r.updateCapacity('n1', cap(1)); // now too small: skipped, not an end of the walk
      expect([...it].map((n) => n.nodeId)).toEqual(['n3']);
      expect(order(r)).toEqual(['n3', 'n2', 'n1']);
    });
  });

  it("knows in O(1) whether every node's volumes are known", () => {
    const r = registry();
    expect(r.nodesWithUnknownVolumes()).toEqual([]);
    const a = r.register({ ...input, nodeId: 'a' });
    const b = r.register({ ...input, nodeId: 'b' });
    expect(r.nodesWithUnknownVolumes().map((n) => n.nodeId)).toEqual(['a', 'b']);
    r.markListed('b', b.registrationId);
    r.markListed('a', a.registrationId);
    expect(r.nodesWithUnknownVolumes()).toEqual([]);
    r.register({ ...input, nodeId: 'a' }); // known once: stays known across registrations
    expect(r.nodesWithUnknownVolumes()).toEqual([]);
  });

  it('sums the capacity of the available nodes', () => {
    const r = registry();
    const a = r.register({ ...input, nodeId: 'a', capacity: { maxVolumeSize: 3, available: 5, managed: 9, total: 9 } });
    r.register({ ...input, nodeId: 'b', capacity: cap(50) }); // syncing: not counted
    const c = r.register({ ...input, nodeId: 'c', capacity: cap(4) });
    r.markListed('a', a.registrationId);
    r.markListed('c', c.registrationId);
    expect(r.availableCapacity()).toEqual({ available: 9, maxVolumeSize: 4 });
  });

  describe('lease scaling (lease-policy.ts)', () => {
    it('grants the default policy: 30 s base, 120 s at most, 100 s at 5,000 nodes', () => {
      const defaults = new NodeRegistry({ now: () => now });
      for (let i = 0; i < 5000; i++) defaults.register({ ...input, nodeId: `n${i}` });
      expect([defaults.leaseSeconds, defaults.baseLeaseSeconds, defaults.maxLeaseSeconds]).toEqual([100, 30, 120]);
    });

    it('grants the lease of the current cluster size and expires by the lease it granted', () => {
      const r = new NodeRegistry({ leaseSeconds: 30, maxLeaseSeconds: 90, renewalsPerSecond: 0.1, now: () => now });
      const first = r.register({ ...input, nodeId: 'n1' });
      expect(first.leaseSeconds).toBe(30);
      r.markListed('n1', first.registrationId);
      expect(r.register({ ...input, nodeId: 'n2' }).leaseSeconds).toBe(60);
      expect(r.leaseSeconds).toBe(60);
      now += 29_999;
      expect(r.renew('n1', first.registrationId, undefined)).toBe(60);
      now += 59_999;
      expect(r.view('n1')?.state).toBe('available');
      now += 1;
      expect(r.view('n1')?.state).toBe('unavailable');
      expect(r.register({ ...input, nodeId: 'n3' }).leaseSeconds).toBe(90);
      expect(r.register({ ...input, nodeId: 'n4' }).leaseSeconds).toBe(90); // capped
    });
  });
});
