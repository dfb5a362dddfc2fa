// The reconciler with two PmemCSIDeployments whose object names collide (issue 18), with objects
// of other controllers, and with a controller Deployment that older versions built with the
// default RollingUpdate strategy.
import { jest } from '@jest/globals';
import type { V1Deployment } from '@kubernetes/client-node';
import { deploymentObjectNames, getCondition, LABEL_KEYS } from '@pmem-csi/api';
import type { KubeObject, LooseObject } from '../kube/kube-port.js';
import type { ObjectBuilder } from '../objects/context.js';
import { BUILDERS } from '../objects/registry.js';
import { RESOURCES } from '../kube/resources.js';
import { TEST_NAMESPACE } from '../testing/fixtures.js';
import { CR_NAME, NAMES, harness, type Harness } from '../testing/harness.js';

jest.setTimeout(60_000); // certificates are real (RSA 2048)

const OLDER = CR_NAME; // pmem-csi.intel.com
const NEWER = 'pmem-csi-intel-com';
const OLDER_UID = '6f1b3c2a-0000-4000-8000-000000000001';
const NEWER_NAMES = deploymentObjectNames(NEWER);

const COLLISION_MESSAGE =
  'object names collide with PmemCSIDeployment "pmem-csi.intel.com": both names give the object-name prefix "pmem-csi-intel-com" ' +
  '(DaemonSet pmem-csi/pmem-csi-intel-com-node, Deployment pmem-csi/pmem-csi-intel-com-controller, ClusterRole pmem-csi-intel-com-external-provisioner-runner and the other objects of that prefix). ' +
  '"pmem-csi.intel.com" keeps them by the ownership rule (the deployment with the earliest metadata.creationTimestamp keeps the object names; ' +
  "of deployments created in the same second (the timestamp has whole seconds) the one whose name sorts first, which is the one with '-' where the names first differ): " +
  '"pmem-csi.intel.com" was created first (2026-03-01T10:00:00Z; this deployment 2026-03-01T10:05:00Z). ' +
  'It takes over any of them this deployment created; this deployment writes nothing. ' +
  "Delete one of the two deployments; to run both drivers, recreate this one under a name that still differs from \"pmem-csi.intel.com\" after replacing '.' with '-'.";

/** Everything in the fake apiserver except the CRs themselves, as JSON. */
const snapshot = (h: Harness): string =>
  JSON.stringify(
    [...h.kube.objects.entries()]
      .filter(([, o]) => o.kind !== 'PmemCSIDeployment')
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );

const apply = (kind: string, name: string, namespaced = true): string =>
  `apply ${kind} ${namespaced ? TEST_NAMESPACE : ''}/${name}`;

/** What a first reconcile of NEWER applies once it owns the names (its CSIDriver is named after it). */
const NEWER_APPLY_ORDER = [
  apply('Secret', NEWER_NAMES.caSecret),
  apply('Secret', NEWER_NAMES.registrySecret),
  apply('Secret', NEWER_NAMES.nodeSecret),
  apply('ServiceAccount', NEWER_NAMES.controllerServiceAccount),
  apply('ServiceAccount', NEWER_NAMES.nodeServiceAccount),
  apply('ClusterRole', NEWER_NAMES.provisionerClusterRole, false),
  apply('ClusterRoleBinding', NEWER_NAMES.provisionerClusterRoleBinding, false),
  apply('Role', NEWER_NAMES.provisionerRole),
  apply('RoleBinding', NEWER_NAMES.provisionerRoleBinding),
  apply('ClusterRole', NEWER_NAMES.resizerClusterRole, false),
  apply('ClusterRoleBinding', NEWER_NAMES.resizerClusterRoleBinding, false),
  apply('Role', NEWER_NAMES.resizerRole),
  apply('RoleBinding', NEWER_NAMES.resizerRoleBinding),
  apply('Service', NEWER_NAMES.registryService),
  apply('Service', NEWER_NAMES.metricsService),
  apply('CSIDriver', NEWER, false),
  apply('Deployment', NEWER_NAMES.controllerDeployment),
  apply('DaemonSet', NEWER_NAMES.nodeDaemonSet),
];

/**
 * What NEWER's first reconcile writes when it takes over OLDER's objects: the workloads recreated
 * (another selector), the DaemonSet in the foreground so that no node runs two node drivers.
 */
