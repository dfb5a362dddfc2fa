// Cluster tier, issue 31 item 3: a cluster that ran the Go operator of PMEM-CSI v1.x switches to
// this operator. Against a real apiserver, with the Go operator's CRD first: two PmemCSIDeployments
// as Go users wrote them — A in the accepted form (mutatePods Try, controllerTLSSecret "",
// schedulerNodePort 0), B in the refused form (its scheduler extender and pod webhook: a TLS Secret,
// mutatePods Always, schedulerNodePort 32000) on another node — their status as the Go operator
// wrote it, and every object the Go operator made for them (__fixtures__/go-operator-v1.ts: its
// names, labels, selectors, owner references, commands and args), whose node pods kwok runs; a
// PersistentVolume of A's driver, bound. Then our CRD replaces the Go one and our operator starts
// with the RBAC of deploy/kustomize/operator (its ServiceAccount's token). Checked: A's status and
// events (GoOperatorStatusConverted, GoOperatorFieldsAccepted, GoOperatorObjectsTakenOver naming
// what was adopted, replaced, removed), A's objects (ours with our labels; the Go-only ones gone;
// the CSIDriver and the RBAC changed in place, same uid), B refused naming each field with nothing
// of B written and its Go objects untouched, B taken over once its fields are fixed, a watch of
// every pod proving that no node ever had a Go node driver pod and one of ours at once, the volume
// bound throughout, nothing of ours beyond the expected objects, the user's TLS Secret untouched,
// and everything gone with the CRs. The Go webhook of B (failurePolicy Fail) has nobody serving it
// here (kwok runs no containers), so the driver namespace carries the label its selector skips;
// in a real cluster the Go controller answers it until the takeover removes the registration.
import { createCa, createLeaf } from '@pmem-csi/runtime';
import { KIND, deploymentObjectNames } from '@pmem-csi/api';
import { DRIVER_NAMESPACE, serviceAccountKubeconfig, startOperator, type OperatorRun } from './components.js';
import { createCluster, ensureNamespace, printTimings, type KwokCluster } from './harness.js';
import { describeRef, readYamlObjects, refOf, statusOf, type KubeObject, type Ref } from './kube.js';
import { tail } from './processes.js';
import { join } from 'node:path';
import {
  crRef,
  expectedObjects,
  installCrd,
  waitCrdEstablished,
  ownedSelector,
  waitStatus,
  type PmemDeployment,
} from './pmem-deployment.js';
import { REPO_ROOT } from './components.js';
import { sleep, waitFor } from './wait.js';
import {
  goCustomResource,
  goOnlyObjectNames,
  goOperatorCrd,
  goOperatorObjects,
  goStatus,
  type GoSpec,
} from './__fixtures__/go-operator-v1.js';
import { PodTimeline } from './pod-timeline.js';

const A = 'pmem-csi.intel.com';
const B = 'pmem-csi-direct.example.org';
const OPERATOR_NAMESPACE = 'pmem-csi-operator';
const TLS_SECRET = 'pmem-csi-webhooks';
const SPEC_A: GoSpec = { deviceMode: 'lvm', mutatePods: 'Try', controllerTLSSecret: '', schedulerNodePort: 0 };
const SPEC_B: GoSpec = {
  deviceMode: 'direct',
  nodeSelector: { storage: 'pmem-direct' },
  controllerTLSSecret: TLS_SECRET,
  mutatePods: 'Always',
  schedulerNodePort: 32000,
};
const OPERATOR_VERSION = '0.1.0';
const TERMINATION_MS = 3000;
const HOLD = 'e2e.pmem-csi.intel.com/hold-termination';
const timings: Record<string, number> = {};

interface Event extends KubeObject {
  reason?: string;
  type?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string; uid?: string };
}

/** "Kind name" of a ref, as goOnlyObjectNames gives them. */
const kindName = (o: KubeObject | Ref): string =>
  'metadata' in o ? `${o.kind} ${o.metadata.name}` : `${o.kind} ${o.name}`;

