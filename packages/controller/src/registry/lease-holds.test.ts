// Leases held by a connection (lease-policy.ts): the registry binds a node's lease to the connection
// its registration or renewal came over, grants the held lease while that connection is open, and cuts
// the lease to the base lease when it closes. The connections here are a scripted ConnectionWatch; the
// real one (runtime ConnectionTracker) is tested on a mutual-TLS server in runtime, and end to end with
// a node registrar in packages/node/src/registration/registration.test.ts.
import type { ConnectionWatch } from '@pmem-csi/runtime';
import type { Capacity } from '@pmem-csi/csi';
import { NodeRegistry } from './node-registry.js';

const cap = (max: number): Capacity => ({ maxVolumeSize: max, available: max, managed: max, total: max });

class ScriptedConnections implements ConnectionWatch {
  readonly #open = new Map<string, Set<() => void>>();
  open(peer: string): void {
    this.#open.set(peer, new Set());
  }
  close(peer: string): void {
    const listeners = this.#open.get(peer);
    this.#open.delete(peer);
    for (const l of listeners ?? []) l();
  }
  listeners(peer: string): number {
    return this.#open.get(peer)?.size ?? 0;
  }
  isOpen(peer: string): boolean {
    return this.#open.has(peer);
  }
  onClose(peer: string, listener: () => void): (() => void) | undefined {
    const set = this.#open.get(peer);
    if (set === undefined) return undefined;
    set.add(listener);
    return () => set.delete(listener);
  }
}

describe('NodeRegistry: leases held by a connection', () => {
  let now = 5_000_000;
  const input = { nodeId: 'n1', endpoint: 'h:1', capacity: cap(5), deviceMode: 'lvm', version: 'v1' };
  // A held lease of 300 s for one node (3 × 1 / 0.01), 600 s from two.
  const setup = (heldRenewalsPerSecond = 0.01): { r: NodeRegistry; c: ScriptedConnections } => {
    const c = new ScriptedConnections();
    const r = new NodeRegistry({
      leaseSeconds: 30,
      maxHeldLeaseSeconds: 600,
      heldRenewalsPerSecond,
      connections: c,
      now: () => now,
    });
    return { r, c };
  };
  const listed = (r: NodeRegistry, id: string): void => {
    expect(r.markListed('n1', id)).toBe(true);
  };

  it('grants the held lease over an open connection; its close cuts the lease to the base lease', () => {
    const { r, c } = setup();
    c.open('10.0.0.1:40000');
    const reg = r.register({ ...input, peer: '10.0.0.1:40000' });
    listed(r, reg.registrationId);
    expect(reg).toMatchObject({ held: true, leaseSeconds: 300 });
    expect(r.held).toBe(1);
    now += 100_000; // far beyond the base lease: still available, the connection is open
    expect(r.view('n1')?.state).toBe('available');
    c.close('10.0.0.1:40000');
    expect(r.held).toBe(0);
    expect(r.view('n1')?.leaseExpiresAt?.getTime()).toBe(now + 30_000);
    now += 29_999;
    expect(r.view('n1')?.state).toBe('available');
    now += 1;
    expect(r.view('n1')?.state).toBe('unavailable');
  });

  it('sizes the held lease by the cluster: the base lease for a few nodes, up to the longest held lease', () => {
    const { r, c } = setup(25); // the default rate
    c.open('p:1');
    expect(r.register({ ...input, peer: 'p:1' }).leaseSeconds).toBe(30);
    for (let i = 2; i <= 5000; i++) r.register({ ...input, nodeId: `n${i}` });
    expect(r.heldLeaseSeconds).toBe(600);
    expect(r.leaseSeconds).toBe(100);
  });

  it('a renewal over another open connection moves the binding; over an unknown one it ends it', () => {
    const { r, c } = setup();
    c.open('p:1');
    c.open('p:2');
    const reg = r.register({ ...input, peer: 'p:1' });
    listed(r, reg.registrationId);
    expect(r.renew('n1', reg.registrationId, undefined, 'p:2')).toBe(r.heldLeaseSeconds);
    expect([c.listeners('p:1'), c.listeners('p:2')]).toEqual([0, 1]);
    c.close('p:1'); // the old connection no longer matters
    expect(r.view('n1')?.leaseExpiresAt?.getTime()).toBe(now + r.heldLeaseSeconds * 1000);
    expect(r.renew('n1', reg.registrationId, undefined, 'p:3')).toBe(r.leaseSeconds); // not tracked
    expect(r.held).toBe(0);
    expect(c.listeners('p:2')).toBe(0);
    c.close('p:2');
    expect(r.view('n1')?.leaseExpiresAt?.getTime()).toBe(now + r.leaseSeconds * 1000);
  });

  it('a close never lengthens a lease, and a renewal on the same connection keeps one binding', () => {
    const { r, c } = setup();
    c.open('p:1');
    const reg = r.register({ ...input, peer: 'p:1' });
    for (let i = 0; i < 3; i++) r.renew('n1', reg.registrationId, undefined, 'p:1');
    expect(c.listeners('p:1')).toBe(1);
    const cut = r.view('n1')?.leaseExpiresAt?.getTime() ?? 0;
    now += r.heldLeaseSeconds * 1000 - 5_000; // 5 s left: less than the base lease
    c.close('p:1');
    expect(r.view('n1')?.leaseExpiresAt?.getTime()).toBe(cut);
  });

  it('unregistering, revoking or an expiry releases the binding', () => {
    const { r, c } = setup();
    c.open('p:1');
    const reg = r.register({ ...input, peer: 'p:1' });
    r.unregister('n1', reg.registrationId);
    expect([r.held, c.listeners('p:1')]).toEqual([0, 0]);
    const again = r.register({ ...input, peer: 'p:1' });
    expect(r.revoke('n1', again.registrationId, 'listing failed')).toBe(true);
    expect([r.held, c.listeners('p:1')]).toEqual([0, 0]);
    const third = r.register({ ...input, peer: 'p:1' });
    now += r.heldLeaseSeconds * 1000;
    expect(() => r.renew('n1', third.registrationId, undefined, 'p:1')).toThrow(/unknown registration/);
    expect([r.held, c.listeners('p:1')]).toEqual([0, 0]);
  });

  it('without a connection watch nothing is held', () => {
    const r = new NodeRegistry({ leaseSeconds: 30, now: () => now });
    expect(r.register({ ...input, peer: 'p:1' })).toMatchObject({ held: false, leaseSeconds: 30 });
    expect(r.held).toBe(0);
  });
});