const TAKEOVER_WRITES = NEWER_APPLY_ORDER.flatMap((step) => {
  if (step.startsWith('apply Deployment ')) return [step, step.replace('apply', 'delete'), step];
  if (step.startsWith('apply DaemonSet ')) return [step, `${step.replace('apply', 'delete')} (foreground)`, step];
  return [step];
});

/** OLDER deployed and Running, NEWER created five minutes later. */
async function twoDeployments(): Promise<Harness> {
  const h = harness();
  h.putCr({}, OLDER, { creationTimestamp: '2026-03-01T10:00:00Z' });
  await h.reconciler().reconcile(OLDER);
  h.workloadsReady();
  await h.reconciler().reconcile(OLDER);
  expect(h.cr(OLDER).status?.phase).toBe('Running');
  h.putCr({}, NEWER, { creationTimestamp: '2026-03-01T10:05:00Z' });
  return h;
}

const eventsOf = (h: Harness, name: string): string[][] =>
  h.events.filter((e) => e.deployment === name).map((e) => [e.type, e.reason, e.message]);

describe('two PmemCSIDeployments whose object names collide', () => {
  it('refuses the newer one before it writes anything, and leaves the older one and its objects untouched', async () => {
    const h = await twoDeployments();
    const before = snapshot(h);
    const writesBefore = h.kube.writes.length;
    const olderEvents = eventsOf(h, OLDER);

    for (let round = 0; round < 3; round++) {
      await expect(h.reconciler().reconcile(NEWER)).resolves.toEqual({});
      await h.reconciler().reconcile(OLDER);
    }

    // One status write for the newer one; nothing else at all, so every UID and resourceVersion stays.
    expect(h.kube.writes.slice(writesBefore)).toEqual([`status ${NEWER}`]);
    expect(snapshot(h)).toBe(before);
    expect(h.object('daemonSet', NAMES.nodeDaemonSet)?.metadata.labels?.[LABEL_KEYS.instance]).toBe(OLDER);
    expect(h.cr(OLDER).status?.phase).toBe('Running');
    expect(getCondition(h.cr(OLDER).status?.conditions, 'Conflict')).toBeUndefined();
    expect(eventsOf(h, OLDER)).toEqual(olderEvents);

    const status = h.cr(NEWER).status;
    expect(status?.phase).toBe('Failed');
    expect(status?.reason).toBe(COLLISION_MESSAGE);
    expect(getCondition(status?.conditions, 'Conflict')).toMatchObject({
      status: 'True',
      reason: 'NameCollision',
      message: COLLISION_MESSAGE,
      observedGeneration: 1,
    });
    expect(getCondition(status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'False',
      reason: 'Conflict',
      message: COLLISION_MESSAGE,
    });
    expect(eventsOf(h, NEWER)).toEqual([
      ['Normal', 'NewDeployment', 'processing new driver deployment'],
      ['Warning', 'Conflict', COLLISION_MESSAGE],
    ]);
    // Nothing of its own: no object labelled for it, not even its CSIDriver, no certificates.
    expect([...h.kube.objects.values()].filter((o) => o.metadata.labels?.[LABEL_KEYS.instance] === NEWER)).toEqual([]);
    expect(h.object('csiDriver', NEWER)).toBeUndefined();
  });

  it('lets the newer one take over once the older one and its objects are gone, and clears Conflict', async () => {
    const h = await twoDeployments();
    await h.reconciler().reconcile(NEWER);
    await h.kube.delete({ ...RESOURCES.pmemCsiDeployment, name: OLDER });

    // The older CR is gone, its objects not yet: still not ours to write.
    let writesBefore = h.kube.writes.length;
    await expect(h.reconciler().reconcile(NEWER)).resolves.toEqual({ requeueAfterMs: 60_000 });
    const waiting =
      `Secret pmem-csi/pmem-csi-intel-com-ca is controlled by PmemCSIDeployment "pmem-csi.intel.com" (uid ${OLDER_UID}), which no longer exists ` +
      '(16 more objects of this deployment are controlled by another deployment or controller); this deployment writes nothing until the garbage collector has deleted it';
    expect(h.kube.writes.slice(writesBefore)).toEqual([`status ${NEWER}`]);
    expect(getCondition(h.cr(NEWER).status?.conditions, 'Conflict')).toMatchObject({
      status: 'True',
      reason: 'OwnedByOtherDeployment',
      message: waiting,
    });

    expect(h.kube.collectGarbage()).toBe(18); // 17 shared names + the older one's CSIDriver
    writesBefore = h.kube.writes.length;
    await h.reconciler().reconcile(NEWER);
    expect(h.kube.writes.slice(writesBefore)).toEqual([...NEWER_APPLY_ORDER, `status ${NEWER}`]);
    const status = h.cr(NEWER).status;
    expect(status?.phase).toBe('');
    expect(getCondition(status?.conditions, 'Conflict')).toMatchObject({
      status: 'False',
      reason: 'Resolved',
      message: 'no other deployment or controller owns the objects of this deployment any more',
    });
    expect(getCondition(status?.conditions, 'DriverDeployed')).toMatchObject({
      status: 'True',
      reason: 'AllObjectsApplied',
    });
    expect(h.object('daemonSet', NEWER_NAMES.nodeDaemonSet)?.metadata.labels?.[LABEL_KEYS.instance]).toBe(NEWER);
    expect(eventsOf(h, NEWER).map(([type, reason]) => [type, reason])).toEqual([
      ['Normal', 'NewDeployment'],
      ['Warning', 'Conflict'],
      ['Warning', 'Conflict'],
      ['Normal', 'ConflictResolved'],
    ]);
    // Resolved stays resolved: the next reconcile writes nothing.
    writesBefore = h.kube.writes.length;
    await h.reconciler().reconcile(NEWER);
    expect(h.kube.writes.slice(writesBefore)).toEqual([]);
  });

  it('refuses a CR recreated under the same name while the objects of the deleted one still exist', async () => {
    const h = harness();
    h.putCr();
    await h.reconciler().reconcile(CR_NAME);
    await h.kube.delete({ ...RESOURCES.pmemCsiDeployment, name: CR_NAME });
    h.putCr({}, CR_NAME, { uid: 'second-incarnation' });
    const writesBefore = h.kube.writes.length;
    await expect(h.reconciler().reconcile(CR_NAME)).resolves.toEqual({ requeueAfterMs: 60_000 });
    expect(h.kube.writes.slice(writesBefore)).toEqual([`status ${CR_NAME}`]);
    expect(getCondition(h.cr().status?.conditions, 'Conflict')?.message).toBe(
      `Secret pmem-csi/pmem-csi-intel-com-ca is controlled by PmemCSIDeployment "pmem-csi.intel.com" (uid ${OLDER_UID}), which no longer exists ` +
        '(17 more objects of this deployment are controlled by another deployment or controller); this deployment writes nothing until the garbage collector has deleted it',
    );
    h.kube.collectGarbage();
    await h.reconciler().reconcile(CR_NAME);
    expect(h.object('daemonSet', NAMES.nodeDaemonSet)?.metadata.ownerReferences?.[0]?.uid).toBe('second-incarnation');
  });
});

