// A PmemCSIDeployment taken over from the Go operator (PMEM-CSI v1.x): its objects as it made them
// (names, its labels and selectors, its owner reference to the CR, -deviceManager in the node
// driver's command), its status conditions, its spec fields in accepted and refused forms. The
// cluster tier does the same against a real apiserver (e2e/src/cluster/go-operator-takeover.test.ts).
import { jest } from '@jest/globals';
import type { V1DaemonSet } from '@kubernetes/client-node';
import {
  API_GROUP_VERSION,
  DEVICE_MODE_ANNOTATION,
  KIND,
  getCondition,
  objectNamePrefix,
  type PmemCSIDeploymentSpec,
} from '@pmem-csi/api';
import type { KubeObject, LooseObject } from '../kube/kube-port.js';
import { RECREATE_WAIT_MS } from './object-writer.js';
import { TEST_NAMESPACE, testDeployment } from '../testing/fixtures.js';
import { CR_NAME, NAMES, harness, type Harness } from '../testing/harness.js';

jest.setTimeout(60_000); // certificates are real (RSA 2048)

const P = objectNamePrefix(CR_NAME);
const UID = testDeployment().metadata.uid;
const owner = (uid = UID): LooseObject['metadata']['ownerReferences'] => [
  { apiVersion: API_GROUP_VERSION, kind: KIND, name: CR_NAME, uid, controller: true, blockOwnerDeletion: true },
];

type Shape = [apiVersion: string, kind: string, name: string, namespaced: boolean, body?: Record<string, unknown>];

/** The Go operator v1.x's objects of CR_NAME (shapes reduced to what the operator reads). */
function goObjects(mode = 'lvm', uid = UID, namespace = TEST_NAMESPACE): LooseObject[] {
  const goLabels = (name: string): Record<string, string> => ({
    'app.kubernetes.io/name': name,
    'app.kubernetes.io/part-of': 'pmem-csi',
    'app.kubernetes.io/instance': CR_NAME,
  });
  const shapes: Shape[] = [
    [
      'apps/v1',
      'DaemonSet',
      `${P}-node`,
      true,
      {
        spec: {
          selector: {
            matchLabels: { 'app.kubernetes.io/name': 'pmem-csi-node', 'app.kubernetes.io/instance': CR_NAME },
          },
          template: {
            metadata: { labels: goLabels('pmem-csi-node') },
            spec: {
              containers: [
                {
                  name: 'pmem-driver',
                  command: ['/usr/local/bin/pmem-csi-driver', `-deviceManager=${mode}`, '-v=3', '-mode=node'],
                },
              ],
            },
          },
        },
      },
    ],
    [
      'apps/v1',
      'StatefulSet',
      `${P}-controller`,
      true,
      {
        spec: { selector: { matchLabels: { 'app.kubernetes.io/name': 'pmem-csi-controller' } } },
      },
    ],
    [
      'apps/v1',
      'DaemonSet',
      `${P}-node-setup`,
      true,
      {
        spec: { selector: { matchLabels: { 'app.kubernetes.io/name': 'pmem-csi-node-setup' } } },
      },
    ],
    ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', `${P}-hook`, false],
    ['v1', 'Service', `${P}-scheduler`, true, { spec: { type: 'ClusterIP', clusterIP: '10.0.0.3' } }],
    ['v1', 'Service', `${P}-controller`, true, { spec: { type: 'ClusterIP', clusterIP: '10.0.0.1' } }],
    ['v1', 'Service', `${P}-metrics`, true, { spec: { type: 'NodePort', clusterIP: '10.0.0.2' } }],
    ['v1', 'ServiceAccount', `${P}-controller`, true],
    ['v1', 'ServiceAccount', `${P}-webhooks`, true],
    ['v1', 'ServiceAccount', `${P}-node-setup`, true],
    ['rbac.authorization.k8s.io/v1', 'Role', `${P}-webhooks-cfg`, true],
    ['rbac.authorization.k8s.io/v1', 'RoleBinding', `${P}-webhooks-role-cfg`, true],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole', `${P}-webhooks-runner`, false],
    ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', `${P}-webhooks-role`, false],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole', `${P}-node-setup-runner`, false],
    ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', `${P}-node-setup-role`, false],
    ['rbac.authorization.k8s.io/v1', 'Role', `${P}-external-provisioner-cfg`, true],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole', `${P}-external-provisioner-runner`, false],
    [
      'rbac.authorization.k8s.io/v1',
      'ClusterRoleBinding',
      `${P}-csi-provisioner-role`,
      false,
      {
        subjects: [{ kind: 'ServiceAccount', name: `${P}-controller`, namespace }],
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: `${P}-external-provisioner-runner`,
        },
      },
    ],
    [
      'storage.k8s.io/v1',
      'CSIDriver',
      CR_NAME,
      false,
      {
        spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
      },
    ],
  ];
  return shapes.map(([apiVersion, kind, name, namespaced, body]) => ({
    apiVersion,
    kind,
    metadata: { name, ...(namespaced ? { namespace } : {}), ownerReferences: owner(uid) },
    ...body,
  }));
}

