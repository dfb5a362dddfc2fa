import { jest } from '@jest/globals';
import { getCondition } from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import type { OwnerDeployment } from '../objects/context.js';
import { pmemOverlap, selectorOverlap } from './pmem-overlap.js';
import { testDeployment } from '../testing/fixtures.js';
import { CR_NAME, harness } from '../testing/harness.js';

jest.setTimeout(60_000); // the reconciler test generates real certificates

function cr(name: string, created: string, spec: OwnerDeployment['spec'] = {}): OwnerDeployment {
  const base = testDeployment(spec, name);
  return { ...base, metadata: { ...base.metadata, name, uid: `uid-${name}`, creationTimestamp: created } };
}

const EARLY = '2026-03-01T10:00:00Z';
const LATE = '2026-03-01T10:05:00Z';

describe('selectorOverlap', () => {
  it('overlaps unless the selectors require different values for the same key, and answers the labels of a node matching both', () => {
    expect(selectorOverlap({ storage: 'pmem' }, { storage: 'pmem' })).toEqual({ storage: 'pmem' });
    expect(selectorOverlap({ storage: 'pmem' }, { zone: 'a' })).toEqual({ storage: 'pmem', zone: 'a' });
    expect(selectorOverlap({ zone: 'a', storage: 'pmem' }, { storage: 'pmem', rack: '1' })).toEqual({
      rack: '1',
      storage: 'pmem',
      zone: 'a',
    });
    expect(selectorOverlap({}, { storage: 'pmem' })).toEqual({ storage: 'pmem' });
    expect(selectorOverlap({ storage: 'pmem-a' }, { storage: 'pmem-b' })).toBeUndefined();
    expect(selectorOverlap({ storage: 'pmem', zone: 'a' }, { storage: 'pmem', zone: 'b' })).toBeUndefined();
  });
});

describe('pmemOverlap', () => {
  const first = cr('first.example.com', EARLY, { deviceMode: 'lvm' });
  const second = cr('second.example.com', LATE, { deviceMode: 'direct', nodeSelector: { storage: 'pmem', zone: 'a' } });

  it('warns the later deployment, naming the earlier one and a node that both match; the earlier one gets nothing', () => {
    const all = [first, second] as unknown as KubeObject[];
    expect(pmemOverlap(second, all)).toEqual({
      type: 'PmemOverlap',
      status: 'True',
      reason: 'OverlappingNodeSelector',
      message:
        'node selector overlaps with PmemCSIDeployment "first.example.com" (device mode lvm, created earlier): a node labelled storage=pmem,zone=a would run both node drivers (direct and lvm), and both would manage its PMEM. ' +
        'Both keep running; give the deployments disjoint node selectors (the same key with different values, e.g. storage=pmem-a and storage=pmem-b) and label each node for one of them.',
    });
    expect(pmemOverlap(first, all)).toBeUndefined();
  });

  it('counts further earlier deployments, and orders by creation time, then name', () => {
    const third = cr('third.example.com', '2026-03-01T10:10:00Z');
    const sameSecond = cr('a.example.com', LATE);
    const message = pmemOverlap(third, [third, second, first, sameSecond] as unknown as KubeObject[])?.message ?? '';
    expect(message).toMatch(
      /^node selector overlaps with PmemCSIDeployment "first\.example\.com" \(device mode lvm, created earlier\) \(and 2 more earlier deployments overlap\): /,
    );
    // Same second: first by name.
    expect(pmemOverlap(second, [second, sameSecond] as unknown as KubeObject[])?.message).toMatch(
      /^node selector overlaps with PmemCSIDeployment "a\.example\.com"/,
    );
    expect(pmemOverlap(sameSecond, [second, sameSecond] as unknown as KubeObject[])).toBeUndefined();
  });

  it('leaves out disjoint selectors, deployments being deleted and ones whose object names collide (those get Conflict)', () => {
    const disjoint = cr('second.example.com', LATE, { nodeSelector: { storage: 'pmem-b' } });
    expect(pmemOverlap(disjoint, [first, disjoint] as unknown as KubeObject[])).toBeUndefined();
    const deleting = { ...first, metadata: { ...first.metadata, deletionTimestamp: EARLY } };
    expect(pmemOverlap(second, [deleting, second] as unknown as KubeObject[])).toBeUndefined();
    const colliding = cr('first-example-com', LATE);
    expect(pmemOverlap(colliding, [first, colliding] as unknown as KubeObject[])).toBeUndefined();
  });

  it('leaves emulated deployments out on both sides: they manage no PMEM, only files in their own state directory', () => {
    const emulatedEarly = cr('first-emulated.example.com', EARLY, { deviceMode: 'emulated' });
    const emulatedLate = cr('second-emulated.example.com', LATE, { deviceMode: 'emulated' });
    const lvmLate = cr('third.example.com', LATE, { deviceMode: 'lvm' });
    // The same default selector everywhere: only the device modes keep these apart.
    expect(pmemOverlap(lvmLate, [first, lvmLate] as unknown as KubeObject[])).toMatchObject({ status: 'True' });
    expect(pmemOverlap(lvmLate, [emulatedEarly, lvmLate] as unknown as KubeObject[])).toBeUndefined();
    expect(pmemOverlap(emulatedLate, [first, emulatedLate] as unknown as KubeObject[])).toBeUndefined();
    expect(pmemOverlap(emulatedLate, [emulatedEarly, emulatedLate] as unknown as KubeObject[])).toBeUndefined();
    // Switched to emulated after an overlap was reported: the warning ends.
    const switched = {
      ...emulatedLate,
      status: {
        conditions: [
          {
            type: 'PmemOverlap' as const,
            status: 'True' as const,
            reason: 'OverlappingNodeSelector',
            message: 'm',
            lastTransitionTime: EARLY,
          },
        ],
      },
    };
    expect(pmemOverlap(switched, [first, switched] as unknown as KubeObject[])).toMatchObject({
      status: 'False',
      reason: 'NoOverlap',
    });
  });

  it('turns False (NoOverlap) once seen and gone', () => {
    const before = {
      ...second,
      status: {
        conditions: [
          {
            type: 'PmemOverlap' as const,
            status: 'True' as const,
            reason: 'OverlappingNodeSelector',
            message: 'm',
            lastTransitionTime: EARLY,
          },
        ],
      },
    };
    expect(pmemOverlap(before, [before] as unknown as KubeObject[])).toEqual({
      type: 'PmemOverlap',
      status: 'False',
      reason: 'NoOverlap',
      message: 'no earlier PmemCSIDeployment in a PMEM-managing device mode can run on the nodes of this one',
    });
  });
});

