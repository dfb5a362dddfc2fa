// Cluster tier, operator ownership and rollouts (issue 18), on a real control plane with simulated
// nodes and the apiserver's audit log as the witness of what the operator sent:
// - two PmemCSIDeployments whose object names collide: the later one is refused (Conflict, phase
//   Failed, a Warning event) and the running one is not disturbed (no write, same DaemonSet UID,
//   same CA); when the earlier one goes, the later one takes the names over;
// - two deployments managing PMEM on the same nodes: the later one gets PmemOverlap and a Warning;
// - a node driver rollout over every node: never two controller pods, and the operator's requests
//   counted by verb (lists, gets, object writes, status writes) during the rollout and at steady state;
// - operator faults (issue 14, R6): the whole control plane restarted under it, and another writer
//   fighting over its DaemonSet: it converges without a duplicate object, a new CA or lost status;
// - malformed PmemCSIDeployments (issue 14, R4): 200 generated ones are refused by the CRD schema
//   (server-side dry-run) or, where the schema admits them, by the operator in their status with
//   the field path — while the running deployment is not disturbed and the operator keeps running.
import { API_GROUP_VERSION, KIND, PLURAL, deploymentObjectNames, validateDeployment } from '@pmem-csi/api';
import { fuzzSeed, malformedDeployment } from '@pmem-csi/api/testing';
import fc from 'fast-check';
import { OPERATOR_VERSION } from '@pmem-csi/operator';
import { DRIVER_NAMESPACE, startOperator, type OperatorRun } from './components.js';
import { createCluster, ensureNamespace, printTimings, type AuditEvent, type KwokCluster } from './harness.js';
import { statusOf, type KubeObject } from './kube.js';
import { tail } from './processes.js';
import {
  conditionIs,
  crRef,
  installCrd,
  pmemDeployment,
  waitStatus,
  workloadRefs,
  type PmemDeployment,
} from './pmem-deployment.js';
import { sleep, waitFor } from './wait.js';

const EARLIER = 'pmem-csi.intel.com';
const COLLIDING = 'pmem-csi-intel-com'; // same object names as EARLIER
const OVERLAPPING = 'pmem-b.example.com';
const IMAGE = `registry.example.org/pmem-csi-driver:v${OPERATOR_VERSION}`;
const NODES = Array.from({ length: 20 }, (_, i) => `pmem-worker-${i}`);
const OPERATOR_AGENT = `pmem-csi-operator/${OPERATOR_VERSION}`;
const timings: Record<string, number> = {};

interface EventObject extends KubeObject {
  reason?: string;
  type?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string };
}

interface PodObject extends KubeObject {
  status?: { phase?: string };
}

/** What the operator asked of the apiserver, by kind of request. */
interface RequestCounts {
  lists: number;
  watches: number;
  gets: number;
  objectWrites: number;
  statusWrites: number;
  eventWrites: number;
}

function countRequests(events: readonly AuditEvent[], from: number, to: number): RequestCounts {
  const counts: RequestCounts = { lists: 0, watches: 0, gets: 0, objectWrites: 0, statusWrites: 0, eventWrites: 0 };
  for (const e of events) {
    const at = Date.parse(e.requestReceivedTimestamp);
    if (e.userAgent !== OPERATOR_AGENT || at < from || at > to || e.stage !== 'ResponseComplete') continue;
    const resource = e.objectRef?.resource ?? '';
    if (resource === 'leases') continue; // leader election (off here), never reconciles
    if (e.verb === 'list') counts.lists++;
    else if (e.verb === 'watch') counts.watches++;
    else if (e.verb === 'get') counts.gets++;
    else if (resource === 'events') counts.eventWrites++;
    else if (e.objectRef?.subresource === 'status') counts.statusWrites++;
    else counts.objectWrites++;
  }
  return counts;
}

const fmt = (c: RequestCounts): string =>
  `lists ${c.lists}, watches ${c.watches}, gets ${c.gets}, object writes ${c.objectWrites}, status writes ${c.statusWrites}, events ${c.eventWrites}`;

