import { jest } from '@jest/globals';
import type { V1DaemonSet, V1Deployment, V1Secret } from '@kubernetes/client-node';
import { API_GROUP_VERSION, KIND, LABEL_KEYS, getCondition, objectLabels } from '@pmem-csi/api';
import { createCa, createLeaf } from '@pmem-csi/runtime';
import { KubeApiError } from '../kube/kube-errors.js';
import type { KubeObject } from '../kube/kube-port.js';
import { CONFIG_HASH_ANNOTATION, OPERATOR_VERSION_ANNOTATION } from '@pmem-csi/api';
import type { ObjectBuilder } from '../objects/context.js';
import { ownerReference } from '../objects/meta.js';
import { BUILDERS } from '../objects/registry.js';
import { RESOURCES } from '../kube/resources.js';
import { TEST_NAMESPACE } from '../testing/fixtures.js';
import { CR_NAME, NAMES, harness, recordLists, type Harness } from '../testing/harness.js';

jest.setTimeout(60_000); // certificates are real (RSA 2048)

const EXPECTED_APPLY_ORDER = [
  `apply Secret ${TEST_NAMESPACE}/${NAMES.caSecret}`,
  `apply Secret ${TEST_NAMESPACE}/${NAMES.registrySecret}`,
  `apply Secret ${TEST_NAMESPACE}/${NAMES.nodeSecret}`,
  `apply ServiceAccount ${TEST_NAMESPACE}/${NAMES.controllerServiceAccount}`,
  `apply ServiceAccount ${TEST_NAMESPACE}/${NAMES.nodeServiceAccount}`,
  `apply ClusterRole /${NAMES.provisionerClusterRole}`,
  `apply ClusterRoleBinding /${NAMES.provisionerClusterRoleBinding}`,
  `apply Role ${TEST_NAMESPACE}/${NAMES.provisionerRole}`,
  `apply RoleBinding ${TEST_NAMESPACE}/${NAMES.provisionerRoleBinding}`,
  `apply ClusterRole /${NAMES.resizerClusterRole}`,
  `apply ClusterRoleBinding /${NAMES.resizerClusterRoleBinding}`,
  `apply Role ${TEST_NAMESPACE}/${NAMES.resizerRole}`,
  `apply RoleBinding ${TEST_NAMESPACE}/${NAMES.resizerRoleBinding}`,
  `apply Service ${TEST_NAMESPACE}/${NAMES.registryService}`,
  `apply Service ${TEST_NAMESPACE}/${NAMES.metricsService}`,
  `apply CSIDriver /${NAMES.csiDriver}`,
  `apply Deployment ${TEST_NAMESPACE}/${NAMES.controllerDeployment}`,
  `apply DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet}`,
];

const driverArgs = (h: Harness): string[] =>
  h.object<V1DaemonSet>('daemonSet', NAMES.nodeDaemonSet)?.spec?.template.spec?.containers[0]?.args ?? [];
const driverImage = (h: Harness): string | undefined =>
  h.object<V1DaemonSet>('daemonSet', NAMES.nodeDaemonSet)?.spec?.template.spec?.containers[0]?.image;

async function deployed(h: Harness, spec = {}): Promise<void> {
  h.putCr(spec);
  await h.reconciler().reconcile(CR_NAME);
}

