import {
  DEFAULT_LEASE_SECONDS,
  DEFAULT_MAX_LEASE_FACTOR,
  DEFAULT_RENEWALS_PER_SECOND,
  heldLeaseSecondsFor,
  leasePolicy,
  leaseSecondsFor,
  settleMsFor,
} from './lease-policy.js';

describe('lease policy', () => {
  const o = { ...leasePolicy(), leaseSeconds: 30, maxLeaseSeconds: 120, renewalsPerSecond: 200 };

  it('keeps renewals at the configured rate between the base and the longest lease', () => {
    expect([1, 2000, 2001, 5000, 8000, 100_000].map((n) => leaseSecondsFor(n, o))).toEqual([30, 30, 31, 75, 120, 120]);
    expect(leaseSecondsFor(5000, { ...o, maxLeaseSeconds: 30 })).toBe(30);
  });

  it('defaults to a 30 s lease, at most 4 × that, sized for 150 renewals per second', () => {
    expect([DEFAULT_LEASE_SECONDS, DEFAULT_MAX_LEASE_FACTOR, DEFAULT_RENEWALS_PER_SECOND]).toEqual([30, 4, 150]);
    const held = { heldRenewalsPerSecond: 25 };
    expect(leasePolicy()).toEqual({
      leaseSeconds: 30,
      maxLeaseSeconds: 120,
      renewalsPerSecond: 150,
      ...held,
      maxHeldLeaseSeconds: 600,
    });
    expect(leasePolicy({ leaseSeconds: 2 })).toEqual({
      leaseSeconds: 2,
      maxLeaseSeconds: 8,
      renewalsPerSecond: 150,
      ...held,
      maxHeldLeaseSeconds: 40,
    });
    expect([1500, 5000, 6000].map((n) => leaseSecondsFor(n, leasePolicy()))).toEqual([30, 100, 120]);
  });

  it('never grants a longest lease below the base lease', () => {
    expect(leasePolicy({ leaseSeconds: 60, maxLeaseSeconds: 10 }).maxLeaseSeconds).toBe(60);
    expect(leasePolicy({ leaseSeconds: 30, maxLeaseSeconds: 30 }).maxLeaseSeconds).toBe(30);
  });

  it('sizes a lease held by a connection for 25 renewals per second, up to 20 × the base lease', () => {
    const p = leasePolicy();
    expect([10, 250, 251, 1000, 5000, 10_000, 100_000].map((n) => heldLeaseSecondsFor(n, p))).toEqual([
      30, 30, 31, 120, 600, 600, 600,
    ]);
    // never shorter than the unheld lease of the same cluster
    for (const n of [1, 1000, 2000, 5000, 6000, 50_000])
      expect(heldLeaseSecondsFor(n, p)).toBeGreaterThanOrEqual(leaseSecondsFor(n, p));
    expect(leasePolicy({ leaseSeconds: 30, maxLeaseSeconds: 200, maxHeldLeaseSeconds: 60 }).maxHeldLeaseSeconds).toBe(
      200,
    );
    // a held rate above the unheld one still never grants less than the unheld lease
    expect(heldLeaseSecondsFor(5000, { ...p, heldRenewalsPerSecond: 1000 })).toBe(leaseSecondsFor(5000, p));
  });

  it('refuses a held renewal rate or longest held lease that is not a positive number, naming it', () => {
    expect(() => leasePolicy({ heldRenewalsPerSecond: 0 })).toThrow(
      'heldRenewalsPerSecond must be a positive number, got 0',
    );
    expect(() => leasePolicy({ maxHeldLeaseSeconds: Number.NaN })).toThrow(
      'maxHeldLeaseSeconds must be a positive number, got NaN',
    );
  });

  it('the settle period covers the renewal interval of the longest lease', () => {
    expect(settleMsFor(30, 30)).toBe(45_000);
    expect(settleMsFor(30, 120)).toBe(75_000);
    expect(settleMsFor(1, 120)).toBe(1500 + (119 * 1000) / 3);
  });
});
