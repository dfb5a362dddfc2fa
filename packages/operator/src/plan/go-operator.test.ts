import { API_GROUP_VERSION, KIND } from '@pmem-csi/api';
import type { KubeObject } from '../kube/kube-port.js';
import { testDeployment } from '../testing/fixtures.js';
import { describeGoTakeover, goOnlyRefs, madeByGoOperator } from './go-operator.js';

const cr = testDeployment({}, 'pmem-csi.intel.com');
const object = (labels: Record<string, string>, uid = cr.metadata.uid, controller = true): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: {
    name: 'pmem-csi-intel-com-controller',
    labels,
    ownerReferences: [{ apiVersion: API_GROUP_VERSION, kind: KIND, name: cr.metadata.name, uid, controller }],
  },
});

describe("the Go operator's objects", () => {
  it('names its Go-only objects with its prefix, the webhook registration first', () => {
    const refs = goOnlyRefs('pmem-csi.intel.com', 'pmem-csi').map((r) => `${r.kind} ${r.namespace ?? ''}/${r.name}`);
    expect(refs).toEqual([
      'MutatingWebhookConfiguration /pmem-csi-intel-com-hook',
      'StatefulSet pmem-csi/pmem-csi-intel-com-controller',
      'DaemonSet pmem-csi/pmem-csi-intel-com-node-setup',
      'Service pmem-csi/pmem-csi-intel-com-scheduler',
      'ClusterRoleBinding /pmem-csi-intel-com-webhooks-role',
      'ClusterRole /pmem-csi-intel-com-webhooks-runner',
      'RoleBinding pmem-csi/pmem-csi-intel-com-webhooks-role-cfg',
      'Role pmem-csi/pmem-csi-intel-com-webhooks-cfg',
      'ServiceAccount pmem-csi/pmem-csi-intel-com-webhooks',
      'ClusterRoleBinding /pmem-csi-intel-com-node-setup-role',
      'ClusterRole /pmem-csi-intel-com-node-setup-runner',
      'ServiceAccount pmem-csi/pmem-csi-intel-com-node-setup',
    ]);
  });

  it('are those controlled by this CR (same uid) without our managed-by label', () => {
    const goLabels = {
      'app.kubernetes.io/name': 'pmem-csi-controller',
      'app.kubernetes.io/instance': cr.metadata.name,
    };
    expect(madeByGoOperator(object(goLabels), cr)).toBe(true);
    expect(madeByGoOperator(object({}), cr)).toBe(true);
    expect(madeByGoOperator(object({ 'app.kubernetes.io/managed-by': 'pmem-csi-operator' }), cr)).toBe(false);
    expect(madeByGoOperator(object(goLabels, 'another-uid'), cr)).toBe(false);
    expect(madeByGoOperator(object(goLabels, cr.metadata.uid, false), cr)).toBe(false);
    expect(madeByGoOperator({ ...object(goLabels), metadata: { name: 'x' } }, cr)).toBe(false);
  });

  it('describes a takeover by what happened to each object', () => {
    expect(
      describeGoTakeover({ adopted: ['CSIDriver pmem-csi.intel.com'], replaced: [], removed: ['Service pmem-csi/s'] }),
    ).toBe(
      'took over the objects the Go operator (PMEM-CSI v1.x) made for this deployment: adopted in place 1 (CSIDriver pmem-csi.intel.com); ' +
        'removed (Go driver only: scheduler extender, pod webhook, raw namespace conversion) 1 (Service pmem-csi/s)',
    );
  });
});