describe('Reconciler', () => {
  it('applies every object in order, with owner reference and version, then reports DriverDeployed', async () => {
    const h = harness();
    const cr = h.putCr();
    const result = await h.reconciler({ version: 'A' }).reconcile(CR_NAME);
    expect(h.kube.writes).toEqual([...EXPECTED_APPLY_ORDER, `status ${CR_NAME}`]);
    for (const o of h.kube.objects.values()) {
      if (o.kind === KIND) continue;
      expect(o.metadata.ownerReferences).toEqual([ownerReference(cr)]);
      expect(o.metadata.annotations?.[OPERATOR_VERSION_ANNOTATION]).toBe('A');
    }
    const status = h.cr().status;
    expect(getCondition(status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'True',
      reason: 'AllObjectsApplied',
      observedGeneration: 1,
    });
    expect(getCondition(status?.conditions, 'CertsReady')).toMatchObject({ status: 'True', reason: 'OperatorIssued' });
    expect(getCondition(status?.conditions, 'CertsVerified')).toBeUndefined();
    // Objects written is not running: no pod is ready yet.
    expect(status?.phase).toBe('');
    expect(status?.driverComponents?.map((c) => [c.component, c.status])).toEqual([
      ['Controller', 'NotReady'],
      ['Node', 'NotReady'],
    ]);
    expect(h.events.map((e) => e.reason)).toEqual(['NewDeployment']);
    // Next look: the leaf certificates' renewal (80 % of a year).
    expect(result.requeueAfterMs).toBe(24 * 60 * 60 * 1000);
  });

  it('reports Running only when the workloads report every pod ready', async () => {
    const h = harness();
    await deployed(h);
    const r = h.reconciler();
    h.workloadsReady({ nodes: 5, nodesReady: 3 });
    await r.reconcile(CR_NAME);
    let status = h.cr().status;
    expect(status?.phase).toBe('');
    expect(status?.driverComponents).toEqual([
      expect.objectContaining({
        component: 'Controller',
        status: 'Ready',
        reason: '1 of 1 controller pods ready',
        desired: 1,
        ready: 1,
      }),
      expect.objectContaining({
        component: 'Node',
        status: 'NotReady',
        reason: '3 of 5 node driver pods ready',
        desired: 5,
        ready: 3,
      }),
    ]);
    h.workloadsReady({ nodes: 5 });
    await r.reconcile(CR_NAME);
    status = h.cr().status;
    expect(status?.phase).toBe('Running');
    expect(status?.reason).toBe(
      'driver is running (Controller: 1 of 1 controller pods ready; Node: 5 of 5 node driver pods ready)',
    );
    expect(h.events.map((e) => e.reason)).toEqual(['NewDeployment', 'Running']);
  });

  it('keeps Running through a node join and a node driver rollout, and says why it is not running when no node matches', async () => {
    const h = harness();
    await deployed(h);
    const r = h.reconciler();
    h.workloadsReady({ nodes: 5 });
    await r.reconcile(CR_NAME);
    h.workloadsReady({ nodes: 6, nodesReady: 5 }); // a node joined, its driver pod is starting
    await r.reconcile(CR_NAME);
    expect(h.cr().status).toMatchObject({
      phase: 'Running',
      reason:
        'driver is running, some pods are starting or updating (Controller: 1 of 1 controller pods ready; Node: 5 of 6 node driver pods ready)',
    });
    h.putCr({ logLevel: 5 }); // rollout: the DaemonSet controller has not observed the new template yet
    await r.reconcile(CR_NAME);
    expect(h.cr().status).toMatchObject({ phase: 'Running', observedGeneration: 2 });
    expect(h.cr().status?.driverComponents?.[1]).toMatchObject({
      status: 'NotReady',
      reason: 'waiting for the DaemonSet controller to observe the latest spec',
    });
    h.workloadsReady({ nodes: 6 });
    await r.reconcile(CR_NAME);
    expect(h.events.map((e) => e.reason)).toEqual(['NewDeployment', 'Running']);
    h.workloadsReady({ nodes: 0 }); // the nodes lost their label
    await r.reconcile(CR_NAME);
    const status = h.cr().status;
    expect(status?.phase).toBe('');
    expect(status?.reason).toMatch(
      /^no node matches the node selector storage=pmem \(or every matching node has taints the driver does not tolerate\)/,
    );
    expect(getCondition(status?.conditions, 'NodesSelected')).toMatchObject({
      status: 'False',
      reason: 'NoMatchingNodes',
    });
    expect(getCondition(status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'True',
      reason: 'AllObjectsApplied',
    });
    expect(h.events.map((e) => `${e.type} ${e.reason}`)).toEqual([
      'Normal NewDeployment',
      'Normal Running',
      'Warning NoMatchingNodes',
      'Warning NotRunning',
    ]);
  });

  it('writes nothing at all when nothing changed (no hot loop on its own status writes)', async () => {
    const h = harness();
    await deployed(h);
    h.workloadsReady();
    const r = h.reconciler();
    await r.reconcile(CR_NAME);
    const before = h.kube.writes.length;
    await h.clock.advance(5 * 60 * 1000);
    await r.reconcile(CR_NAME);
    await r.reconcile(CR_NAME);
    expect(h.kube.writes.slice(before)).toEqual([]);
  });

  it('reads owned objects from the informer caches, and never issues a new CA because a cache missed its own write', async () => {
    const h = harness();
    h.putCr();
    // Caches that have not seen anything yet (their watch events still in flight).
    const empty = (): KubeObject[] => [];
    await h.reconciler({ owned: empty }).reconcile(CR_NAME);
    const ca = h.object<V1Secret>('secret', NAMES.caSecret)?.data;
    const dsUid = h.object('daemonSet', NAMES.nodeDaemonSet)?.metadata.uid;
    expect(ca).toBeDefined();
    const lists = recordLists(h.kube);
    const writes = h.kube.writes.length;
    await h.reconciler({ owned: empty }).reconcile(CR_NAME);
    expect(lists).toEqual(['PmemCSIDeployment']); // the CR list: no deployments() cache given here
    expect(h.object<V1Secret>('secret', NAMES.caSecret)?.data).toEqual(ca);
    expect(h.object('daemonSet', NAMES.nodeDaemonSet)?.metadata.uid).toBe(dsUid);
    // What a stale cache costs: the objects are applied again unchanged (idempotent), nothing recreated.
    expect(h.kube.writes.slice(writes).filter((w) => !w.startsWith('apply '))).toEqual([]);
    // With a cache that holds what the apiserver holds: no list and no write.
    const fresh = (type: { kind: string }, crName: string): KubeObject[] =>
      [...h.kube.objects.values()].filter(
        (o) => o.kind === type.kind && o.metadata.labels?.[LABEL_KEYS.instance] === crName,
      );
    const crs = (): KubeObject[] => [...h.kube.objects.values()].filter((o) => o.kind === KIND);
    lists.length = 0;
    const before = h.kube.writes.length;
    await h.reconciler({ owned: fresh, deployments: crs }).reconcile(CR_NAME);
    expect(lists).toEqual([]);
    expect(h.kube.writes.slice(before)).toEqual([]);
  });

  it('re-creates a deleted child on the next reconcile', async () => {
    const h = harness();
    await deployed(h);
    await h.kube.delete({ ...RESOURCES.daemonSet, namespace: TEST_NAMESPACE, name: NAMES.nodeDaemonSet });
    const before = h.kube.writes.length;
    await h.reconciler().reconcile(CR_NAME);
    expect(h.kube.writes.slice(before)).toEqual([`apply DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet}`]);
  });

  it('rolls out spec changes (image, log level and format, resources, node selector, pmemPercentage, labels)', async () => {
    const h = harness();
    await deployed(h);
    const hashBefore = h.object<V1DaemonSet>('daemonSet', NAMES.nodeDaemonSet)?.spec?.template.metadata?.annotations?.[
      CONFIG_HASH_ANNOTATION
    ];
    h.putCr({
      image: 'example.org/pinned:1',
      logLevel: 5,
      logFormat: 'json',
      pmemPercentage: 40,
      nodeSelector: { pmem: 'yes' },
      labels: { team: 'a' },
      nodeDriverResources: { requests: { cpu: '1' } },
    });
    const before = h.kube.writes.length;
    await h.reconciler().reconcile(CR_NAME);
    const ds = h.object<V1DaemonSet>('daemonSet', NAMES.nodeDaemonSet);
    const pod = ds?.spec?.template;
    expect(pod?.spec?.containers[0]?.image).toBe('example.org/pinned:1');
    expect(driverArgs(h)).toEqual(expect.arrayContaining(['--v=5', '--log-format=json', '--pmem-percentage=40']));
    expect(pod?.spec?.nodeSelector).toEqual({ pmem: 'yes' });
    expect(pod?.spec?.containers[0]?.resources).toEqual({ requests: { cpu: '1' } });
    expect(ds?.metadata?.labels?.['team']).toBe('a');
    expect(pod?.metadata?.annotations?.[CONFIG_HASH_ANNOTATION]).not.toBe(hashBefore);
    // Labels changed on every object, so every object is applied again; the status follows the new generation.
    expect(h.kube.writes.slice(before)).toEqual([...EXPECTED_APPLY_ORDER, `status ${CR_NAME}`]);
    expect(h.cr().status?.observedGeneration).toBe(2);
  });

  it('refuses invalid user certificates: CertsVerified False, phase Failed and nothing deployed', async () => {
    const h = harness();
    const ca = await createCa({ commonName: 'user', validityDays: 10, keyBits: 2048 });
    const registry = await createLeaf({ ca, dnsName: 'pmem-registry', validityDays: 5, keyBits: 2048 });
    const node = await createLeaf({ ca, dnsName: 'pmem-node-controller', validityDays: 5, keyBits: 2048 });
    h.putCr({
      caCert: ca.certPem,
      registryCert: registry.certPem,
      registryKey: node.keyPem,
      nodeControllerCert: node.certPem,
      nodeControllerKey: node.keyPem,
    });
    await h.reconciler().reconcile(CR_NAME);
    expect(h.kube.writes).toEqual([`status ${CR_NAME}`]);
    const status = h.cr().status;
    expect(status?.phase).toBe('Failed');
    expect(status?.reason).toBe(
      'certificates in the spec are invalid: registry certificate: does not match its private key',
    );
    expect(getCondition(status?.conditions, 'CertsVerified')).toMatchObject({
      status: 'False',
      reason: 'HandshakeFailed',
      message: 'registry certificate: does not match its private key',
    });
    expect(getCondition(status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'CertificatesInvalid',
    });
    expect(h.events.map((e) => [e.type, e.reason])).toEqual([
      ['Normal', 'NewDeployment'],
      ['Warning', 'Failed'],
    ]);

    // Fixed certificates: verified, deployed with exactly those, and no CA Secret.
    h.putCr({
      caCert: ca.certPem,
      registryCert: registry.certPem,
      registryKey: registry.keyPem,
      nodeControllerCert: node.certPem,
      nodeControllerKey: node.keyPem,
    });
    await h.reconciler().reconcile(CR_NAME);
    expect(getCondition(h.cr().status?.conditions, 'CertsVerified')).toMatchObject({
      status: 'True',
      reason: 'HandshakeSucceeded',
    });
    expect(h.object('secret', NAMES.caSecret)).toBeUndefined();
    const secret = h.object<V1Secret>('secret', NAMES.registrySecret);
    expect(Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString()).toBe(registry.certPem);
  });

  it('refuses a deviceMode change while volumes of the driver exist, and allows it without', async () => {
    const h = harness();
    await deployed(h, { deviceMode: 'lvm' });
    h.kube.put({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-1' },
      spec: { csi: { driver: CR_NAME, volumeHandle: 'v1' } },
    } as KubeObject);
    h.kube.put({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'other' },
      spec: { csi: { driver: 'other.csi.example.org', volumeHandle: 'x' } },
    } as KubeObject);
    h.putCr({ deviceMode: 'direct', logLevel: 4 });
    await h.reconciler().reconcile(CR_NAME);
    const status = h.cr().status;
    const reason = `spec.deviceMode: cannot change from lvm to direct while 1 volume(s) of driver ${CR_NAME} exist (pvc-1); the driver keeps running in lvm mode. Delete those volumes, or set spec.deviceMode back to lvm`;
    expect(status?.phase).toBe('Failed');
    expect(status?.reason).toBe(reason);
    expect(getCondition(status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'DeviceModeChangeRefused',
      message: reason,
    });
    // Everything else of the new spec is rolled out; the device mode stays.
    expect(driverArgs(h)).toEqual(expect.arrayContaining(['--device-mode=lvm', '--v=4']));
    expect(h.events.map((e) => e.reason)).toEqual(['NewDeployment', 'Failed']);

    await h.kube.delete({ ...RESOURCES.persistentVolume, name: 'pvc-1' });
    await h.reconciler().reconcile(CR_NAME);
    expect(driverArgs(h)).toContain('--device-mode=direct');
    expect(getCondition(h.cr().status?.conditions, 'DriverDeployed')).toMatchObject({ status: 'True' });
  });

  it('runs emulated mode on loop-backed files in the host state directory and says in the status and an event that it is not PMEM', async () => {
    const h = harness();
    await deployed(h, { deviceMode: 'emulated', emulatedSize: '512Mi' });
    const args = driverArgs(h);
    expect(args).toEqual(
      expect.arrayContaining([
        '--device-mode=emulated',
        `--emulated-size=${512 * 1024 ** 2}`,
        `--state-dir=/var/lib/${CR_NAME}`,
      ]),
    );
    // The backing files (<state dir>/emulated) are on the node: the state dir is a hostPath at the same path.
    const pod = h.object<V1DaemonSet>('daemonSet', NAMES.nodeDaemonSet)?.spec?.template.spec;
    const stateMount = pod?.containers[0]?.volumeMounts?.find((m) => m.mountPath === `/var/lib/${CR_NAME}`);
    expect(pod?.volumes?.find((v) => v.name === stateMount?.name)?.hostPath).toEqual({
      path: `/var/lib/${CR_NAME}`,
      type: 'DirectoryOrCreate',
    });
    expect(pod?.containers[0]?.securityContext?.privileged).toBe(true);
    const emulated = getCondition(h.cr().status?.conditions, 'EmulatedPmem');
    expect(emulated).toMatchObject({ status: 'True', reason: 'LoopBackedFiles' });
    expect(emulated?.message).toBe(
      `device mode emulated: volumes are NOT persistent memory. Each volume is a sparse file in /var/lib/${CR_NAME}/emulated on the node's disk, attached to a loop device ` +
        '(real filesystems and mounts, but no DAX, disk speed and durability); each node driver offers 512Mi (spec.emulatedSize). For trying PMEM-CSI and for tests; use deviceMode lvm or direct on nodes with PMEM.',
    );
    expect(getCondition(h.cr().status?.conditions, 'DriverDeployed')).toMatchObject({ status: 'True' });
    expect(h.events.filter((e) => e.reason === 'EmulatedPmem').map((e) => [e.type, e.message])).toEqual([
      ['Warning', emulated?.message],
    ]);

    // Once per transition, and a refused change away from emulated keeps the driver, and so the condition.
    await h.reconciler().reconcile(CR_NAME);
    h.kube.put({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-1' },
      spec: { csi: { driver: CR_NAME, volumeHandle: 'v1' } },
    } as KubeObject);
    h.putCr({ deviceMode: 'lvm', emulatedSize: '512Mi' });
    await h.reconciler().reconcile(CR_NAME);
    expect(driverArgs(h)).toContain('--device-mode=emulated');
    expect(getCondition(h.cr().status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'DeviceModeChangeRefused',
    });
    expect(getCondition(h.cr().status?.conditions, 'EmulatedPmem')).toMatchObject({
      status: 'True',
      reason: 'LoopBackedFiles',
    });
    expect(h.events.filter((e) => e.reason === 'EmulatedPmem')).toHaveLength(1);

    // Without volumes the change goes through: PMEM again, no --emulated-size.
    await h.kube.delete({ ...RESOURCES.persistentVolume, name: 'pvc-1' });
    await h.reconciler().reconcile(CR_NAME);
    expect(driverArgs(h)).toContain('--device-mode=lvm');
    expect(driverArgs(h).filter((a) => a.startsWith('--emulated-size'))).toEqual([]);
    expect(getCondition(h.cr().status?.conditions, 'EmulatedPmem')).toMatchObject({
      status: 'False',
      reason: 'PmemDeviceMode',
      message: "the driver runs in device mode lvm and manages the nodes' PMEM",
    });
  });

  it('gives a deployment that never ran emulated no EmulatedPmem condition and no --emulated-size', async () => {
    const h = harness();
    await deployed(h, { deviceMode: 'direct', emulatedSize: '1Gi' });
    expect(getCondition(h.cr().status?.conditions, 'EmulatedPmem')).toBeUndefined();
    expect(driverArgs(h).filter((a) => a.startsWith('--emulated-size'))).toEqual([]);
    expect(h.events.map((e) => e.reason)).not.toContain('EmulatedPmem');
  });

  it('reports an invalid spec with every problem and applies nothing', async () => {
    const h = harness();
    h.putCr({ deviceMode: 'fake' as 'lvm', logLevel: 11 });
    await h.reconciler().reconcile(CR_NAME);
    expect(h.kube.writes).toEqual([`status ${CR_NAME}`]);
    expect(h.cr().status?.reason).toBe(
      'invalid spec: spec.deviceMode: unsupported value "fake"; allowed values: lvm, direct, emulated; spec.logLevel: unsupported value 11; allowed values: integers from 0 to 10',
    );
  });

  it('records a failed apply in the status and throws, so that the queue backs off', async () => {
    const h = harness();
    h.putCr();
    h.kube.failOn('apply', new KubeApiError(500, 'etcd timeout'), { match: (d) => d.startsWith('DaemonSet') });
    await expect(h.reconciler().reconcile(CR_NAME)).rejects.toThrow(
      `DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet}: etcd timeout`,
    );
    const status = h.cr().status;
    expect(status?.phase).toBe('Failed');
    expect(getCondition(status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'ApplyFailed',
    });
    expect(status?.driverComponents).toBeUndefined();
    await h.reconciler().reconcile(CR_NAME);
    expect(h.cr().status?.phase).toBe('');
    expect(h.cr().status?.driverComponents?.map((c) => c.component)).toEqual(['Controller', 'Node']);
  });

  it('does nothing for a CR that is gone or being deleted', async () => {
    const h = harness();
    await expect(h.reconciler().reconcile('absent')).resolves.toEqual({});
    expect(h.kube.writes).toEqual([]);
  });
});