const GO_ONLY = [
  `MutatingWebhookConfiguration /${P}-hook`,
  `StatefulSet ${TEST_NAMESPACE}/${P}-controller`,
  `DaemonSet ${TEST_NAMESPACE}/${P}-node-setup`,
  `Service ${TEST_NAMESPACE}/${P}-scheduler`,
  `ClusterRoleBinding /${P}-webhooks-role`,
  `ClusterRole /${P}-webhooks-runner`,
  `RoleBinding ${TEST_NAMESPACE}/${P}-webhooks-role-cfg`,
  `Role ${TEST_NAMESPACE}/${P}-webhooks-cfg`,
  `ServiceAccount ${TEST_NAMESPACE}/${P}-webhooks`,
  `ClusterRoleBinding /${P}-node-setup-role`,
  `ClusterRole /${P}-node-setup-runner`,
  `ServiceAccount ${TEST_NAMESPACE}/${P}-node-setup`,
];

/** The Go operator's status of a running deployment (v1.x: only DriverDeployed, reason a sentence). */
const GO_STATUS = {
  observedGeneration: undefined, // the Go operator wrote none
  phase: 'Running',
  reason: 'All driver components are deployed successfully',
  conditions: [{ type: 'DriverDeployed', status: 'True', reason: 'Driver deployed successfully.' }],
  driverComponents: [
    { component: 'Controller', status: 'Ready', reason: '1 instance(s) of controller driver is running successfully' },
    { component: 'Node', status: 'Ready', reason: 'All 3 node driver pod(s) running successfully' },
  ],
};

function goDeployment(spec: PmemCSIDeploymentSpec, mode = 'lvm'): Harness {
  const h = harness();
  h.putCr(spec);
  h.kube.setStatus({ apiVersion: API_GROUP_VERSION, kind: KIND, name: CR_NAME }, GO_STATUS);
  for (const o of goObjects(mode)) h.kube.put(o);
  return h;
}

