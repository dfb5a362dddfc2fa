// Cluster tier, operator: the real operator binary (host process) against a real control plane
// with simulated nodes. A PmemCSIDeployment becomes every driver object, the status follows the
// (simulated) pods to Running, deleted or changed objects are repaired, user certificates that fail
// verification deploy nothing, and deleting the CR lets the garbage collector remove everything.
import { X509Certificate } from 'node:crypto';
import { API_GROUP_VERSION, KIND, NODE_CONTROLLER_SAN, REGISTRY_SAN, deploymentObjectNames } from '@pmem-csi/api';
import { createCa, createLeaf } from '@pmem-csi/runtime';
import { OPERATOR_VERSION } from '@pmem-csi/operator';
import { DRIVER_NAMESPACE, startOperator, type OperatorRun } from './components.js';
import { createCluster, printTimings, ensureNamespace, type KwokCluster } from './harness.js';
import { describeRef, type KubeObject } from './kube.js';
import { tail } from './processes.js';
import {
  conditionIs,
  crRef,
  existing,
  expectedObjects,
  installCrd,
  ownedSelector,
  pmemDeployment,
  VERSION_ANNOTATION,
  waitStatus,
  workloadRefs,
} from './pmem-deployment.js';
import { waitFor } from './wait.js';

const CR = 'pmem-csi.intel.com';
const IMAGE = `registry.example.org/pmem-csi-driver:v${OPERATOR_VERSION}`;
const timings: Record<string, number> = {};

interface Workload extends KubeObject {
  spec: {
    replicas?: number;
    template: {
      spec: {
        nodeSelector?: Record<string, string>;
        containers: Array<{ name: string; image: string; args?: string[] }>;
      };
    };
  };
  status?: { readyReplicas?: number; numberReady?: number; desiredNumberScheduled?: number };
}

const b64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString('utf8');