describe('two colliding PmemCSIDeployments created in the same second (issue 32)', () => {
  // Timestamps have whole seconds: the name decides, and '-' sorts before '.'.
  const SAME_SECOND = '2026-03-01T10:00:07Z';
  const WINNER = NEWER; // pmem-csi-intel-com
  const LOSER = OLDER; // pmem-csi.intel.com
  const WINNER_UID = `uid-of-${WINNER}`;
  const SHARED = 17; // every object of the prefix; each CR's CSIDriver is its own
  const REFUSED =
    'object names collide with PmemCSIDeployment "pmem-csi-intel-com": both names give the object-name prefix "pmem-csi-intel-com" ' +
    '(DaemonSet pmem-csi/pmem-csi-intel-com-node, Deployment pmem-csi/pmem-csi-intel-com-controller, ClusterRole pmem-csi-intel-com-external-provisioner-runner and the other objects of that prefix). ' +
    '"pmem-csi-intel-com" keeps them by the ownership rule (the deployment with the earliest metadata.creationTimestamp keeps the object names; ' +
    "of deployments created in the same second (the timestamp has whole seconds) the one whose name sorts first, which is the one with '-' where the names first differ): " +
    'both were created in the same second (2026-03-01T10:00:07Z) and "pmem-csi-intel-com" sorts first. ' +
    'It takes over any of them this deployment created; this deployment writes nothing. ' +
    "Delete one of the two deployments; to run both drivers, recreate this one under a name that still differs from \"pmem-csi-intel-com\" after replacing '.' with '-'.";

  /** The controller uid of every object of the shared prefix, by "Kind name". */
  const controllers = (h: Harness): Map<string, string | undefined> =>
    new Map(
      [...h.kube.objects.values()]
        .filter((o) => o.kind !== 'PmemCSIDeployment' && o.metadata.name.startsWith('pmem-csi-intel-com-'))
        .map((o) => [`${o.kind} ${o.metadata.name}`, o.metadata.ownerReferences?.find((r) => r.controller)?.uid]),
    );
  const controlledBy = (h: Harness, uid: string): number =>
    [...controllers(h).values()].filter((u) => u === uid).length;

  /** Both reconciled `rounds` times in the given order; the writes they made. */
  async function rounds(h: Harness, order: readonly string[], n = 3): Promise<string[]> {
    const before = h.kube.writes.length;
    for (let i = 0; i < n; i++) for (const name of order) await h.reconciler().reconcile(name);
    return h.kube.writes.slice(before);
  }

  function expectOutcome(h: Harness): void {
    expect(controlledBy(h, WINNER_UID)).toBe(SHARED);
    expect(controllers(h).size).toBe(SHARED);
    expect(h.object('daemonSet', NAMES.nodeDaemonSet)?.metadata.labels?.[LABEL_KEYS.instance]).toBe(WINNER);
    const winner = h.cr(WINNER).status;
    expect(getCondition(winner?.conditions, 'DriverDeployed')).toMatchObject({ status: 'True' });
    expect(getCondition(winner?.conditions, 'Conflict')?.status).not.toBe('True');
    const loser = h.cr(LOSER).status;
    expect(loser?.phase).toBe('Failed');
    expect(loser?.reason).toBe(REFUSED);
    expect(getCondition(loser?.conditions, 'Conflict')).toMatchObject({
      status: 'True',
      reason: 'NameCollision',
      message: REFUSED,
    });
  }

  it('the loser by the rule arrived and deployed first: the winner takes over its objects, the loser is refused naming it', async () => {
    const h = harness();
    h.putCr({}, LOSER, { creationTimestamp: SAME_SECOND });
    await h.reconciler().reconcile(LOSER);
    h.workloadsReady();
    await h.reconciler().reconcile(LOSER);
    expect(h.cr(LOSER).status?.phase).toBe('Running');
    expect(controlledBy(h, OLDER_UID)).toBe(SHARED);
    h.putCr({}, WINNER, { creationTimestamp: SAME_SECOND });

    let writesBefore = h.kube.writes.length;
    await h.reconciler().reconcile(WINNER);
    // Every shared object applied over (the owner reference and labels change), the workloads
    // recreated because their selector names the CR; its own CSIDriver; nothing of the loser's deleted.
    expect(h.kube.writes.slice(writesBefore)).toEqual([...TAKEOVER_WRITES, `status ${WINNER}`]);
    writesBefore = h.kube.writes.length;
    await h.reconciler().reconcile(LOSER);
    expect(h.kube.writes.slice(writesBefore)).toEqual([`status ${LOSER}`]);
    expectOutcome(h);
    expect(eventsOf(h, WINNER)).toEqual([
      ['Normal', 'NewDeployment', 'processing new driver deployment'],
      [
        'Normal',
        'ObjectsTakenOver',
        'took over 17 object(s) controlled by PmemCSIDeployment "pmem-csi.intel.com" (first: Secret pmem-csi/pmem-csi-intel-com-ca), ' +
          'which comes after this deployment by the ownership rule of colliding object names and is refused with Conflict=True (NameCollision)',
      ],
    ]);
    expect(eventsOf(h, LOSER).slice(-1)).toEqual([['Warning', 'Conflict', REFUSED]]);
    // The loser's own CSIDriver (named after it, shared with nobody) stays until it is deleted.
    expect(h.object('csiDriver', LOSER)?.metadata.ownerReferences?.[0]?.uid).toBe(OLDER_UID);

    // Settled: more rounds in either order write nothing, and the winner runs.
    expect(await rounds(h, [LOSER, WINNER])).toEqual([]);
    expect(await rounds(h, [WINNER, LOSER])).toEqual([]);
    h.workloadsReady();
    await h.reconciler().reconcile(WINNER);
    expect(h.cr(WINNER).status?.phase).toBe('Running');
    expectOutcome(h);
  });

  it('the winner by the rule arrived and deployed first: the loser is refused before it writes anything', async () => {
    const h = harness();
    h.putCr({}, WINNER, { creationTimestamp: SAME_SECOND });
    await h.reconciler().reconcile(WINNER);
    h.workloadsReady();
    await h.reconciler().reconcile(WINNER);
    const before = snapshot(h);
    h.putCr({}, LOSER, { creationTimestamp: SAME_SECOND });
    expect(await rounds(h, [LOSER, WINNER])).toEqual([`status ${LOSER}`]);
    expect(snapshot(h)).toBe(before);
    expectOutcome(h);
    expect(h.cr(WINNER).status?.phase).toBe('Running');
    expect(eventsOf(h, WINNER).map(([, reason]) => reason)).toEqual(['NewDeployment', 'Running']);
  });

  it('both created, the loser reconciled with a cache that lacked the winner: it deploys, then the winner takes everything over', async () => {
    const h = harness();
    h.putCr({}, WINNER, { creationTimestamp: SAME_SECOND });
    h.putCr({}, LOSER, { creationTimestamp: SAME_SECOND });
    // What happened in issue 32: the loser's reconcile began before the winner's ADDED event.
    await h.reconciler({ deployments: () => [h.cr(LOSER) as unknown as KubeObject] }).reconcile(LOSER);
    expect(controlledBy(h, OLDER_UID)).toBe(SHARED);
    const writesBefore = h.kube.writes.length;
    await h.reconciler().reconcile(WINNER);
    expect(h.kube.writes.slice(writesBefore)).toEqual([...TAKEOVER_WRITES, `status ${WINNER}`]);
    expect(await rounds(h, [LOSER, WINNER])).toEqual([`status ${LOSER}`]);
    expectOutcome(h);
  });
});