const present = (h: Harness, what: string): boolean =>
  [...h.kube.objects.values()].some((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}` === what);

describe('a deployment of the Go operator (PMEM-CSI v1.x)', () => {
  it('is taken over: Go-only objects removed (webhook first), ours adopted in place or replaced, and says so', async () => {
    const h = goDeployment({ deviceMode: 'direct', mutatePods: 'Try' }, 'direct');
    const csiDriverUid = h.object('csiDriver', NAMES.csiDriver)?.metadata.uid;
    const saUid = h.object('serviceAccount', NAMES.controllerServiceAccount)?.metadata.uid;
    await h.reconciler().reconcile(CR_NAME);

    const deletes = h.kube.writes.filter((w) => w.startsWith('delete '));
    expect(deletes.slice(0, GO_ONLY.length)).toEqual(GO_ONLY.map((w) => `delete ${w}`));
    for (const what of GO_ONLY) expect({ what, present: present(h, what) }).toEqual({ what, present: false });
    // The node DaemonSet (another selector) in the foreground, then ours; the controller Service made headless.
    expect(deletes.slice(GO_ONLY.length)).toEqual([
      `delete Service ${TEST_NAMESPACE}/${NAMES.registryService}`,
      `delete DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet} (foreground)`,
    ]);
    const ds = h.object<V1DaemonSet & KubeObject>('daemonSet', NAMES.nodeDaemonSet);
    expect(ds?.spec?.selector.matchLabels?.['app.kubernetes.io/name']).toBe('pmem-csi');
    expect(ds?.metadata.annotations?.[DEVICE_MODE_ANNOTATION]).toBe('direct');
    // Changed in place: same uid.
    expect(h.object('csiDriver', NAMES.csiDriver)?.metadata.uid).toBe(csiDriverUid);
    expect(h.object('serviceAccount', NAMES.controllerServiceAccount)?.metadata.uid).toBe(saUid);
    expect(h.object('csiDriver', NAMES.csiDriver)?.metadata.labels?.['app.kubernetes.io/managed-by']).toBe(
      'pmem-csi-operator',
    );

    const status = h.cr().status;
    expect(getCondition(status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'True',
      reason: 'AllObjectsApplied',
    });
    expect(getCondition(status?.conditions, 'GoOperatorFields')).toMatchObject({
      status: 'True',
      reason: 'Accepted',
      message: expect.stringMatching(/^spec\.mutatePods: "Try" accepted: .*Nothing to do; the fields may be removed$/),
    });
    // The Go operator's condition (a sentence as reason, no lastTransitionTime) is replaced, not kept.
    expect(status?.conditions?.every((c) => typeof c.lastTransitionTime === 'string')).toBe(true);

    const reasons = h.events.map((e) => e.reason);
    expect(reasons).toEqual(
      expect.arrayContaining(['GoOperatorStatusConverted', 'GoOperatorFieldsAccepted', 'GoOperatorObjectsTakenOver']),
    );
    const takeover = h.events.find((e) => e.reason === 'GoOperatorObjectsTakenOver');
    expect(takeover?.message).toContain(
      `replaced 2 (Service ${TEST_NAMESPACE}/${NAMES.registryService}, DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet})`,
    );
    expect(takeover?.message).toContain(
      `removed (Go driver only: scheduler extender, pod webhook, raw namespace conversion) 12 (MutatingWebhookConfiguration ${P}-hook,`,
    );
    expect(takeover?.message).toMatch(/adopted in place 6 \(.*CSIDriver pmem-csi\.intel\.com\)/);
    expect(h.events.find((e) => e.reason === 'GoOperatorStatusConverted')?.message).toBe(
      `replaced 1 status condition(s) in the Go operator's shape (a sentence as reason, no lastTransitionTime or message): DriverDeployed=True ("Driver deployed successfully.")`,
    );
  });

  it('looks the Go objects up once per process: a steady reconcile reads none of them', async () => {
    const h = goDeployment({});
    const reconciler = h.reconciler();
    await reconciler.reconcile(CR_NAME);
    h.kube.failOn('get', new Error('read a Go object again'), {
      match: (detail) => GO_ONLY.includes(detail) || detail === `DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet}`,
      times: 100,
    });
    const events = h.events.length;
    await reconciler.reconcile(CR_NAME);
    expect(h.events.slice(events).map((e) => e.reason)).not.toContain('GoOperatorObjectsTakenOver');
  });

  it('refuses values that need the Go scheduler extender or pod webhook, writes nothing, and takes over once they are removed', async () => {
    const h = goDeployment({
      controllerTLSSecret: 'pmem-csi-webhooks',
      mutatePods: 'Always',
      schedulerNodePort: 32000,
    });
    await h.reconciler().reconcile(CR_NAME);
    expect(h.kube.writes).toEqual([`status ${CR_NAME}`]);
    for (const what of GO_ONLY) expect({ what, present: present(h, what) }).toEqual({ what, present: true });
    const status = h.cr().status;
    expect(status?.phase).toBe('Failed');
    expect(getCondition(status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'InvalidSpec',
    });
    const fields = getCondition(status?.conditions, 'GoOperatorFields');
    expect(fields).toMatchObject({ status: 'True', reason: 'Refused' });
    expect(fields?.message).toMatch(
      /^refused: spec\.controllerTLSSecret: unsupported value "pmem-csi-webhooks"; allowed values: "" or unset \(this driver has no scheduler extender/,
    );
    expect(fields?.message).toContain('spec.mutatePods: unsupported value "Always"');
    expect(fields?.message).toContain('spec.schedulerNodePort: unsupported value 32000');
    expect(fields?.message).toContain(
      'Nothing of this deployment is written until then; a Go driver still deployed keeps running',
    );
    expect(h.events.filter((e) => e.type === 'Warning').map((e) => e.reason)).toEqual([
      'GoOperatorFieldsRefused',
      'Failed',
    ]);

    h.putCr({ mutatePods: 'Never' });
    await h.reconciler().reconcile(CR_NAME);
    expect(getCondition(h.cr().status?.conditions, 'GoOperatorFields')).toMatchObject({
      status: 'True',
      reason: 'Accepted',
    });
    expect(getCondition(h.cr().status?.conditions, 'DriverDeployed')).toMatchObject({ status: 'True' });
    for (const what of GO_ONLY) expect({ what, present: present(h, what) }).toEqual({ what, present: false });

    h.putCr({});
    await h.reconciler().reconcile(CR_NAME);
    expect(getCondition(h.cr().status?.conditions, 'GoOperatorFields')).toMatchObject({
      status: 'False',
      reason: 'NotSet',
    });
  });

  it("keeps the Go node driver's device mode (its -deviceManager) while volumes of the driver exist", async () => {
    const h = goDeployment({}, 'direct'); // the CR leaves deviceMode unset (lvm here), the Go driver ran direct
    h.kube.put({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-1' },
      spec: { csi: { driver: CR_NAME, volumeHandle: 'pvc-1-abc' } },
    } as LooseObject);
    await h.reconciler().reconcile(CR_NAME);
    expect(
      h.object<V1DaemonSet & KubeObject>('daemonSet', NAMES.nodeDaemonSet)?.metadata.annotations?.[
        DEVICE_MODE_ANNOTATION
      ],
    ).toBe('direct');
    expect(getCondition(h.cr().status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'DeviceModeChangeRefused',
      message: expect.stringMatching(/^spec\.deviceMode: cannot change from direct to lvm while 1 volume\(s\)/),
    });
  });

  it('leaves objects of the Go names alone that the Go operator did not make for this CR', async () => {
    const h = harness();
    h.putCr({});
    const other = goObjects('lvm', 'uid-of-an-older-cr').find((o) => o.kind === 'StatefulSet') as LooseObject;
    const unowned = { ...(goObjects().find((o) => o.kind === 'MutatingWebhookConfiguration') as LooseObject) };
    unowned.metadata = { name: unowned.metadata.name };
    h.kube.put(other);
    h.kube.put(unowned);
    await h.reconciler().reconcile(CR_NAME);
    expect(present(h, `StatefulSet ${TEST_NAMESPACE}/${P}-controller`)).toBe(true);
    expect(present(h, `MutatingWebhookConfiguration /${P}-hook`)).toBe(true);
    expect(h.events.map((e) => e.reason)).not.toContain('GoOperatorObjectsTakenOver');
  });

  it("refuses, writing nothing, when the Go operator made the objects in another namespace than this operator's", async () => {
    const h = harness();
    h.putCr({});
    for (const o of goObjects('lvm', UID, 'pmem-csi-go')) h.kube.put(o);
    await h.reconciler().reconcile(CR_NAME);
    expect(h.kube.writes).toEqual([`status ${CR_NAME}`]);
    expect(getCondition(h.cr().status?.conditions, 'Conflict')).toMatchObject({
      status: 'True',
      reason: 'GoOperatorNamespace',
      message: expect.stringMatching(
        /^the Go operator made this deployment's objects in namespace "pmem-csi-go" .*this operator works in "pmem-csi": nothing is written.*Run this operator with --namespace pmem-csi-go/,
      ),
    });
    expect(h.cr().status?.phase).toBe('Failed');
  });

  it('creates our node DaemonSet only once the Go one and its pods are gone, and retries after a bounded wait', async () => {
    const h = goDeployment({});
    h.kube.foregroundLingerReads = 4; // the garbage collector deletes the pods, then the DaemonSet
    const goUid = h.object('daemonSet', NAMES.nodeDaemonSet)?.metadata.uid;
    await drive(h, h.reconciler().reconcile(CR_NAME));
    // Applied over the terminating Go DaemonSet, the apply would have failed (immutable selector).
    const ds = h.kube.writes.filter(
      (w) =>
        w.endsWith(` DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet}`) ||
        w.endsWith(`${NAMES.nodeDaemonSet} (foreground)`),
    );
    expect(ds).toEqual([
      `apply DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet}`, // refused: the selector is immutable
      `delete DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet} (foreground)`,
      `apply DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet}`,
    ]);
    expect(
      h.object<V1DaemonSet & KubeObject>('daemonSet', NAMES.nodeDaemonSet)?.metadata.labels?.[
        'app.kubernetes.io/managed-by'
      ],
    ).toBe('pmem-csi-operator');
    expect(h.object('daemonSet', NAMES.nodeDaemonSet)?.metadata.uid).not.toBe(goUid);

    const slow = goDeployment({});
    slow.kube.foregroundLingerReads = 1_000_000;
    const stuck = slow.reconciler().reconcile(CR_NAME);
    const failed = expect(stuck).rejects.toThrow(
      `DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet}: still being deleted after ${RECREATE_WAIT_MS / 1000} s (its pods have not stopped yet)`,
    );
    await drive(slow, stuck);
    await failed;
    expect(getCondition(slow.cr().status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'ApplyFailed',
    });
    // The retry finds it being deleted and waits again, never applying over it.
    const before = slow.kube.writes.length;
    const retry = slow.reconciler().reconcile(CR_NAME);
    const failedAgain = expect(retry).rejects.toThrow('still being deleted');
    await drive(slow, retry);
    await failedAgain;
    expect(slow.kube.writes.slice(before).filter((w) => w.includes(' DaemonSet '))).toEqual([]);
  });
});

/** Move the manual clock on in 1 s steps until `work` settles (at most 30 s of real time). */
async function drive(h: Harness, work: Promise<unknown>): Promise<void> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  const until = Date.now() + 30_000;
  while (!settled && Date.now() < until) {
    await h.clock.advance(1000);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