describe('cluster: operator ownership, PMEM overlap and rollouts', () => {
  let cluster: KwokCluster;
  let operator: OperatorRun;
  const operatorLog = (): string => `operator log:\n${tail(operator.process.log(), 20)}`;
  const cr = async (name: string): Promise<PmemDeployment> => cluster.kube.must<PmemDeployment>(crRef(name));
  const warnings = async (name: string): Promise<EventObject[]> =>
    (await cluster.kube.list<EventObject>('v1', 'Event', { namespace: 'default' })).filter(
      (e) => e.involvedObject?.kind === KIND && e.involvedObject.name === name && e.type === 'Warning',
    );
  const running = (name: string): Promise<PmemDeployment> =>
    waitStatus(cluster.kube, name, {
      what: 'phase Running with every node pod ready',
      ok: (c) => c.status?.phase === 'Running' && c.status.observedGeneration === c.metadata.generation,
      timeoutMs: 180_000,
    });

  beforeAll(async () => {
    const started = Date.now();
    cluster = await createCluster({ suite: 'opc', nodes: NODES, audit: true });
    await installCrd(cluster.kube);
    await ensureNamespace(cluster.kube, DRIVER_NAMESPACE);
    operator = await startOperator(cluster, { version: OPERATOR_VERSION, driverImage: IMAGE });
    timings['set-up total'] = Date.now() - started;
  }, 300_000);

  afterAll(async () => {
    await operator?.stop().catch(() => undefined);
    await cluster?.delete();
    printTimings('operator conflicts', timings);
  }, 120_000);

  it('refuses a deployment whose object names collide and leaves the running one undisturbed', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.create(pmemDeployment(EARLIER));
    await running(EARLIER);
    const names = deploymentObjectNames(EARLIER);
    const caRef = { apiVersion: 'v1', kind: 'Secret', name: names.caSecret, namespace: DRIVER_NAMESPACE };
    const before = {
      ds: (await kube.must(workloadRefs(EARLIER).daemonSet)).metadata.uid,
      ca: JSON.stringify((await kube.must(caRef))['data']),
    };
    const from = Date.now();
    await kube.create(pmemDeployment(COLLIDING));
    const refused = await waitStatus(kube, COLLIDING, {
      what: 'Conflict True and phase Failed',
      ok: (c) => conditionIs(c, 'Conflict', 'True') && c.status?.phase === 'Failed',
      timeoutMs: 60_000,
    });
    const conflict = refused.status?.conditions?.find((c) => c.type === 'Conflict');
    expect(conflict?.reason).toBe('NameCollision');
    expect(conflict?.message).toContain(EARLIER);
    await waitFor(
      `a Warning event about ${COLLIDING}`,
      async () => ((await warnings(COLLIDING)).some((e) => e.reason === 'Conflict') ? true : undefined),
      { timeoutMs: 30_000, describe: operatorLog },
    );
    // A while of both existing: the running one keeps its phase, its DaemonSet and its CA.
    const phases = new Set<string>();
    for (let i = 0; i < 20; i++) {
      phases.add((await cr(EARLIER)).status?.phase ?? '');
      await sleep(500);
    }
    const to = Date.now();
    expect([...phases]).toEqual(['Running']);
    expect((await kube.must(workloadRefs(EARLIER).daemonSet)).metadata.uid).toBe(before.ds);
    expect(JSON.stringify((await kube.must(caRef))['data'])).toBe(before.ca);
    const counts = countRequests(await cluster.auditEvents(), from, to);
    console.log(
      `operator requests while ${COLLIDING} collides with ${EARLIER} (${((to - from) / 1000).toFixed(1)} s): ${fmt(counts)}`,
    );
    expect(counts.objectWrites).toBe(0);
    expect(counts.statusWrites).toBeLessThanOrEqual(2); // the refused CR's status, once (or twice: Conflict, then its event's retry)

    // The earlier one goes: the refused one takes over the names and runs.
    await kube.delete(crRef(EARLIER));
    const took = await waitStatus(kube, COLLIDING, {
      what: 'Conflict False and phase Running',
      ok: (c) => conditionIs(c, 'Conflict', 'False') && c.status?.phase === 'Running',
      timeoutMs: 180_000,
    });
    expect(took.status?.conditions?.find((c) => c.type === 'Conflict')?.reason).toBe('Resolved');
    timings['collision: refused, then took over'] = Date.now() - started;
  }, 420_000);

  it('tells the later of two deployments that would manage PMEM on the same nodes, not the earlier', async () => {
    const started = Date.now();
    const { kube } = cluster;
    // COLLIDING runs on every storage=pmem node (lvm, the default); this one selects them too.
    await kube.create(pmemDeployment(OVERLAPPING, { deviceMode: 'direct', nodeSelector: { storage: 'pmem' } }));
    const later = await waitStatus(kube, OVERLAPPING, {
      what: 'PmemOverlap True',
      ok: (c) => conditionIs(c, 'PmemOverlap', 'True'),
      timeoutMs: 60_000,
    });
    expect(later.status?.conditions?.find((c) => c.type === 'PmemOverlap')?.message).toContain(COLLIDING);
    await waitFor(
      `a Warning event PmemOverlap about ${OVERLAPPING}`,
      async () => ((await warnings(OVERLAPPING)).some((e) => e.reason === 'PmemOverlap') ? true : undefined),
      { timeoutMs: 30_000, describe: operatorLog },
    );
    // The earlier one is not the one told.
    expect(conditionIs(await cr(COLLIDING), 'PmemOverlap', 'True')).toBe(false);
    expect((await warnings(COLLIDING)).filter((e) => e.reason === 'PmemOverlap')).toEqual([]);
    // Removing the later one clears nothing of the earlier one (the exclusion itself: operator-pmem-overlap.test.ts).
    await kube.delete(crRef(OVERLAPPING));
    await waitFor(
      `${OVERLAPPING} to be gone`,
      async () => ((await kube.get(crRef(OVERLAPPING))) === undefined ? true : undefined),
      { timeoutMs: 60_000 },
    );
    timings['overlap reported'] = Date.now() - started;
  }, 240_000);

  it(`rolls the node driver over ${NODES.length} nodes without a second controller, with bounded API requests`, async () => {
    const { kube } = cluster;
    await running(COLLIDING);
    const controllerPods = async (): Promise<number> =>
      (
        await kube.list<PodObject>('v1', 'Pod', {
          namespace: DRIVER_NAMESPACE,
          labelSelector: 'app.kubernetes.io/component=controller',
        })
      ).filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length;
    // Steady state first: nothing to do, nothing sent.
    const quietFrom = Date.now();
    await sleep(15_000);
    const quiet = countRequests(await cluster.auditEvents(), quietFrom, Date.now());
    console.log(`operator requests at steady state (15 s): ${fmt(quiet)}`);
    expect({ lists: quiet.lists, objectWrites: quiet.objectWrites, statusWrites: quiet.statusWrites }).toEqual({
      lists: 0,
      objectWrites: 0,
      statusWrites: 0,
    });

    const from = Date.now();
    await kube.merge({ ...pmemDeployment(COLLIDING), spec: { logLevel: 5 } });
    let maxControllers = 0;
    const done = await waitFor(
      'the rollout: every node pod and the controller updated and ready, phase Running',
      async () => {
        maxControllers = Math.max(maxControllers, await controllerPods());
        const c = await cr(COLLIDING);
        const ds = await kube.must<KubeObject & { status?: { updatedNumberScheduled?: number; numberReady?: number } }>(
          workloadRefs(COLLIDING).daemonSet,
        );
        const rolled = ds.status?.updatedNumberScheduled === NODES.length && ds.status.numberReady === NODES.length;
        return rolled &&
          c.status?.phase === 'Running' &&
          c.status.observedGeneration === c.metadata.generation &&
          c.status.driverComponents?.every((d) => d.status === 'Ready')
          ? c
          : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 100, describe: operatorLog },
    );
    const to = Date.now();
    expect(done.status?.phase).toBe('Running');
    expect(maxControllers).toBeLessThanOrEqual(1);
    const rollout = countRequests(await cluster.auditEvents(), from, to);
    const seconds = ((to - from) / 1000).toFixed(1);
    console.log(
      `operator requests during a node driver rollout over ${NODES.length} nodes (${seconds} s, at most ${maxControllers} controller pod): ${fmt(rollout)}`,
    );
    timings['rollout'] = to - from;
    // Informers serve the reconciles: no list while the watches are healthy; the spec change is
    // written once per workload, the status only when it changed.
    expect(rollout.lists).toBe(0);
    expect(rollout.objectWrites).toBeLessThanOrEqual(4);
    expect(rollout.statusWrites).toBeLessThanOrEqual(2 * NODES.length + 4);
  }, 420_000);

  it('converges after a control-plane restart and against a competing writer: no duplicate, no new CA, status kept', async () => {
    const { kube } = cluster;
    const before = await running(COLLIDING);
    const names = deploymentObjectNames(COLLIDING);
    const caRef = { apiVersion: 'v1', kind: 'Secret', name: names.caSecret, namespace: DRIVER_NAMESPACE };
    const dsRef = workloadRefs(COLLIDING).daemonSet;
    const kept = { ds: (await kube.must(dsRef)).metadata.uid, ca: JSON.stringify((await kube.must(caRef))['data']) };
    const downMs = await cluster.restartControlPlane(5_000);
    timings['control plane down (stop, 5 s, start, API answers)'] = downMs;
    // A spec change made after the restart must roll out: the operator's watches came back.
    await kube.merge({ ...pmemDeployment(COLLIDING), spec: { logLevel: 4 } });
    const after = await waitStatus(kube, COLLIDING, {
      what: 'the new generation observed and Running after the restart',
      ok: (c) =>
        c.status?.observedGeneration === c.metadata.generation &&
        c.metadata.generation !== before.metadata.generation &&
        c.status?.phase === 'Running',
      timeoutMs: 180_000,
    });
    // Another field manager takes the DaemonSet's update strategy and log level: the operator takes them back.
    type Ds = KubeObject & {
      spec: {
        updateStrategy?: { rollingUpdate?: { maxUnavailable?: number | string } };
        template: { spec: { containers: Array<{ name: string; args?: string[] }> } };
      };
    };
    const ds = await kube.must<Ds>(dsRef);
    const wanted = JSON.stringify(ds.spec.updateStrategy);
    for (let i = 0; i < 3; i++) {
      await kube.apply(
        {
          apiVersion: ds.apiVersion,
          kind: ds.kind,
          metadata: { name: ds.metadata.name, namespace: DRIVER_NAMESPACE },
          spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 7 + i } } },
        } as KubeObject,
        { fieldManager: 'someone-else' },
      );
      await sleep(300);
    }
    await waitFor(
      'the operator to restore the DaemonSet update strategy',
      async () => (JSON.stringify((await kube.must<Ds>(dsRef)).spec.updateStrategy) === wanted ? true : undefined),
      { timeoutMs: 60_000, describe: operatorLog },
    );
    const objects = async (kind: string, apiVersion: string): Promise<number> =>
      (
        await kube.list(apiVersion, kind, {
          namespace: DRIVER_NAMESPACE,
          labelSelector: `app.kubernetes.io/instance=${COLLIDING}`,
        })
      ).length;
    expect({
      daemonSets: await objects('DaemonSet', 'apps/v1'),
      deployments: await objects('Deployment', 'apps/v1'),
      secrets: await objects('Secret', 'v1'),
    }).toEqual({ daemonSets: 1, deployments: 1, secrets: 3 });
    expect((await kube.must(dsRef)).metadata.uid).toBe(kept.ds);
    expect(JSON.stringify((await kube.must(caRef))['data'])).toBe(kept.ca);
    const conditions = (after.status?.conditions ?? []).map((c) => [c.type, c.status]).sort();
    expect(conditions).toEqual(
      expect.arrayContaining([
        ['CertsReady', 'True'],
        ['DriverDeployed', 'True'],
      ]),
    );
    expect((await fetch(`${operator.metricsUrl}/readyz`)).status).toBe(200);
  }, 420_000);

  it('refuses 200 malformed PmemCSIDeployments by schema or by status, undisturbed otherwise', async () => {
    const { kube } = cluster;
    const seed = fuzzSeed() ?? Date.now() % 1_000_000;
    const samples = fc.sample(malformedDeployment, { numRuns: 200, seed });
    const path = `/apis/${API_GROUP_VERSION}/${PLURAL}`;
    const admitted: Array<{ why: string; obj: Record<string, unknown> }> = [];
    // Admitted, but stored valid: the apiserver drops a null value of a field that is not nullable
    // (e.g. labels {"a": null} is stored as {}), so there is nothing for the operator to refuse.
    const madeValid: string[] = [];
    const rejected = new Map<number, number>();
    for (const sample of samples) {
      const obj = { ...sample.obj, apiVersion: API_GROUP_VERSION, kind: KIND };
      try {
        // Strict field validation, as kubectl does by default: unknown fields are refused, not pruned.
        const stored = await kube.request<Record<string, unknown>>('POST', path, {
          body: obj,
          query: { dryRun: 'All', fieldManager: 'pmem-csi-e2e-fuzz', fieldValidation: 'Strict' },
        });
        if (validateDeployment(stored).length === 0) madeValid.push(sample.why);
        else admitted.push(sample);
      } catch (e) {
        const code = statusOf(e);
        rejected.set(code, (rejected.get(code) ?? 0) + 1);
      }
    }
    console.log(
      `malformed PmemCSIDeployments (seed ${seed}): ${samples.length} generated, rejected by the apiserver ${[...rejected].map(([c, n]) => `${n}×${c}`).join(', ')}, admitted ${admitted.length} (${admitted.map((a) => a.why).join(', ')}), admitted and stored valid ${madeValid.length} (${madeValid.join(', ')})`,
    );
    expect([...rejected.keys()].every((code) => code === 400 || code === 422)).toBe(true);
    // What the schema admits, the operator's own validation refuses, naming the field.
    for (const a of admitted)
      expect({ why: a.why, problems: validateDeployment(a.obj).length > 0 }).toEqual({ why: a.why, problems: true });
    // A few admitted ones for real: status Failed with the field path, no objects, nothing else disturbed.
    const tried = admitted.filter((a) => a.why !== 'metadata.name').slice(0, 3);
    for (const [i, a] of tried.entries()) {
      const name = `fuzz-${i}.example.com`;
      await kube.create({
        ...(a.obj as object),
        apiVersion: API_GROUP_VERSION,
        kind: KIND,
        metadata: { name },
      } as KubeObject);
      const failed = await waitStatus(kube, name, {
        what: `phase Failed for ${a.why}`,
        ok: (c) => c.status?.phase === 'Failed',
        timeoutMs: 60_000,
      });
      const deployed = failed.status?.conditions?.find((c) => c.type === 'DriverDeployed');
      expect({ why: a.why, status: deployed?.status, namesField: /spec[.[]/.test(deployed?.message ?? '') }).toEqual({
        why: a.why,
        status: 'False',
        namesField: true,
      });
      expect(
        await kube.list('apps/v1', 'DaemonSet', {
          namespace: DRIVER_NAMESPACE,
          labelSelector: `app.kubernetes.io/instance=${name}`,
        }),
      ).toEqual([]);
      await kube.delete(crRef(name));
    }
    expect(operator.process.exited()).toBeUndefined();
    expect((await cr(COLLIDING)).status?.phase).toBe('Running');
    expect((await fetch(`${operator.metricsUrl}/readyz`)).status).toBe(200);
  }, 300_000);
});
