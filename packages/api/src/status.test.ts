import type { PmemCSIDeploymentStatus } from './generated/pmemcsideployment.js';
import { statusEqual } from './status.js';

const base: PmemCSIDeploymentStatus = {
  phase: 'Running',
  reason: 'All driver pods are ready',
  observedGeneration: 2,
  lastUpdated: '2026-01-01T00:00:00Z',
  conditions: [
    {
      type: 'CertsReady',
      status: 'True',
      observedGeneration: 2,
      lastTransitionTime: '2026-01-01T00:00:00Z',
      reason: 'SecretsCreated',
      message: '',
    },
    {
      type: 'DriverDeployed',
      status: 'True',
      observedGeneration: 2,
      lastTransitionTime: '2026-01-01T00:00:00Z',
      reason: 'AllPodsReady',
      message: '',
    },
  ],
  driverComponents: [
    {
      component: 'Controller',
      status: 'Ready',
      reason: '1 out of 1 driver pods are ready',
      desired: 1,
      ready: 1,
      lastUpdated: '2026-01-01T00:00:00Z',
    },
    {
      component: 'Node',
      status: 'Ready',
      reason: '3 out of 3 driver pods are ready',
      desired: 3,
      ready: 3,
      lastUpdated: '2026-01-01T00:00:00Z',
    },
  ],
};

describe('statusEqual', () => {
  it('ignores lastUpdated, lastTransitionTime, list order and key order', () => {
    const later: PmemCSIDeploymentStatus = {
      driverComponents: [...(base.driverComponents ?? [])]
        .reverse()
        .map((c) => ({ ...c, lastUpdated: '2026-02-02T00:00:00Z' })),
      conditions: [...(base.conditions ?? [])]
        .reverse()
        .map((c) => ({ ...c, lastTransitionTime: '2026-02-02T00:00:00Z' })),
      lastUpdated: '2026-02-02T00:00:00Z',
      observedGeneration: 2,
      reason: base.reason,
      phase: 'Running',
    };
    expect(statusEqual(base, later)).toBe(true);
  });

  it('treats missing, undefined and empty the same', () => {
    expect(statusEqual(undefined, {})).toBe(true);
    expect(statusEqual({}, { conditions: [], driverComponents: [], reason: undefined })).toBe(true);
  });

  it.each<[string, PmemCSIDeploymentStatus]>([
    ['phase', { ...base, phase: 'Failed' }],
    ['reason', { ...base, reason: 'other' }],
    ['observedGeneration', { ...base, observedGeneration: 3 }],
    [
      'a condition status',
      { ...base, conditions: [{ ...base.conditions![0]!, status: 'False' }, base.conditions![1]!] },
    ],
    [
      'a condition message',
      { ...base, conditions: [{ ...base.conditions![0]!, message: 'new' }, base.conditions![1]!] },
    ],
    [
      'a condition generation',
      { ...base, conditions: [{ ...base.conditions![0]!, observedGeneration: 3 }, base.conditions![1]!] },
    ],
    ['a missing condition', { ...base, conditions: [base.conditions![0]!] }],
    [
      'a driver component count',
      { ...base, driverComponents: [base.driverComponents![0]!, { ...base.driverComponents![1]!, ready: 2 }] },
    ],
  ])('sees a change of %s', (_what, changed) => {
    expect(statusEqual(base, changed)).toBe(false);
  });
});
