import { objectLabels } from '@pmem-csi/api';
import type { KubeObject, LooseObject } from '../kube/kube-port.js';
import { OPERATOR_VERSION_ANNOTATION } from '@pmem-csi/api';
import { ownerReference } from '../objects/meta.js';
import { buildDesiredObjects } from '../objects/registry.js';
import { describePlan, isOwnedBy, ownedSelector, planObjects } from './object-plan.js';
import { TEST_NAMESPACE, testContext, testDeployment } from '../testing/fixtures.js';

const cr = testDeployment();
const built = (version: string, image = 'example.org/driver:v1'): ReturnType<typeof buildDesiredObjects> =>
  buildDesiredObjects(cr, testContext(cr, { operatorVersion: version, spec: { ...testContext(cr).spec, image } }));

/** What the apiserver holds after applying `objects`: plus server metadata and status. */
function stored(objects: readonly KubeObject[]): LooseObject[] {
  return objects.map(
    (o, i) =>
      ({
        ...structuredClone(o),
        metadata: { ...structuredClone(o.metadata), uid: `u${i}`, resourceVersion: `${i + 10}`, generation: 1 },
        status: { observedGeneration: 1 },
      }) as LooseObject,
  );
}

function owned(kind: string, apiVersion: string, name: string, namespaced = true): KubeObject {
  return {
    apiVersion,
    kind,
    metadata: {
      name,
      ...(namespaced ? { namespace: TEST_NAMESPACE } : {}),
      labels: objectLabels(cr.metadata.name, undefined),
      ownerReferences: [ownerReference(cr)],
    },
  };
}

describe('planObjects', () => {
  it('applies nothing when the live objects already are as desired (server fields ignored)', () => {
    const a = built('A');
    const plan = planObjects(a, stored(a.map((d) => d.object)), cr);
    expect(plan.apply).toEqual([]);
    expect(plan.delete).toEqual([]);
    expect(plan.unchanged).toHaveLength(a.length);
  });

  it('applies everything that is missing, in builder order', () => {
    const a = built('A');
    const plan = planObjects(a, [], cr);
    expect(plan.apply.map((s) => [s.object.kind, s.why])).toEqual(a.map((d) => [d.object.kind, 'missing']));
  });

  it('upgrade A -> B: every object of version A is applied as version B, obsolete kinds are deleted', () => {
    const liveA = [
      ...stored(built('A', 'example.org/driver:A').map((d) => d.object)),
      owned('StatefulSet', 'apps/v1', 'pmem-csi-intel-com-controller'),
      owned('ClusterRole', 'rbac.authorization.k8s.io/v1', 'pmem-csi-intel-com-driver-runner', false),
      owned('MutatingWebhookConfiguration', 'admissionregistration.k8s.io/v1', 'pmem-csi-intel-com-hook', false),
    ];
    const b = built('B', 'example.org/driver:B');
    const plan = planObjects(b, liveA, cr);
    expect(plan.apply.map((s) => s.why)).toEqual(b.map(() => 'changed'));
    expect(plan.apply.every((s) => s.object.metadata.annotations?.[OPERATOR_VERSION_ANNOTATION] === 'B')).toBe(true);
    expect(plan.delete).toEqual([
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        name: 'pmem-csi-intel-com-hook',
      },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'pmem-csi-intel-com-driver-runner' },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'pmem-csi-intel-com-controller', namespace: TEST_NAMESPACE },
    ]);
    expect(describePlan(plan).at(-1)).toBe(`delete StatefulSet ${TEST_NAMESPACE}/pmem-csi-intel-com-controller`);
  });

  it('never deletes volumes, unknown kinds, or objects owned by another CR or not labelled as ours', () => {
    const a = built('A');
    const otherOwner = {
      ...owned('ServiceAccount', 'v1', 'x'),
      metadata: {
        ...owned('ServiceAccount', 'v1', 'x').metadata,
        ownerReferences: [{ ...ownerReference(cr), uid: 'another' }],
      },
    };
    const unlabelled = {
      ...owned('ServiceAccount', 'v1', 'y'),
      metadata: { ...owned('ServiceAccount', 'v1', 'y').metadata, labels: {} },
    };
    const live = [
      ...stored(a.map((d) => d.object)),
      owned('PersistentVolume', 'v1', 'pvc-1', false),
      owned('ConfigMap', 'v1', 'not-a-kind-we-ever-created'),
      otherOwner,
      unlabelled,
    ];
    expect(planObjects(a, live, cr).delete).toEqual([]);
  });

  it('recreates objects whose immutable fields differ', () => {
    const a = built('A');
    const live = stored(a.map((d) => d.object)).map((o) => (o.kind === 'Secret' ? { ...o, type: 'Opaque' } : o));
    const plan = planObjects(a, live, cr);
    expect(plan.apply.map((s) => [s.object.metadata.name, s.why, s.recreate])).toEqual([
      ['pmem-csi-intel-com-ca', 'recreate', true],
      ['pmem-csi-intel-com-registry-secrets', 'recreate', true],
      ['pmem-csi-intel-com-node-secrets', 'recreate', true],
    ]);
  });

  it('carries the live object of every step it applies, and the builder merge patch (controller Deployment)', () => {
    const live = stored(built('A').map((d) => d.object)).map((o) =>
      o.kind === 'Deployment'
        ? {
            ...o,
            spec: {
              ...(o['spec'] as object),
              strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
            },
          }
        : o,
    );
    const plan = planObjects(built('B'), live, cr);
    const step = plan.apply.find((s) => s.object.kind === 'Deployment');
    const current = live.find((o) => o.kind === 'Deployment');
    expect(step?.live).toBe(current);
    expect(current === undefined ? undefined : step?.prepatch?.(current, step.object)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'pmem-csi-intel-com-controller',
        namespace: TEST_NAMESPACE,
        resourceVersion: current?.metadata.resourceVersion,
      },
      spec: { strategy: { type: 'Recreate', rollingUpdate: null } },
    });
    expect(plan.apply.filter((s) => s.prepatch !== undefined).map((s) => s.object.kind)).toEqual(['Deployment']);
    expect(planObjects(built('B'), [], cr).apply.every((s) => s.live === undefined)).toBe(true);
  });

  it('selects and recognises owned objects', () => {
    expect(ownedSelector('pmem-csi.intel.com')).toBe(
      'app.kubernetes.io/instance=pmem-csi.intel.com,app.kubernetes.io/managed-by=pmem-csi-operator',
    );
    expect(isOwnedBy(owned('Secret', 'v1', 's'), cr)).toBe(true);
    expect(isOwnedBy(owned('Secret', 'v1', 's'), { ...cr, metadata: { ...cr.metadata, uid: 'recreated-cr' } })).toBe(
      false,
    );
  });
});