/** Running as this operator reports it: DriverDeployed True (AllObjectsApplied) as well. */
const runningByUs = (c: PmemDeployment): boolean =>
  c.status?.phase === 'Running' && condition(c, 'DriverDeployed')?.reason === 'AllObjectsApplied';

describe('cluster: taking over from the Go operator (PMEM-CSI v1.x)', () => {
  let cluster: KwokCluster;
  let operator: OperatorRun | undefined;
  let timeline: PodTimeline | undefined;
  let holder: { stop(): Promise<number> } | undefined;
  /** Every Go object as created, by "Kind namespace/name". */
  const goObjects = new Map<string, KubeObject>();
  const crs = new Map<string, KubeObject>();
  let tlsSecret: KubeObject;
  let pv: KubeObject;
  const operatorLog = (): string => `operator log:\n${tail(operator?.process.log() ?? '', 25)}`;

  beforeAll(async () => {
    const started = Date.now();
    cluster = await createCluster({ suite: 'go-takeover' });
    const { kube } = cluster;
    timings['cluster create'] = cluster.timings.createMs;
    // B's node: another value of the same key (the Go docs: two installations on different nodes).
    await kube.merge({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: cluster.nodes[2] ?? '', labels: { storage: 'pmem-direct' } },
    });
    await ensureNamespace(kube, DRIVER_NAMESPACE);
    await kube.merge({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: DRIVER_NAMESPACE, labels: { 'pmem-csi.intel.com/webhook': 'ignore' } },
    });
    await ensureNamespace(kube, OPERATOR_NAMESPACE);

    // What the Go operator's users had: its CRD, their CRs, the objects it made, its status.
    await kube.apply(goOperatorCrd());
    await waitCrdEstablished(cluster.kube, 'the Go CRD');
    const ca = await createCa({ commonName: 'pmem-csi webhooks CA', validityDays: 30, keyBits: 2048 });
    const leaf = await createLeaf({
      ca,
      dnsName: `${B.replaceAll('.', '-')}-scheduler.${DRIVER_NAMESPACE}.svc`,
      validityDays: 30,
      keyBits: 2048,
    });
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    tlsSecret = await kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: TLS_SECRET, namespace: DRIVER_NAMESPACE },
      type: 'kubernetes.io/tls',
      data: { 'ca.crt': b64(ca.certPem), 'tls.crt': b64(leaf.certPem), 'tls.key': b64(leaf.keyPem) },
    } as KubeObject);
    for (const [name, spec] of [
      [A, SPEC_A],
      [B, SPEC_B],
    ] as const) {
      const cr = await kube.create(goCustomResource(name, spec));
      crs.set(name, cr);
      const objects = goOperatorObjects({
        crName: name,
        crUid: cr.metadata.uid ?? '',
        namespace: DRIVER_NAMESPACE,
        spec,
        ...(spec.controllerTLSSecret ? { caBundle: b64(ca.certPem) } : {}),
      });
      for (const o of objects) goObjects.set(describeRef(refOf(o)), await kube.create(o));
    }
    // A volume of A's driver as the Go driver provisioned it, bound to a claim.
    pv = await kube.create({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-go-volume' },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'pmem-csi-sc-ext4',
        csi: {
          driver: A,
          volumeHandle: 'pvc-go-7c2ea0d6f01a8ad8b3f0e4e6f1c2a7d1c6b5e2f0a9d8c7b6a5f4e3d2',
          fsType: 'ext4',
        },
        claimRef: { namespace: 'default', name: 'go-claim' },
      },
    } as KubeObject);
    await kube.create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'go-claim', namespace: 'default' },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'pmem-csi-sc-ext4',
        volumeName: pv.metadata.name,
        resources: { requests: { storage: '1Gi' } },
      },
    } as KubeObject);
    await waitFor(
      'the Go volume to be Bound',
      async () => ((await phaseOf(cluster, pv)) === 'Bound' ? true : undefined),
      { timeoutMs: 60_000 },
    );
    // The Go node driver runs: one pod per selected node (kwok), and its controller pod.
    await waitFor(
      'the Go node driver pods of A (2) and B (1) to run',
      async () =>
        (await goNodePods(cluster, A)).length === 2 && (await goNodePods(cluster, B)).length === 1 ? true : undefined,
      { timeoutMs: 90_000 },
    );
    for (const name of [A, B])
      await kube.request('PATCH', `/apis/pmem-csi.intel.com/v1beta1/pmemcsideployments/${name}/status`, {
        body: { status: goStatus(new Date(), name === A ? 2 : 1) },
        contentType: 'application/merge-patch+json',
      });
    timings['Go deployment built'] = Date.now() - started;
  }, 300_000);

  afterAll(async () => {
    timeline?.stop();
    await holder?.stop();
    await operator?.stop().catch(() => undefined);
    await cluster?.delete();
    printTimings('go-takeover', timings);
  }, 120_000);

  it('our CRD replaces the Go one and keeps every field a Go user wrote', async () => {
    const { kube } = cluster;
    await installCrd(kube);
    const a = await kube.must<PmemDeployment>(crRef(A));
    const b = await kube.must<PmemDeployment>(crRef(B));
    // Our CRD's defaults come with the read; the Go fields are kept, not pruned.
    expect(a.spec).toMatchObject({
      deviceMode: 'lvm',
      mutatePods: 'Try',
      controllerTLSSecret: '',
      schedulerNodePort: 0,
    });
    expect(b.spec).toMatchObject({ controllerTLSSecret: TLS_SECRET, mutatePods: 'Always', schedulerNodePort: 32000 });
    // The Go status as our schema serves it: its condition without lastTransitionTime and message.
    expect(a.status?.conditions?.[0]).toMatchObject({
      type: 'DriverDeployed',
      reason: 'Driver deployed successfully.',
    });
    expect(a.status?.conditions?.[0]?.lastTransitionTime).toBeUndefined();
  }, 60_000);

  it('starts our operator with its own RBAC; A is taken over and Running, B refused', async () => {
    const started = Date.now();
    const { kube } = cluster;
    timeline = await PodTimeline.start(kube, DRIVER_NAMESPACE);
    // A node driver pod takes a while to stop on a real node (grace period, unmounts); kwok would
    // remove it at once. A finalizer holds each Go node pod for TERMINATION_MS after its deletion.
    holder = holdTermination(cluster, TERMINATION_MS);
    await waitFor('the hold on every Go node driver pod', async () => {
      const pods = await kube.list('v1', 'Pod', {
        namespace: DRIVER_NAMESPACE,
        labelSelector: 'app.kubernetes.io/name=pmem-csi-node',
      });
      return pods.length === 3 && pods.every((p) => p.metadata.finalizers?.includes(HOLD)) ? true : undefined;
    });
    const rbac = readYamlObjects(join(REPO_ROOT, 'deploy/kustomize/operator/operator.yaml')).filter(
      (o) => o.kind !== 'Deployment',
    );
    for (const o of rbac) await kube.apply(o);
    const kubeconfig = await serviceAccountKubeconfig(cluster, kube, OPERATOR_NAMESPACE, 'pmem-csi-operator');
    operator = await startOperator(cluster, {
      version: OPERATOR_VERSION,
      driverImage: 'registry.example.org/pmem-csi-driver:v0.1.0',
      kubeconfig,
    });
    const a = await waitStatus(kube, A, {
      what: 'phase Running, by this operator (the Go status said Running too)',
      ok: runningByUs,
      timeoutMs: 180_000,
    }).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n${operatorLog()}`);
    });
    timings['operator start to A Running'] = Date.now() - started;
    expect(condition(a, 'DriverDeployed')).toMatchObject({ status: 'True', reason: 'AllObjectsApplied' });
    expect(condition(a, 'GoOperatorFields')).toMatchObject({ status: 'True', reason: 'Accepted' });
    expect(condition(a, 'GoOperatorFields')?.message).toMatch(
      /^spec\.controllerTLSSecret: "" accepted: .*spec\.mutatePods: "Try" accepted: .*spec\.schedulerNodePort: 0 accepted: /,
    );
    expect(
      a.status?.conditions?.every(
        (c) => typeof c.lastTransitionTime === 'string' && c.reason !== 'Driver deployed successfully.',
      ),
    ).toBe(true);

    const b = await waitStatus(kube, B, {
      what: 'refused (GoOperatorFields Refused)',
      ok: (c) => condition(c, 'GoOperatorFields')?.reason === 'Refused',
    });
    expect(b.status?.phase).toBe('Failed');
    expect(condition(b, 'DriverDeployed')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    const refusal = condition(b, 'GoOperatorFields')?.message ?? '';
    expect(refusal).toContain(
      `spec.controllerTLSSecret: unsupported value "${TLS_SECRET}"; allowed values: "" or unset (this driver has no scheduler extender and no pod webhook`,
    );
    expect(refusal).toContain('spec.mutatePods: unsupported value "Always"; allowed values: Try, Never or unset');
    expect(refusal).toContain('spec.schedulerNodePort: unsupported value 32000; allowed values: 0 or unset');
    expect(refusal).toContain('a Go driver still deployed keeps running');

    const eventsA = await eventsOf(cluster, A, [
      'GoOperatorStatusConverted',
      'GoOperatorFieldsAccepted',
      'GoOperatorObjectsTakenOver',
      'Running',
    ]);
    const takeover = eventsA.find((e) => e.reason === 'GoOperatorObjectsTakenOver')?.message ?? '';
    process.stdout.write(`\nA's takeover event: ${takeover}\n`);
    expect(takeover).toMatch(
      /^took over the objects the Go operator \(PMEM-CSI v1\.x\) made for this deployment: adopted in place \d+ \(/,
    );
    // Every Go-only object of A named as removed (A had no webhook registration: no controllerTLSSecret).
    const removed = goOnlyCreated(goObjects, A).map((o) => describeRef(refOf(o)));
    expect(removed).toHaveLength(goOnlyObjectNames(A).length - 1);
    expect(takeover).toContain(
      `removed (Go driver only: scheduler extender, pod webhook, raw namespace conversion) ${removed.length} (`,
    );
    for (const what of removed) expect(takeover).toContain(what);
    expect(eventsA.find((e) => e.reason === 'GoOperatorStatusConverted')?.message).toContain(
      'DriverDeployed=True ("Driver deployed successfully.")',
    );
    const eventsB = await eventsOf(cluster, B, ['GoOperatorFieldsRefused', 'Failed']);
    expect(eventsB.filter((e) => e.type === 'Warning').map((e) => e.reason)).toEqual(
      expect.arrayContaining(['GoOperatorFieldsRefused', 'Failed']),
    );
  }, 240_000);

  it("A's objects: ours with our labels, the Go-only ones gone, CSIDriver and RBAC changed in place", async () => {
    const { kube } = cluster;
    const expected = expectedObjects(A);
    for (const ref of expected) {
      const o = await kube.must(ref);
      expect({ object: describeRef(ref), managedBy: o.metadata.labels?.['app.kubernetes.io/managed-by'] }).toEqual({
        object: describeRef(ref),
        managedBy: 'pmem-csi-operator',
      });
    }
    for (const name of goOnlyObjectNames(A))
      expect({ name, left: await goObjectExists(cluster, goObjects, name) }).toEqual({ name, left: false });
    const names = deploymentObjectNames(A);
    const same = async (ref: Ref): Promise<boolean> =>
      (await kube.must(ref)).metadata.uid === goObjects.get(describeRef(ref))?.metadata.uid;
    const inPlace: Ref[] = [
      { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', name: names.csiDriver },
      { apiVersion: 'v1', kind: 'ServiceAccount', name: names.controllerServiceAccount, namespace: DRIVER_NAMESPACE },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: names.provisionerClusterRole },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        name: names.provisionerClusterRoleBinding,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        name: names.provisionerRole,
        namespace: DRIVER_NAMESPACE,
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        name: names.provisionerRoleBinding,
        namespace: DRIVER_NAMESPACE,
      },
    ];
    for (const ref of inPlace)
      expect({ object: describeRef(ref), sameUid: await same(ref) }).toEqual({
        object: describeRef(ref),
        sameUid: true,
      });
    const csiDriver = await kube.must<KubeObject & { spec?: Record<string, unknown> }>(inPlace[0] as Ref);
    expect(csiDriver.spec).toMatchObject({
      attachRequired: false,
      podInfoOnMount: true,
      storageCapacity: true,
      volumeLifecycleModes: ['Persistent', 'Ephemeral'],
    });
    // Replaced: the DaemonSet (another selector) and the registry Service (headless now).
    const ds = await kube.must<KubeObject & { spec: { selector: { matchLabels: Record<string, string> } } }>({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      name: names.nodeDaemonSet,
      namespace: DRIVER_NAMESPACE,
    });
    expect(ds.spec.selector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'pmem-csi',
      'app.kubernetes.io/instance': A,
      'app.kubernetes.io/component': 'node',
    });
    expect(ds.metadata.annotations?.['pmem-csi.intel.com/device-mode']).toBe('lvm');
    const metrics = await kube.must<KubeObject & { spec: { type: string; ports: Array<{ nodePort?: number }> } }>({
      apiVersion: 'v1',
      kind: 'Service',
      name: names.metricsService,
      namespace: DRIVER_NAMESPACE,
    });
    expect({ type: metrics.spec.type, nodePort: metrics.spec.ports[0]?.nodePort }).toEqual({
      type: 'ClusterIP',
      nodePort: undefined,
    });
    const metricsInPlace = await same({
      apiVersion: 'v1',
      kind: 'Service',
      name: names.metricsService,
      namespace: DRIVER_NAMESPACE,
    });
    process.stdout.write(
      `\nthe Go metrics Service (NodePort) became ours (ClusterIP) ${metricsInPlace ? 'in place (same uid)' : 'by a recreate'}\n`,
    );
    // Nothing of ours beyond the expected objects; the user's Secret and the volume untouched.
    expect(await ownedObjects(cluster, A)).toEqual(expected.map(kindName).sort());
    expect((await kube.must(refOf(tlsSecret))).metadata.resourceVersion).toBe(tlsSecret.metadata.resourceVersion);
    expect({ uid: (await kube.must(refOf(pv))).metadata.uid, phase: await phaseOf(cluster, pv) }).toEqual({
      uid: pv.metadata.uid,
      phase: 'Bound',
    });
  }, 120_000);

  it('B, refused: nothing of ours written, every Go object of B untouched and its node pod running', async () => {
    expect(await ownedObjects(cluster, B)).toEqual([]);
    // Controllers update the workloads' status; what counts is that our operator wrote nothing.
    for (const [what, o] of goObjects) {
      if (!o.metadata.ownerReferences?.some((r) => r.name === B)) continue;
      const live = await cluster.kube.get(refOf(o));
      const fields = (live?.metadata as { managedFields?: Array<{ manager?: string }> } | undefined)?.managedFields;
      const managers = (fields ?? []).map((f) => f.manager);
      expect({
        what,
        uid: live?.metadata.uid,
        labels: live?.metadata.labels,
        ours: managers.includes('pmem-csi-operator'),
      }).toEqual({
        what,
        uid: o.metadata.uid,
        labels: o.metadata.labels,
        ours: false,
      });
    }
    expect(await goNodePods(cluster, B)).toHaveLength(1);
  }, 60_000);

  it('B is taken over once its Go-only fields are fixed: its webhook registration and NodePort Service removed', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.merge({
      apiVersion: 'pmem-csi.intel.com/v1beta1',
      kind: KIND,
      metadata: { name: B },
      spec: { controllerTLSSecret: null, schedulerNodePort: null, mutatePods: 'Never' },
    } as unknown as KubeObject);
    const b = await waitStatus(kube, B, {
      what: 'phase Running after the fix',
      ok: runningByUs,
      timeoutMs: 180_000,
    }).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n${operatorLog()}`);
    });
    timings['B fixed to Running'] = Date.now() - started;
    expect(condition(b, 'GoOperatorFields')).toMatchObject({ status: 'True', reason: 'Accepted' });
    for (const name of goOnlyObjectNames(B))
      expect({ name, left: await goObjectExists(cluster, goObjects, name) }).toEqual({ name, left: false });
    const ds = await kube.must({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      name: deploymentObjectNames(B).nodeDaemonSet,
      namespace: DRIVER_NAMESPACE,
    });
    expect(ds.metadata.annotations?.['pmem-csi.intel.com/device-mode']).toBe('direct');
    expect(await ownedObjects(cluster, B)).toEqual(expectedObjects(B).map(kindName).sort());
    expect(await eventsOf(cluster, B, ['GoOperatorObjectsTakenOver', 'GoOperatorFieldsAccepted'])).toHaveLength(2);
    // The user's TLS Secret is the user's: never touched.
    expect((await kube.must(refOf(tlsSecret))).metadata.resourceVersion).toBe(tlsSecret.metadata.resourceVersion);
  }, 240_000);

  it('no node ever ran a Go node driver pod and one of ours at once; each node got ours', async () => {
    const t = timeline;
    if (t === undefined) throw new Error('the pod watch did not start');
    const held = (await holder?.stop()) ?? 0;
    const summary = t.summary();
    process.stdout.write(`\npod timeline: ${summary.events} watch events; per node: ${summary.perNode.join('; ')}\n`);
    expect(t.failure()).toBeUndefined();
    expect(summary.overlaps).toEqual([]);
    expect(held).toBe(3); // every Go node pod (A: 2, B: 1) was held for a while as it stopped
    expect([...summary.nodesWithOurs].sort()).toEqual([...cluster.nodes].sort());
  });

  it('deleting the CRs removes every driver object; the volume stays', async () => {
    const { kube } = cluster;
    for (const name of [A, B]) await kube.delete(crRef(name));
    const all = [...expectedObjects(A), ...expectedObjects(B)];
    await waitFor(
      'the garbage collector to remove every driver object',
      async () => {
        for (const ref of all) if ((await kube.get(ref)) !== undefined) return undefined;
        return true;
      },
      { timeoutMs: 120_000 },
    );
    expect(await phaseOf(cluster, pv)).toBe('Bound');
  }, 180_000);
});

/**
 * Put a finalizer on every Go node driver pod and remove it `ms` after the pod's deletion began,
 * as a node that takes that long to stop it; stop() ends it and says how many pods were held.
 */
function holdTermination(cluster: KwokCluster, ms: number): { stop(): Promise<number> } {
  const deleting = new Map<string, number>();
  const released = new Set<string>();
  let running = true;
  const loop = (async (): Promise<void> => {
    while (running) {
      const pods = await cluster.kube.list('v1', 'Pod', {
        namespace: DRIVER_NAMESPACE,
        labelSelector: 'app.kubernetes.io/name=pmem-csi-node',
      });
      for (const pod of pods)
        await holdOne(cluster, pod, { ms, deleting, released }).catch((e: unknown) => {
          if (statusOf(e) !== 404) throw e; // gone meanwhile
        });
      await sleep(100);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return released.size;
    },
  };
}

async function holdOne(
  cluster: KwokCluster,
  pod: KubeObject,
  state: { ms: number; deleting: Map<string, number>; released: Set<string> },
): Promise<void> {
  const name = pod.metadata.name;
  const finalizers = pod.metadata.finalizers ?? [];
  const patch = (value: string[] | null): Promise<KubeObject> =>
    cluster.kube.merge({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: DRIVER_NAMESPACE, finalizers: value },
    } as unknown as KubeObject);
  if (pod.metadata.deletionTimestamp === undefined) {
    if (!finalizers.includes(HOLD)) await patch([...finalizers, HOLD]);
    return;
  }
  if (!finalizers.includes(HOLD)) return;
  const since = state.deleting.get(name) ?? Date.now();
  state.deleting.set(name, since);
  if (Date.now() - since < state.ms) return;
  await patch(finalizers.filter((f) => f !== HOLD));
  state.released.add(name);
}

/** A condition of a CR's status. */
function condition(cr: PmemDeployment, type: string): { status: string; reason: string; message: string } | undefined {
  return cr.status?.conditions?.find((c) => c.type === type);
}

async function phaseOf(cluster: KwokCluster, pv: KubeObject): Promise<string | undefined> {
  return (await cluster.kube.get<KubeObject & { status?: { phase?: string } }>(refOf(pv)))?.status?.phase;
}

/** The Go node driver pods of CR `name` that run. */
async function goNodePods(cluster: KwokCluster, name: string): Promise<KubeObject[]> {
  const pods = await cluster.kube.list<KubeObject & { status?: { phase?: string } }>('v1', 'Pod', {
    namespace: DRIVER_NAMESPACE,
    labelSelector: `app.kubernetes.io/name=pmem-csi-node,app.kubernetes.io/instance=${name}`,
  });
  return pods.filter((p) => p.status?.phase === 'Running');
}

/** The Go-only objects of CR `name` as created (those of goOnlyObjectNames that the fixture made). */
function goOnlyCreated(goObjects: ReadonlyMap<string, KubeObject>, name: string): KubeObject[] {
  const names = goOnlyObjectNames(name);
  return [...goObjects.values()].filter(
    (o) => names.includes(kindName(o)) && o.metadata.ownerReferences?.[0]?.name === name,
  );
}

/** Whether the Go object "Kind name" still exists (its namespace from the object as created). */
async function goObjectExists(
  cluster: KwokCluster,
  goObjects: ReadonlyMap<string, KubeObject>,
  name: string,
): Promise<boolean> {
  const created = [...goObjects.values()].find((o) => kindName(o) === name);
  if (created === undefined) return false; // not made for this CR (B's webhook registration only with its TLS Secret)
  const live = await cluster.kube.get(refOf(created));
  return live !== undefined && live.metadata.uid === created.metadata.uid;
}

/** "Kind name" of every object labelled as ours for CR `name`, of every kind any operator made. */
async function ownedObjects(cluster: KwokCluster, name: string): Promise<string[]> {
  const kinds: Array<[string, string]> = [
    ['v1', 'Secret'],
    ['v1', 'ServiceAccount'],
    ['v1', 'Service'],
    ['rbac.authorization.k8s.io/v1', 'Role'],
    ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
    ['storage.k8s.io/v1', 'CSIDriver'],
    ['apps/v1', 'Deployment'],
    ['apps/v1', 'DaemonSet'],
    ['apps/v1', 'StatefulSet'],
    ['policy/v1', 'PodDisruptionBudget'],
    ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'],
  ];
  const found: string[] = [];
  for (const [apiVersion, kind] of kinds)
    for (const o of await cluster.kube.list(apiVersion, kind, { labelSelector: ownedSelector(name) }))
      found.push(kindName(o));
  return found.sort();
}

/** The events about CR `name` once every reason in `reasons` was recorded. */
async function eventsOf(cluster: KwokCluster, name: string, reasons: readonly string[]): Promise<Event[]> {
  let seen: string[] = [];
  return waitFor(
    `events ${reasons.join(', ')} about ${name}`,
    async () => {
      const list = await cluster.kube.list<Event>('v1', 'Event', { namespace: 'default' });
      const ours = list.filter((e) => e.involvedObject?.kind === KIND && e.involvedObject.name === name);
      seen = ours.map((e) => `${e.type ?? ''} ${e.reason ?? ''}`);
      return reasons.every((r) => ours.some((e) => e.reason === r))
        ? ours.filter((e) => reasons.includes(e.reason ?? ''))
        : undefined;
    },
    { timeoutMs: 60_000, describe: () => `seen: ${seen.join(', ')}` },
  );
}