describe('cluster: operator', () => {
  let cluster: KwokCluster;
  let operator: OperatorRun;
  const operatorLog = (): string => `operator log:\n${tail(operator.process.log(), 15)}`;

  beforeAll(async () => {
    const started = Date.now();
    cluster = await createCluster({ suite: 'op' });
    timings['cluster create (kwokctl until API)'] = cluster.timings.createMs;
    timings['cluster ready (nodes Ready)'] = cluster.timings.nodesReadyMs;
    await installCrd(cluster.kube);
    await ensureNamespace(cluster.kube, DRIVER_NAMESPACE);
    operator = await startOperator(cluster, { version: OPERATOR_VERSION, driverImage: IMAGE });
    timings['set-up total'] = Date.now() - started;
  }, 300_000);

  afterAll(async () => {
    await operator?.stop().catch(() => undefined);
    await cluster?.delete();
    printTimings('operator', timings);
  }, 120_000);

  it('deploys every driver object for a PmemCSIDeployment, owned by it and labelled as ours', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.apply(pmemDeployment(CR, { deviceMode: 'lvm', nodeSelector: { storage: 'pmem' } }));
    const cr = await waitStatus(kube, CR, {
      what: 'DriverDeployed=True',
      ok: (c) => conditionIs(c, 'DriverDeployed', 'True'),
    });
    const refs = expectedObjects(CR);
    const found = await existing(kube, refs);
    expect(refs.filter((r) => !found.has(describeRef(r))).map(describeRef)).toEqual([]);
    for (const [what, o] of found) {
      expect({ what, owners: o.metadata.ownerReferences }).toEqual({
        what,
        owners: [
          {
            apiVersion: API_GROUP_VERSION,
            kind: KIND,
            name: CR,
            uid: cr.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      });
      expect({ what, version: o.metadata.annotations?.[VERSION_ANNOTATION] }).toEqual({
        what,
        version: OPERATOR_VERSION,
      });
    }
    // Exactly these, nothing else labelled as ours (the driver itself needs no ClusterRole).
    const kinds = [...new Set(refs.map((r) => `${r.apiVersion}|${r.kind}`))];
    const labelled: string[] = [];
    for (const k of kinds) {
      const [apiVersion = '', kind = ''] = k.split('|');
      const items = await kube.list(apiVersion, kind, { labelSelector: ownedSelector(CR) });
      labelled.push(
        ...items.map((o) =>
          describeRef({
            kind,
            name: o.metadata.name,
            apiVersion,
            ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }),
          }),
        ),
      );
    }
    expect(labelled.sort()).toEqual(refs.map(describeRef).sort());
    const csiDriver = found.get(`CSIDriver ${CR}`) as KubeObject & { spec: Record<string, unknown> };
    expect(csiDriver.spec).toMatchObject({ attachRequired: false, podInfoOnMount: true, storageCapacity: true });
    const ds = found.get(describeRef(workloadRefs(CR).daemonSet)) as Workload;
    expect(ds.spec.template.spec.nodeSelector).toEqual({ storage: 'pmem' });
    expect(ds.spec.template.spec.containers.map((c) => c.image)).toContain(IMAGE);
    timings['objects deployed'] = Date.now() - started;
  }, 180_000);

  it('issues certificates for the registry and node-controller identities from its own CA', async () => {
    const names = deploymentObjectNames(CR);
    const secret = async (name: string): Promise<Record<string, string>> =>
      (
        (await cluster.kube.must({
          apiVersion: 'v1',
          kind: 'Secret',
          name,
          namespace: DRIVER_NAMESPACE,
        })) as KubeObject & { data: Record<string, string> }
      ).data;
    const ca = new X509Certificate(b64((await secret(names.caSecret))['tls.crt']));
    expect(ca.ca).toBe(true);
    for (const [name, san] of [
      [names.registrySecret, REGISTRY_SAN],
      [names.nodeSecret, NODE_CONTROLLER_SAN],
    ] as const) {
      const data = await secret(name);
      const leaf = new X509Certificate(b64(data['tls.crt']));
      expect({ name, san: leaf.subjectAltName }).toEqual({ name, san: `DNS:${san}` });
      expect(leaf.verify(ca.publicKey)).toBe(true);
      expect(new X509Certificate(b64(data['ca.crt'])).fingerprint256).toBe(ca.fingerprint256);
      expect(b64(data['tls.key'])).toMatch(/-----BEGIN (RSA )?PRIVATE KEY-----/);
    }
  }, 60_000);

  it('reports Running once the simulated pods are ready, with conventional conditions and events', async () => {
    const started = Date.now();
    const { kube } = cluster;
    const cr = await waitStatus(kube, CR, {
      what: 'phase Running',
      ok: (c) => c.status?.phase === 'Running',
      timeoutMs: 120_000,
    });
    const status = cr.status ?? {};
    expect(status.observedGeneration).toBe(cr.metadata.generation);
    expect(status.driverComponents?.map((c) => [c.component, c.status, c.desired, c.ready])).toEqual([
      ['Controller', 'Ready', 1, 1],
      ['Node', 'Ready', cluster.nodes.length, cluster.nodes.length],
    ]);
    const conditions = status.conditions ?? [];
    expect(conditions.map((c) => [c.type, c.status, c.reason]).sort()).toEqual([
      ['CertsReady', 'True', 'OperatorIssued'],
      ['DriverDeployed', 'True', 'AllObjectsApplied'],
      ['NodesSelected', 'True', 'NodesMatch'],
    ]);
    for (const c of conditions) {
      expect(c.observedGeneration).toBe(cr.metadata.generation);
      expect(Number.isNaN(Date.parse(c.lastTransitionTime))).toBe(false);
      expect(c.reason).toMatch(/^[A-Z][A-Za-z]*$/);
    }
    // The workloads agree: every node matching storage=pmem runs a (simulated) node pod.
    const ds = await kube.must<Workload>(workloadRefs(CR).daemonSet);
    expect(ds.status).toMatchObject({
      desiredNumberScheduled: cluster.nodes.length,
      numberReady: cluster.nodes.length,
    });
    const pods = await kube.list<KubeObject & { spec: { nodeName?: string } }>('v1', 'Pod', {
      namespace: DRIVER_NAMESPACE,
      labelSelector: 'app.kubernetes.io/component=node',
    });
    expect(pods.map((p) => p.spec.nodeName).sort()).toEqual([...cluster.nodes].sort());
    const events = await waitFor(
      'events NewDeployment and Running about the CR',
      async () => {
        const list = await kube.list<
          KubeObject & {
            reason?: string;
            type?: string;
            involvedObject?: { kind?: string; name?: string; uid?: string };
          }
        >('v1', 'Event', { namespace: 'default' });
        const ours = list.filter((e) => e.involvedObject?.kind === KIND && e.involvedObject.name === CR);
        const reasons = ours.map((e) => e.reason);
        return reasons.includes('NewDeployment') && reasons.includes('Running') ? ours : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(events.every((e) => e.type === 'Normal' && e.involvedObject?.uid === cr.metadata.uid)).toBe(true);
    timings['phase Running'] = Date.now() - started;
  }, 180_000);

  it('heals: a deleted DaemonSet and Secret come back, a changed Deployment is restored', async () => {
    const started = Date.now();
    const { kube } = cluster;
    const { daemonSet, deployment } = workloadRefs(CR);
    const nodeSecret = {
      apiVersion: 'v1',
      kind: 'Secret',
      name: deploymentObjectNames(CR).nodeSecret,
      namespace: DRIVER_NAMESPACE,
    };
    const before = {
      ds: (await kube.must(daemonSet)).metadata.uid,
      secret: (await kube.must(nodeSecret)).metadata.uid,
    };
    await kube.delete(daemonSet);
    await kube.delete(nodeSecret);
    await waitFor(
      'the node DaemonSet and Secret to be recreated by the operator',
      async () => {
        const [ds, s] = [await kube.get(daemonSet), await kube.get(nodeSecret)];
        return ds !== undefined && s !== undefined && ds.metadata.uid !== before.ds && s.metadata.uid !== before.secret
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, describe: operatorLog },
    );
    // Someone scales the controller: the operator's spec wins.
    await kube.merge({
      apiVersion: deployment.apiVersion,
      kind: deployment.kind,
      metadata: { name: deployment.name, namespace: DRIVER_NAMESPACE },
      spec: { replicas: 3 },
    });
    await waitFor(
      'the operator to restore the controller Deployment to 1 replica',
      async () => ((await kube.must<Workload>(deployment)).spec.replicas === 1 ? true : undefined),
      { timeoutMs: 60_000, describe: operatorLog },
    );
    await waitStatus(kube, CR, {
      what: 'phase Running again',
      ok: (c) => c.status?.phase === 'Running' && conditionIs(c, 'DriverDeployed', 'True'),
      timeoutMs: 120_000,
    });
    timings['self-healing'] = Date.now() - started;
  }, 240_000);

  it('controller HA against the real API server: a ClusterIP registry Service of an older operator is recreated headless; 2 replicas add a PodDisruptionBudget and a rolling strategy; back to 1 removes both', async () => {
    const started = Date.now();
    const { kube } = cluster;
    const { deployment } = workloadRefs(CR);
    const names = deploymentObjectNames(CR);
    const registry = { apiVersion: 'v1', kind: 'Service', name: names.registryService, namespace: DRIVER_NAMESPACE };
    const pdb = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      name: names.controllerDisruptionBudget,
      namespace: DRIVER_NAMESPACE,
    };
    interface ServiceObject extends KubeObject {
      spec: { clusterIP?: string; publishNotReadyAddresses?: boolean; ports?: unknown[]; selector?: unknown };
    }

    // What an operator before issue 17 left: the same Service with an allocated ClusterIP. Made while
    // the operator is down (as during its upgrade), with the metadata the operator gave it.
    const headless = await kube.must<ServiceObject>(registry);
    expect(headless.spec.clusterIP).toBe('None');
    await operator.stop();
    await kube.delete(registry);
    await waitFor('the headless registry Service to be gone', async () =>
      (await kube.get(registry)) === undefined ? true : undefined,
    );
    const { labels, annotations, ownerReferences } = headless.metadata;
    const old = await kube.create<ServiceObject>({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: registry.name, namespace: DRIVER_NAMESPACE, labels, annotations, ownerReferences },
      spec: { type: 'ClusterIP', ports: headless.spec.ports, selector: headless.spec.selector },
    } as KubeObject);
    expect(old.spec.clusterIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    operator = await startOperator(cluster, { version: OPERATOR_VERSION, driverImage: IMAGE });
    const recreated = await waitFor(
      'the operator to replace the ClusterIP registry Service with a headless one',
      async () => {
        const s = await kube.get<ServiceObject>(registry);
        return s !== undefined && s.metadata.uid !== old.metadata.uid && s.spec.clusterIP === 'None' ? s : undefined;
      },
      { timeoutMs: 60_000, describe: operatorLog },
    );
    expect(recreated.spec.publishNotReadyAddresses).toBe(true);
    expect(recreated.metadata.ownerReferences?.map((o) => o.name)).toEqual([CR]);
    timings['ClusterIP Service recreated headless'] = Date.now() - started;

    // Two replicas: the apiserver takes the rolling strategy, minReadySeconds and the budget.
    await kube.merge(pmemDeployment(CR, { controllerReplicas: 2 }));
    interface HaDeployment extends Workload {
      spec: Workload['spec'] & {
        minReadySeconds?: number;
        strategy?: { type?: string; rollingUpdate?: { maxUnavailable?: number | string; maxSurge?: number | string } };
      };
    }
    const ha = await waitFor(
      'the controller Deployment with 2 replicas and its PodDisruptionBudget',
      async () => {
        const d = await kube.must<HaDeployment>(deployment);
        return d.spec.replicas === 2 && (await kube.get(pdb)) !== undefined ? d : undefined;
      },
      { timeoutMs: 60_000, describe: operatorLog },
    );
    expect(ha.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    expect(ha.spec.minReadySeconds).toBe(75);
    const budget = await kube.must<KubeObject & { spec: { minAvailable?: number; selector?: unknown } }>(pdb);
    expect(budget.spec.minAvailable).toBe(1);
    expect(budget.metadata.ownerReferences?.map((o) => o.name)).toEqual([CR]);
    const refs = expectedObjects(CR, DRIVER_NAMESPACE, { controllerReplicas: 2 });
    const found = await existing(kube, refs);
    expect(refs.filter((r) => !found.has(describeRef(r))).map(describeRef)).toEqual([]);
    const labelled = await kube.list('policy/v1', 'PodDisruptionBudget', { labelSelector: ownedSelector(CR) });
    expect(labelled.map((o) => o.metadata.name)).toEqual([pdb.name]);
    await waitStatus(kube, CR, {
      what: 'the Controller component Ready with 2 of 2 replicas',
      ok: (c) => {
        const ctl = c.status?.driverComponents?.find((x) => x.component === 'Controller');
        return ctl?.status === 'Ready' && ctl.desired === 2 && ctl.ready === 2;
      },
      timeoutMs: 120_000,
    });

    // Back to one: Recreate again (the apiserver refuses Recreate beside a rollingUpdate), no budget.
    await kube.merge(pmemDeployment(CR, { controllerReplicas: 1 }));
    const single = await waitFor(
      'the controller Deployment back at 1 replica, Recreate, without its PodDisruptionBudget',
      async () => {
        const d = await kube.must<HaDeployment>(deployment);
        return d.spec.replicas === 1 && d.spec.strategy?.type === 'Recreate' && (await kube.get(pdb)) === undefined
          ? d
          : undefined;
      },
      { timeoutMs: 60_000, describe: operatorLog },
    );
    expect(single.spec.strategy).toEqual({ type: 'Recreate' });
    expect(single.spec.minReadySeconds ?? 0).toBe(0);
    await waitStatus(kube, CR, {
      what: 'phase Running with 1 controller replica',
      ok: (c) =>
        c.status?.phase === 'Running' &&
        c.status.driverComponents?.find((x) => x.component === 'Controller')?.desired === 1,
      timeoutMs: 120_000,
    });
    timings['controller HA objects'] = Date.now() - started;
  }, 300_000);

  it('deploys nothing with user certificates that fail verification (registry leaf with the wrong SAN)', async () => {
    const started = Date.now();
    const { kube } = cluster;
    const name = 'bad-certs.example.com';
    const ca = await createCa({ commonName: 'e2e test CA', validityDays: 30, keyBits: 2048 });
    const wrong = await createLeaf({ ca, dnsName: 'not-the-registry', validityDays: 30, keyBits: 2048 });
    const node = await createLeaf({ ca, dnsName: NODE_CONTROLLER_SAN, validityDays: 30, keyBits: 2048 });
    await kube.apply(
      pmemDeployment(name, {
        caCert: ca.certPem,
        registryCert: wrong.certPem,
        registryKey: wrong.keyPem,
        nodeControllerCert: node.certPem,
        nodeControllerKey: node.keyPem,
      }),
    );
    const cr = await waitStatus(kube, name, {
      what: 'CertsVerified=False',
      ok: (c) => conditionIs(c, 'CertsVerified', 'False'),
    });
    expect(cr.status?.phase).toBe('Failed');
    const byType = new Map((cr.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(byType.get('CertsVerified')).toMatchObject({
      status: 'False',
      reason: 'HandshakeFailed',
      observedGeneration: cr.metadata.generation,
    });
    expect(byType.get('DriverDeployed')).toMatchObject({ status: 'False', reason: 'CertificatesInvalid' });
    expect(cr.status?.reason).toMatch(/^certificates in the spec are invalid: /);
    // Give a wrong operator time to deploy anything, then check that it did not.
    await new Promise((r) => setTimeout(r, 3000));
    const refs = expectedObjects(name);
    const found = await existing(kube, refs);
    expect([...found.keys()]).toEqual([]);
    const failed = await waitFor(
      'a Failed event about the bad-certs CR',
      async () => {
        const list = await kube.list<
          KubeObject & { reason?: string; type?: string; involvedObject?: { name?: string } }
        >('v1', 'Event', { namespace: 'default' });
        return list.find((e) => e.involvedObject?.name === name && e.reason === 'Failed');
      },
      { timeoutMs: 30_000 },
    );
    expect(failed.type).toBe('Warning');

    // Fixing the certificate makes the deployment proceed.
    const right = await createLeaf({ ca, dnsName: REGISTRY_SAN, validityDays: 30, keyBits: 2048 });
    await kube.merge({
      apiVersion: API_GROUP_VERSION,
      kind: KIND,
      metadata: { name },
      spec: { registryCert: right.certPem, registryKey: right.keyPem },
    });
    const fixed = await waitStatus(kube, name, {
      what: 'CertsVerified=True and DriverDeployed=True',
      ok: (c) => conditionIs(c, 'CertsVerified', 'True') && conditionIs(c, 'DriverDeployed', 'True'),
    });
    expect((fixed.status?.conditions ?? []).find((c) => c.type === 'CertsVerified')?.reason).toBe('HandshakeSucceeded');
    expect(await kube.get(workloadRefs(name).daemonSet)).toBeDefined();
    await kube.delete(crRef(name));
    timings['bad certificates'] = Date.now() - started;
  }, 180_000);

  it('leaves the cleanup of a deleted PmemCSIDeployment to the garbage collector (owner references)', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.delete(crRef(CR));
    const refs = expectedObjects(CR);
    await waitFor(
      'every object of the deleted CR to be garbage-collected',
      async () => ((await existing(kube, refs)).size === 0 ? true : undefined),
      {
        timeoutMs: 90_000,
        describe: async () => [...(await existing(kube, refs)).keys()].join(', '),
      },
    );
    expect(operator.process.exited()).toBeUndefined();
    timings['garbage collection'] = Date.now() - started;
  }, 120_000);
});
