// external-resizer in the controller pods (issue 25): its container on the driver's socket, its
// flags (leader election and client limits exactly the provisioner's, no pod informer), the
// Kubernetes token projected into the two sidecars only, and its RBAC objects.
import type { V1ClusterRoleBinding, V1Container, V1Deployment, V1RoleBinding } from '@kubernetes/client-node';
import { CONTAINER_NAMES, DEFAULT_RESIZER_IMAGE } from '@pmem-csi/api';
import { TEST_NAMESPACE, testContext, testDeployment } from '../testing/fixtures.js';
import { buildControllerDeployment, provisionerArgs, resizerArgs } from './controller.js';
import { LEADER_ELECTION, PROVISIONER_CLIENT_LIMITS } from './controller-ha.js';
import {
  RESIZER_CLUSTER_RULES,
  RESIZER_NAMESPACE_RULES,
  buildResizerClusterRole,
  buildResizerClusterRoleBinding,
  buildResizerRole,
  buildResizerRoleBinding,
} from './rbac.js';
import { BUILDERS } from './registry.js';

const CR_NAME = 'pmem-csi.intel.com';

function containers(spec = {}): V1Container[] {
  const cr = testDeployment(spec, CR_NAME);
  return (buildControllerDeployment(cr, testContext(cr)) as V1Deployment).spec?.template.spec?.containers ?? [];
}

const resizer = (spec = {}): V1Container | undefined => containers(spec).find((c) => c.name === 'external-resizer');

