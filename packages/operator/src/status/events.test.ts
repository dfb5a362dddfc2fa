import { nullLogger } from '@pmem-csi/runtime';
import { eventObject, kubeEventRecorder } from './events.js';
import { KubeApiError } from '../kube/kube-errors.js';
import { FakeKube } from '../testing/fake-kube.js';
import { testDeployment } from '../testing/fixtures.js';
import { ManualClock } from '../testing/manual-clock.js';

describe('events', () => {
  it('builds a core/v1 Event about the cluster-scoped CR in the default namespace', () => {
    const cr = testDeployment();
    const now = new Date('2026-03-04T05:06:07Z');
    const e = eventObject(cr, { type: 'Warning', reason: 'Failed', message: 'boom' }, { now, instance: 'replica-1' });
    expect(e).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace: 'default' },
      involvedObject: {
        apiVersion: 'pmem-csi.intel.com/v1beta1',
        kind: 'PmemCSIDeployment',
        name: cr.metadata.name,
        uid: cr.metadata.uid,
      },
      type: 'Warning',
      reason: 'Failed',
      message: 'boom',
      source: { component: 'pmem-csi-operator' },
      reportingComponent: 'pmem-csi-operator',
      reportingInstance: 'replica-1',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
    expect(e.metadata?.name).toMatch(/^pmem-csi\.intel\.com\.[0-9a-f]+$/);
  });

  it('never fails a reconcile when the event cannot be written', async () => {
    const kube = new FakeKube();
    kube.failOn('createEvent', new KubeApiError(403, 'forbidden'));
    const recorder = kubeEventRecorder(kube, { clock: new ManualClock(), log: nullLogger, instance: 'r' });
    await expect(
      recorder.record(testDeployment(), { type: 'Normal', reason: 'Running', message: 'ok' }),
    ).resolves.toBeUndefined();
    await recorder.record(testDeployment(), { type: 'Normal', reason: 'Running', message: 'ok' });
    expect(kube.events).toHaveLength(1);
  });
});