describe('objects controlled by another controller', () => {
  const foreign = {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: {
      name: NAMES.controllerServiceAccount,
      namespace: TEST_NAMESPACE,
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'someone-else', uid: 'rs-1', controller: true },
      ],
    },
  };
  const MESSAGE =
    'ServiceAccount pmem-csi/pmem-csi-intel-com-controller is controlled by ReplicaSet "someone-else" (apps/v1, uid rs-1); ' +
    'this deployment writes nothing while it is: delete that object or its controller, or recreate this deployment under another name';

  it('are never touched: the deployment is refused before its first write and looks again later', async () => {
    const h = harness();
    const stored = JSON.stringify(h.kube.put(foreign as KubeObject));
    h.putCr();
    await expect(h.reconciler().reconcile(CR_NAME)).resolves.toEqual({ requeueAfterMs: 60_000 });
    expect(h.kube.writes).toEqual([`status ${CR_NAME}`]);
    expect(JSON.stringify(h.object('serviceAccount', NAMES.controllerServiceAccount))).toBe(stored);
    const status = h.cr().status;
    expect(status?.phase).toBe('Failed');
    expect(status?.reason).toBe(MESSAGE);
    expect(getCondition(status?.conditions, 'Conflict')).toMatchObject({
      status: 'True',
      reason: 'OwnedByOtherController',
      message: MESSAGE,
    });
    expect(eventsOf(h, CR_NAME)).toEqual([
      ['Normal', 'NewDeployment', 'processing new driver deployment'],
      ['Warning', 'Conflict', MESSAGE],
    ]);
    // Again: no new write, no new event.
    await h.reconciler().reconcile(CR_NAME);
    expect(h.kube.writes).toEqual([`status ${CR_NAME}`]);
    expect(h.events).toHaveLength(2);

    // The other controller lets go: deployed, Conflict resolved.
    await h.kube.delete({
      ...RESOURCES.serviceAccount,
      namespace: TEST_NAMESPACE,
      name: NAMES.controllerServiceAccount,
    });
    await h.reconciler().reconcile(CR_NAME);
    expect(getCondition(h.cr().status?.conditions, 'Conflict')).toMatchObject({ status: 'False', reason: 'Resolved' });
    expect(h.object('serviceAccount', NAMES.controllerServiceAccount)?.metadata.ownerReferences?.[0]?.uid).toBe(
      OLDER_UID,
    );
  });

  it('are refused also when they appear between the ownership check and the apply (422 path)', async () => {
    const h = harness();
    h.putCr();
    // The DaemonSet is read as absent, then created by someone else with another selector.
    const ds = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: {
        name: NAMES.nodeDaemonSet,
        namespace: TEST_NAMESPACE,
        ownerReferences: foreign.metadata.ownerReferences,
      },
      spec: { selector: { matchLabels: { app: 'x' } } },
    };
    const original = h.kube.apply.bind(h.kube);
    let injected = false;
    h.kube.apply = async <T extends KubeObject>(object: T): Promise<T> => {
      if (object.kind === 'DaemonSet' && !injected) {
        injected = true;
        h.kube.put(ds as KubeObject);
      }
      return original(object);
    };
    await expect(h.reconciler().reconcile(CR_NAME)).resolves.toEqual({ requeueAfterMs: 60_000 });
    expect(getCondition(h.cr().status?.conditions, 'Conflict')).toMatchObject({
      status: 'True',
      reason: 'OwnedByOtherController',
      message:
        'DaemonSet pmem-csi/pmem-csi-intel-com-node is controlled by ReplicaSet "someone-else" (apps/v1, uid rs-1); ' +
        'this deployment writes nothing while it is: delete that object or its controller, or recreate this deployment under another name',
    });
    expect(h.kube.writes.filter((w) => w.includes('DaemonSet'))).toEqual([apply('DaemonSet', NAMES.nodeDaemonSet)]);
    expect((h.object('daemonSet', NAMES.nodeDaemonSet) as LooseObject)['spec']).toEqual({
      selector: { matchLabels: { app: 'x' } },
    });
  });
});

