import {
  formatTimestamp,
  getCondition,
  isConditionTrue,
  isValidConditionReason,
  upsertCondition,
} from './conditions.js';
import type { DeploymentCondition } from './generated/pmemcsideployment.js';

const T0 = new Date('2026-01-02T03:04:05.678Z');
const T1 = new Date('2026-01-02T04:00:00.000Z');

describe('upsertCondition', () => {
  it('adds a condition with observedGeneration and an RFC 3339 lastTransitionTime', () => {
    const result = upsertCondition(
      undefined,
      { type: 'CertsReady', status: 'True', reason: 'SecretsCreated', message: 'ok' },
      { generation: 1, now: T0 },
    );
    expect(result).toEqual([
      {
        type: 'CertsReady',
        status: 'True',
        observedGeneration: 1,
        lastTransitionTime: '2026-01-02T03:04:05Z',
        reason: 'SecretsCreated',
        message: 'ok',
      },
    ]);
  });

  it('keeps lastTransitionTime when status is unchanged, but records reason, message and generation', () => {
    const first = upsertCondition(
      [],
      { type: 'DriverDeployed', status: 'False', reason: 'PodsNotReady', message: '0 out of 3 driver pods are ready' },
      { generation: 1, now: T0 },
    );
    const second = upsertCondition(
      first,
      { type: 'DriverDeployed', status: 'False', reason: 'PodsNotReady', message: '2 out of 3 driver pods are ready' },
      { generation: 2, now: T1 },
    );
    expect(second).toEqual([
      {
        type: 'DriverDeployed',
        status: 'False',
        observedGeneration: 2,
        lastTransitionTime: '2026-01-02T03:04:05Z',
        reason: 'PodsNotReady',
        message: '2 out of 3 driver pods are ready',
      },
    ]);
  });

  it('moves lastTransitionTime when status changes', () => {
    const first = upsertCondition(
      [],
      { type: 'DriverDeployed', status: 'False', reason: 'PodsNotReady', message: '' },
      { generation: 3, now: T0 },
    );
    const second = upsertCondition(
      first,
      { type: 'DriverDeployed', status: 'True', reason: 'AllPodsReady', message: '' },
      { generation: 3, now: T1 },
    );
    expect(second[0]?.lastTransitionTime).toBe('2026-01-02T04:00:00Z');
    expect(second[0]?.status).toBe('True');
    const third = upsertCondition(
      second,
      { type: 'DriverDeployed', status: 'Unknown', reason: 'WorkloadMissing', message: '' },
      { generation: 4, now: T0 },
    );
    expect(third[0]).toMatchObject({
      status: 'Unknown',
      lastTransitionTime: '2026-01-02T03:04:05Z',
      observedGeneration: 4,
    });
  });

  it('replaces by type in place, appends new types, and never mutates its input', () => {
    const input: readonly DeploymentCondition[] = Object.freeze([
      Object.freeze<DeploymentCondition>({
        type: 'CertsVerified',
        status: 'True',
        lastTransitionTime: 'x',
        reason: 'A',
        message: '',
      }),
      Object.freeze<DeploymentCondition>({
        type: 'CertsReady',
        status: 'False',
        lastTransitionTime: 'y',
        reason: 'B',
        message: '',
      }),
    ]);
    const snapshot = structuredClone(input);
    const replaced = upsertCondition(
      input,
      { type: 'CertsVerified', status: 'False', reason: 'Expired', message: 'expired' },
      { generation: 5, now: T1 },
    );
    expect(replaced.map((c) => [c.type, c.status])).toEqual([
      ['CertsVerified', 'False'],
      ['CertsReady', 'False'],
    ]);
    const appended = upsertCondition(
      input,
      { type: 'DriverDeployed', status: 'True', reason: 'AllPodsReady', message: '' },
      { generation: 5, now: T1 },
    );
    expect(appended.map((c) => c.type)).toEqual(['CertsVerified', 'CertsReady', 'DriverDeployed']);
    expect(input).toEqual(snapshot);
    expect(replaced).not.toBe(input);
    expect(replaced[1]).not.toBe(input[1]);
  });

  it.each(['', 'not camel', 'lowerCase', 'With-Dash', 'With_Underscore', `A${'b'.repeat(1024)}`])(
    'rejects reason %j',
    (reason) => {
      expect(() =>
        upsertCondition([], { type: 'CertsReady', status: 'True', reason, message: '' }, { generation: 1, now: T0 }),
      ).toThrow(
        new RangeError(
          `condition CertsReady: reason ${JSON.stringify(reason)} must be CamelCase (^[A-Z][A-Za-z0-9]*$, at most 1024 characters)`,
        ),
      );
    },
  );

  it('truncates a message longer than the CRD allows', () => {
    const [c] = upsertCondition(
      [],
      { type: 'CertsVerified', status: 'False', reason: 'HandshakeFailed', message: 'x'.repeat(40000) },
      { generation: 1, now: T0 },
    );
    expect(c?.message).toHaveLength(32768);
    expect(c?.message.endsWith('x…')).toBe(true);
  });
});

describe('getCondition / isConditionTrue', () => {
  const conditions: DeploymentCondition[] = [
    { type: 'CertsReady', status: 'True', lastTransitionTime: 't', reason: 'R', message: '' },
    { type: 'DriverDeployed', status: 'False', lastTransitionTime: 't', reason: 'R', message: '' },
  ];
  it('finds conditions by type', () => {
    expect(getCondition(conditions, 'CertsReady')).toBe(conditions[0]);
    expect(getCondition(conditions, 'CertsVerified')).toBeUndefined();
    expect(getCondition(undefined, 'CertsVerified')).toBeUndefined();
  });
  it('is true only for status True', () => {
    expect(isConditionTrue(conditions, 'CertsReady')).toBe(true);
    expect(isConditionTrue(conditions, 'DriverDeployed')).toBe(false);
    expect(isConditionTrue(conditions, 'CertsVerified')).toBe(false);
    expect(isConditionTrue(undefined, 'CertsReady')).toBe(false);
  });
});

describe('formatTimestamp / isValidConditionReason', () => {
  it('writes whole seconds in UTC', () => {
    expect(formatTimestamp(new Date('2026-05-06T07:08:09.999Z'))).toBe('2026-05-06T07:08:09Z');
  });
  it('accepts CamelCase reasons with digits', () => {
    expect(isValidConditionReason('Tls13HandshakeOK')).toBe(true);
  });
});