describe('Reconciler with overlapping deployments', () => {
  it('warns the later one with a condition and one Warning event, deploys both, and clears the warning after a disjoint selector', async () => {
    const h = harness();
    const later = 'pmem-b.example.com';
    h.putCr({}, CR_NAME, { creationTimestamp: EARLY });
    h.putCr({ deviceMode: 'direct' }, later, { creationTimestamp: LATE });
    const crs = (): KubeObject[] => [...h.kube.objects.values()].filter((o) => o.kind === 'PmemCSIDeployment');
    const r = h.reconciler({ deployments: crs });
    await r.reconcile(CR_NAME);
    await r.reconcile(later);
    await r.reconcile(later);
    expect(getCondition(h.cr(CR_NAME).status?.conditions, 'PmemOverlap')).toBeUndefined();
    expect(getCondition(h.cr(later).status?.conditions, 'PmemOverlap')).toMatchObject({
      status: 'True',
      reason: 'OverlappingNodeSelector',
    });
    expect(getCondition(h.cr(later).status?.conditions, 'PmemOverlap')?.message).toMatch(
      /^node selector overlaps with PmemCSIDeployment "pmem-csi\.intel\.com" \(device mode lvm, created earlier\): a node labelled storage=pmem would run both node drivers \(direct and lvm\)/,
    );
    // A warning: both drivers are deployed.
    expect(getCondition(h.cr(later).status?.conditions, 'DriverDeployed')).toMatchObject({ status: 'True' });
    expect(h.cr(later).status?.phase).not.toBe('Failed');
    expect(h.kube.objects.has(`apps/v1/DaemonSet|pmem-csi|pmem-b-example-com-node`)).toBe(true);
    expect(h.events.filter((e) => e.reason === 'PmemOverlap').map((e) => [e.deployment, e.type])).toEqual([
      [later, 'Warning'],
    ]);

    h.putCr({ deviceMode: 'direct', nodeSelector: { storage: 'pmem-b' } }, later);
    await r.reconcile(later);
    expect(getCondition(h.cr(later).status?.conditions, 'PmemOverlap')).toMatchObject({
      status: 'False',
      reason: 'NoOverlap',
    });
    expect(h.events.filter((e) => e.reason === 'PmemOverlap')).toHaveLength(1);
  });
});