describe('external-resizer container', () => {
  it('is the third container of the controller pod, after the driver and external-provisioner', () => {
    expect(containers().map((c) => c.name)).toEqual([
      CONTAINER_NAMES.driver,
      CONTAINER_NAMES.provisioner,
      CONTAINER_NAMES.resizer,
    ]);
    expect(CONTAINER_NAMES.resizer).toBe('external-resizer');
  });

  it("runs the default image and requests, or the spec's", () => {
    expect(resizer()).toMatchObject({
      image: DEFAULT_RESIZER_IMAGE,
      imagePullPolicy: 'IfNotPresent',
      resources: { requests: { cpu: '12m', memory: '128Mi' } },
    });
    expect(DEFAULT_RESIZER_IMAGE).toBe('registry.k8s.io/sig-storage/csi-resizer:v2.3.0');
    const pinned = resizer({
      resizerImage: 'example.org/csi-resizer:v1',
      resizerResources: { limits: { memory: '1Gi' } },
      imagePullPolicy: 'Always',
    });
    expect(pinned).toMatchObject({ image: 'example.org/csi-resizer:v1', imagePullPolicy: 'Always' });
    expect(pinned?.resources).toEqual({ limits: { memory: '1Gi' } });
  });

  it('talks to the driver on its socket and has the flags of the design, each once', () => {
    const cr = testDeployment({ logLevel: 5 }, CR_NAME);
    const args = resizerArgs(testContext(cr));
    expect(args).toEqual([
      '--csi-address=/csi/csi.sock',
      '--v=5',
      '--timeout=5m',
      '--leader-election=true',
      `--leader-election-namespace=${TEST_NAMESPACE}`,
      `--leader-election-lease-duration=${LEADER_ELECTION.leaseDuration}`,
      `--leader-election-renew-deadline=${LEADER_ELECTION.renewDeadline}`,
      `--leader-election-retry-period=${LEADER_ELECTION.retryPeriod}`,
      '--handle-volume-inuse-error=false',
      '--retry-interval-max=30s',
      `--kube-api-qps=${PROVISIONER_CLIENT_LIMITS.qps}`,
      `--kube-api-burst=${PROVISIONER_CLIENT_LIMITS.burst}`,
    ]);
    const names = args.map((a) => a.slice(0, a.indexOf('=')));
    expect(new Set(names).size).toBe(names.length);
    expect(resizer()?.args).toEqual(resizerArgs(testContext(testDeployment({}, CR_NAME))));
  });

  it('elects its leader and limits its client exactly as the provisioner does', () => {
    const ctx = testContext(testDeployment({}, CR_NAME));
    const shared = (args: string[]): string[] =>
      args.filter((a) => a.startsWith('--leader-election') || a.startsWith('--kube-api-'));
    expect(shared(resizerArgs(ctx))).toEqual(shared(provisionerArgs(ctx)));
    expect(shared(resizerArgs(ctx))).toHaveLength(7);
  });

  it("serves no HTTP endpoint: the driver's metrics count every CSI call the sidecars make", () => {
    for (const c of [resizer(), containers().find((x) => x.name === CONTAINER_NAMES.provisioner)]) {
      expect(c?.args?.filter((a) => /^--(http-endpoint|metrics-address)=/.test(a))).toEqual([]);
      expect(c?.ports).toBeUndefined();
    }
  });

  it('shares the socket with the driver and gets the projected token, which the driver does not', () => {
    const cr = testDeployment({}, CR_NAME);
    const pod = (buildControllerDeployment(cr, testContext(cr)) as V1Deployment).spec?.template.spec;
    expect(pod?.automountServiceAccountToken).toBe(false);
    const mounts = (c: V1Container | undefined): string[] => (c?.volumeMounts ?? []).map((m) => m.name);
    expect(pod?.containers.map((c) => [c.name, mounts(c)])).toEqual([
      [CONTAINER_NAMES.driver, ['socket-dir', 'certs']],
      [CONTAINER_NAMES.provisioner, ['socket-dir', 'kube-api-access']],
      [CONTAINER_NAMES.resizer, ['socket-dir', 'kube-api-access']],
    ]);
    expect(resizer()?.volumeMounts?.find((m) => m.name === 'kube-api-access')).toEqual({
      name: 'kube-api-access',
      mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
      readOnly: true,
    });
    expect(resizer()?.env).toBeUndefined();
    expect(resizer()?.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
  });
});

describe('external-resizer RBAC', () => {
  const cr = testDeployment({}, CR_NAME);
  const ctx = testContext(cr);
  const subject = { kind: 'ServiceAccount', name: 'pmem-csi-intel-com-controller', namespace: TEST_NAMESPACE };

  it('grants in the cluster exactly what the resizer does with PVs, PVCs and events, and no pods', () => {
    expect(buildResizerClusterRole(cr, ctx)).toMatchObject({
      kind: 'ClusterRole',
      metadata: { name: 'pmem-csi-intel-com-external-resizer-runner' },
      rules: [
        { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'list', 'watch', 'patch'] },
        { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['persistentvolumeclaims/status'], verbs: ['patch'] },
        { apiGroups: [''], resources: ['events'], verbs: ['create', 'update', 'patch'] },
      ],
    });
    const resources = RESIZER_CLUSTER_RULES.flatMap((r) => r.resources ?? []);
    for (const absent of ['pods', 'secrets', 'volumeattributesclasses']) expect(resources).not.toContain(absent);
  });

  it('grants its leader-election Leases in the driver namespace only', () => {
    expect(buildResizerRole(cr, ctx)).toMatchObject({
      kind: 'Role',
      metadata: { name: 'pmem-csi-intel-com-external-resizer-cfg', namespace: TEST_NAMESPACE },
      rules: [
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'],
        },
      ],
    });
    expect(RESIZER_NAMESPACE_RULES).toHaveLength(1);
  });

  it("binds both to the controller's ServiceAccount", () => {
    const crb = buildResizerClusterRoleBinding(cr, ctx) as V1ClusterRoleBinding;
    expect(crb.metadata?.name).toBe('pmem-csi-intel-com-csi-resizer-role');
    expect(crb.subjects).toEqual([subject]);
    expect(crb.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'pmem-csi-intel-com-external-resizer-runner',
    });
    const rb = buildResizerRoleBinding(cr, ctx) as V1RoleBinding;
    expect(rb.metadata).toMatchObject({ name: 'pmem-csi-intel-com-csi-resizer-role-cfg', namespace: TEST_NAMESPACE });
    expect(rb.subjects).toEqual([subject]);
    expect(rb.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'pmem-csi-intel-com-external-resizer-cfg',
    });
  });

  it("is registered with the builders, after the provisioner's RBAC and before the workloads", () => {
    const ids = BUILDERS.map((b) => b.id);
    const resizerIds = ['resizer-cluster-role', 'resizer-cluster-role-binding', 'resizer-role', 'resizer-role-binding'];
    for (const id of resizerIds) {
      expect(ids.indexOf(id)).toBeGreaterThan(ids.indexOf('provisioner-role-binding'));
      expect(ids.indexOf(id)).toBeLessThan(ids.indexOf('controller-deployment'));
    }
  });
});