describe('operator upgrade A -> B', () => {
  // Version A also built a (legacy) StatefulSet, and a ClusterRole for the driver.
  const legacy: ObjectBuilder = {
    ...RESOURCES.statefulSet,
    id: 'legacy-controller',
    build: (cr, ctx) => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: {
        name: `${NAMES.controllerDeployment}-legacy`,
        namespace: ctx.namespace,
        labels: objectLabels(cr.metadata.name, 'controller'),
        ownerReferences: [ownerReference(cr)],
      },
      spec: { serviceName: 'x', selector: { matchLabels: { a: 'b' } }, template: {} },
    }),
  };
  const versionA = [...BUILDERS, legacy];

  it('updates every object in place, deletes obsolete ones, leaves volumes and foreign objects alone', async () => {
    const h = harness();
    h.putCr();
    await h.reconciler({ version: 'A', image: 'example.org/driver:A', builders: versionA }).reconcile(CR_NAME);
    expect(h.object('statefulSet', `${NAMES.controllerDeployment}-legacy`)).toBeDefined();
    const pv = {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-1', labels: objectLabels(CR_NAME, undefined) },
      spec: { csi: { driver: CR_NAME, volumeHandle: 'v' } },
    };
    h.kube.put(pv as KubeObject);
    // Labelled like ours but owned by someone else: not ours to delete.
    h.kube.put({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        name: 'foreign',
        namespace: TEST_NAMESPACE,
        labels: objectLabels(CR_NAME, undefined),
        ownerReferences: [
          { apiVersion: API_GROUP_VERSION, kind: KIND, name: CR_NAME, uid: 'other-uid', controller: true },
        ],
      },
    } as KubeObject);
    const before = h.kube.writes.length;

    await h.reconciler({ version: 'B', image: 'example.org/driver:B' }).reconcile(CR_NAME);
    const writes = h.kube.writes.slice(before);
    expect(writes).toEqual([
      ...EXPECTED_APPLY_ORDER,
      `delete StatefulSet ${TEST_NAMESPACE}/${NAMES.controllerDeployment}-legacy`,
    ]);
    for (const o of h.kube.objects.values()) {
      if (o.kind === KIND || o.kind === 'PersistentVolume' || o.metadata.name === 'foreign') continue;
      expect([o.kind, o.metadata.annotations?.[OPERATOR_VERSION_ANNOTATION]]).toEqual([o.kind, 'B']);
    }
    expect(driverImage(h)).toBe('example.org/driver:B');
    expect(
      h.object<V1Deployment>('deployment', NAMES.controllerDeployment)?.spec?.template.spec?.containers[0]?.image,
    ).toBe('example.org/driver:B');
    expect(h.object('persistentVolume', 'pvc-1')).toBeDefined();
    expect(h.object('serviceAccount', 'foreign')).toBeDefined();
  });

  it('keeps a pinned driver image across the upgrade', async () => {
    const h = harness();
    h.putCr({ image: 'example.org/pinned:7' });
    await h.reconciler({ version: 'A', image: 'example.org/driver:A' }).reconcile(CR_NAME);
    await h.reconciler({ version: 'B', image: 'example.org/driver:B' }).reconcile(CR_NAME);
    expect(driverImage(h)).toBe('example.org/pinned:7');
  });

  it('recreates objects whose immutable fields changed (Secret type, workload selector)', async () => {
    const h = harness();
    await deployed(h);
    const secret = h.object<V1Secret>('secret', NAMES.nodeSecret) as V1Secret & KubeObject;
    h.kube.put({ ...secret, type: 'Opaque' } as KubeObject);
    const ds = h.object<V1DaemonSet>('daemonSet', NAMES.nodeDaemonSet) as V1DaemonSet & KubeObject;
    h.kube.put({ ...ds, spec: { ...ds.spec, selector: { matchLabels: { app: 'pmem-csi-node' } } } } as KubeObject);
    const before = h.kube.writes.length;
    await h.reconciler().reconcile(CR_NAME);
    expect(h.kube.writes.slice(before)).toEqual([
      `delete Secret ${TEST_NAMESPACE}/${NAMES.nodeSecret}`,
      `apply Secret ${TEST_NAMESPACE}/${NAMES.nodeSecret}`,
      // Foreground: the new DaemonSet only once the old one and its pods are gone (one node driver per node).
      `delete DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet} (foreground)`,
      `apply DaemonSet ${TEST_NAMESPACE}/${NAMES.nodeDaemonSet}`,
    ]);
    expect(h.object<V1Secret>('secret', NAMES.nodeSecret)?.type).toBe('kubernetes.io/tls');
  });
});