describe('the controller Deployment rolls out with Recreate', () => {
  // What operator versions before Recreate built: no strategy, so the apiserver defaulted RollingUpdate.
  const withoutStrategy: readonly ObjectBuilder[] = BUILDERS.map((b) =>
    b.id !== 'controller-deployment'
      ? b
      : {
          ...b,
          build: (cr, ctx) => {
            const built = b.build(cr, ctx) as (KubeObject & { spec: Record<string, unknown> }) | null;
            if (built === null) return null;
            const { strategy: _strategy, ...spec } = built.spec;
            return { ...built, spec };
          },
        },
  );
  const strategy = (h: Harness): V1Deployment['spec'] =>
    h.object<V1Deployment>('deployment', NAMES.controllerDeployment)?.spec;

  it('is built with strategy Recreate', async () => {
    const h = harness();
    h.putCr();
    await h.reconciler().reconcile(CR_NAME);
    expect(strategy(h)?.strategy).toEqual({ type: 'Recreate' });
  });

  it('switches a Deployment of an older version in place: merge patch first (server-side apply cannot drop the defaulted rollingUpdate)', async () => {
    const h = harness();
    h.putCr();
    await h.reconciler({ version: 'A', builders: withoutStrategy }).reconcile(CR_NAME);
    expect(strategy(h)?.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' },
    });
    const uid = h.object('deployment', NAMES.controllerDeployment)?.metadata.uid;

    // Without the patch the apiserver refuses Recreate next to the unowned default.
    const noPatch = BUILDERS.map(({ prepatch: _p, ...b }) => b);
    await expect(h.reconciler({ version: 'B', builders: noPatch }).reconcile(CR_NAME)).rejects.toThrow(
      'Deployment pmem-csi/pmem-csi-intel-com-controller: Deployment.apps "pmem-csi-intel-com-controller" is invalid: spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is \'Recreate\'',
    );

    const writesBefore = h.kube.writes.length;
    await h.reconciler({ version: 'B' }).reconcile(CR_NAME);
    expect(h.kube.writes.slice(writesBefore).filter((w) => w.includes(' Deployment '))).toEqual([
      `patch Deployment ${TEST_NAMESPACE}/${NAMES.controllerDeployment}`,
      apply('Deployment', NAMES.controllerDeployment),
    ]);
    expect(strategy(h)?.strategy).toEqual({ type: 'Recreate' });
    expect(h.object('deployment', NAMES.controllerDeployment)?.metadata.uid).toBe(uid);
    expect(getCondition(h.cr().status?.conditions, 'DriverDeployed')).toMatchObject({ status: 'True' });
  });
});
