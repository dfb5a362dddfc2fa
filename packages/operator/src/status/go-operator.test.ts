import type { DeploymentCondition } from '@pmem-csi/api';
import { foreignConditions, goOperatorFieldsCondition, withoutForeignConditions } from './go-operator.js';

const ours: DeploymentCondition = {
  type: 'DriverDeployed',
  status: 'True',
  lastTransitionTime: '2026-12-07T06:00:00Z',
  reason: 'AllObjectsApplied',
  message: 'all driver objects are applied',
};

describe("the Go operator's status and spec fields", () => {
  it("finds the conditions in the Go operator's shape (v0.x CertsReady/CertsVerified, v1.x DriverDeployed) and keeps ours", () => {
    // As our CRD's structural schema serves them: lastUpdateTime pruned, no message, a sentence as reason.
    const go = [
      { type: 'CertsVerified', status: 'True', reason: 'Driver certificates validated.' },
      { type: 'CertsReady', status: 'True', reason: 'Driver certificates are available.' },
      { type: 'DriverDeployed', status: 'True', reason: 'Driver deployed successfully.' },
    ] as unknown as DeploymentCondition[];
    expect(foreignConditions({ conditions: [...go, ours] })).toEqual(go);
    expect(withoutForeignConditions({ phase: 'Running', conditions: [...go, ours] })).toEqual({
      phase: 'Running',
      conditions: [ours],
    });
    const status = { conditions: [ours] };
    expect(withoutForeignConditions(status)).toBe(status);
    expect(foreignConditions(undefined)).toEqual([]);
  });

  it('reports refused fields first, names the accepted ones, and turns False once none is left', () => {
    const mixed = goOperatorFieldsCondition({ mutatePods: 'Never', schedulerNodePort: 31000 }, undefined);
    expect(mixed).toMatchObject({ type: 'GoOperatorFields', status: 'True', reason: 'Refused' });
    expect(mixed?.message).toMatch(
      /^refused: spec\.schedulerNodePort: unsupported value 31000; allowed values: 0 or unset .*\. Accepted: spec\.mutatePods: "Never" accepted: no pod webhook, as this driver has none$/,
    );
    expect(goOperatorFieldsCondition({}, undefined)).toBeUndefined();
    expect(goOperatorFieldsCondition({ deviceMode: 'lvm' }, [ours])).toBeUndefined();
    const had: DeploymentCondition = { ...ours, type: 'GoOperatorFields', reason: 'Accepted' };
    expect(goOperatorFieldsCondition({}, [had])).toEqual({
      type: 'GoOperatorFields',
      status: 'False',
      reason: 'NotSet',
      message:
        'the spec carries no field of the Go operator (controllerTLSSecret, mutatePods, schedulerNodePort) any more',
    });
  });
});
