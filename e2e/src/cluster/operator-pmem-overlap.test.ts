// Cluster tier, issue 32 part 3: one driver per node's PMEM. Two PmemCSIDeployments whose device
// modes both manage PMEM — lvm on storage=pmem and, created later, direct on pmem-zone=z1 — on
// simulated nodes of which some carry both labels and some only one. The kube-scheduler and the
// DaemonSet controller of the real control plane place the node pods (kwok marks them Running), so
// the pods' nodes are the witness: the later deployment's node pods land only on its non-shared
// nodes, never on a shared one, and its status names the nodes it was kept off. A node labelled for
// both afterwards is left to the earlier one (the DaemonSet controller removes the later pod there).
// Then the earlier deployment is deleted and the later one takes the shared nodes over. One line
// says how long each step took and whether both node pods were ever seen on one node.
import { selectorLabels } from '@pmem-csi/api';
import { OPERATOR_VERSION } from '@pmem-csi/operator';
import { DRIVER_NAMESPACE, startOperator, type OperatorRun } from './components.js';
import { createCluster, ensureNamespace, printTimings, simulatedNode, type KwokCluster } from './harness.js';
import type { KubeObject } from './kube.js';
import { tail } from './processes.js';
import {
  crRef,
  describeStatus,
  installCrd,
  pmemDeployment,
  workloadRefs,
  type PmemDeployment,
} from './pmem-deployment.js';
import { sleep, waitFor } from './wait.js';

const IMAGE = `registry.example.org/pmem-csi-driver:v${OPERATOR_VERSION}`;
const EARLIER = 'pmem-lvm';
const LATER = 'pmem-direct';
const LVM_LABELS = { storage: 'pmem' };
const DIRECT_LABELS = { 'pmem-zone': 'z1' };
const SHARED = ['shared-0', 'shared-1', 'shared-2', 'shared-3'];
const LVM_ONLY = ['lvm-only-0', 'lvm-only-1'];
const DIRECT_ONLY = ['direct-only-0', 'direct-only-1', 'direct-only-2'];
/** Labelled for both after the later deployment runs: the earlier one gets it. */
const RELABELLED = 'direct-only-2';
const timings: Record<string, number> = {};

interface NodeObject extends KubeObject {
  status?: { conditions?: Array<{ type: string; status: string }> };
}

interface PodObject extends KubeObject {
  spec?: { nodeName?: string };
  status?: { phase?: string };
}

interface DaemonSetObject extends KubeObject {
  spec?: { template?: { spec?: { affinity?: unknown; nodeSelector?: Record<string, string> } } };
  status?: { desiredNumberScheduled?: number; numberReady?: number };
}

const sorted = (names: readonly string[]): string[] => [...names].sort();
const conditionOf = (cr: PmemDeployment | undefined, type: string) =>
  cr?.status?.conditions?.find((c) => c.type === type);

describe("cluster: one driver per node's PMEM (issue 32)", () => {
  let cluster: KwokCluster;
  let operator: OperatorRun;
  const operatorLog = (): string => `operator log:\n${tail(operator.process.log(), 20)}`;
  const get = (name: string): Promise<PmemDeployment | undefined> => cluster.kube.get<PmemDeployment>(crRef(name));

  /** The nodes of `name`'s node pods that are not on their way out, sorted. */
  async function podNodes(name: string): Promise<string[]> {
    const selector = Object.entries(selectorLabels(name, 'node'))
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const pods = await cluster.kube.list<PodObject>('v1', 'Pod', {
      namespace: DRIVER_NAMESPACE,
      labelSelector: selector,
    });
    return sorted(
      pods
        .filter((p) => p.metadata.deletionTimestamp === undefined && p.status?.phase === 'Running')
        .map((p) => p.spec?.nodeName ?? ''),
    );
  }

  /** Nodes where both deployments' node pods exist at once (any phase, terminating ones too), sampled. */
  async function bothOn(): Promise<string[]> {
    const [a, b] = await Promise.all(
      [EARLIER, LATER].map(async (name) => {
        const selector = Object.entries(selectorLabels(name, 'node'))
          .map(([k, v]) => `${k}=${v}`)
          .join(',');
        const pods = await cluster.kube.list<PodObject>('v1', 'Pod', {
          namespace: DRIVER_NAMESPACE,
          labelSelector: selector,
        });
        return new Set(pods.map((p) => p.spec?.nodeName ?? '').filter((n) => n !== ''));
      }),
    );
    return sorted([...(a ?? [])].filter((n) => b?.has(n) === true));
  }

  beforeAll(async () => {
    const started = Date.now();
    cluster = await createCluster({ suite: 'overlap', nodes: [] });
    const { kube } = cluster;
    for (const name of SHARED) await kube.create(simulatedNode(name, { ...LVM_LABELS, ...DIRECT_LABELS }));
    for (const name of LVM_ONLY) await kube.create(simulatedNode(name, LVM_LABELS));
    for (const name of DIRECT_ONLY) await kube.create(simulatedNode(name, DIRECT_LABELS));
    const all = [...SHARED, ...LVM_ONLY, ...DIRECT_ONLY];
    await waitFor(
      `nodes ${all.join(', ')} to become Ready (kwok-controller)`,
      async () => {
        const ready = (await kube.list<NodeObject>('v1', 'Node'))
          .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
          .map((n) => n.metadata.name);
        return all.every((n) => ready.includes(n)) ? true : undefined;
      },
      { timeoutMs: 60_000, describe: () => cluster.componentLog('kwok-controller', 5) },
    );
    await installCrd(kube);
    await ensureNamespace(kube, DRIVER_NAMESPACE);
    operator = await startOperator(cluster, {
      version: OPERATOR_VERSION,
      driverImage: IMAGE,
      logName: 'operator-pmem-overlap.log',
    });
    timings['set-up total'] = Date.now() - started;
  }, 300_000);

  afterAll(async () => {
    await operator?.stop().catch(() => undefined);
    await cluster?.delete();
    printTimings('operator pmem overlap', timings);
  }, 120_000);

  it('runs the later deployment only on its non-shared nodes, names the nodes it is kept off, and hands them over once the earlier one is deleted', async () => {
    const { kube } = cluster;
    const started = Date.now();
    await kube.create(pmemDeployment(EARLIER, { deviceMode: 'lvm', nodeSelector: LVM_LABELS }));
    const lvmNodes = sorted([...SHARED, ...LVM_ONLY]);
    await waitFor(
      `${EARLIER}'s node pods on ${lvmNodes.join(', ')}`,
      async () => (JSON.stringify(await podNodes(EARLIER)) === JSON.stringify(lvmNodes) ? true : undefined),
      { timeoutMs: 180_000, describe: async () => `${(await podNodes(EARLIER)).join(', ')}\n${operatorLog()}` },
    );
    // A later second than the earlier one's: by the order its name ('pmem-direct' < 'pmem-lvm') would not decide.
    await sleep(1000);
    const createdAt = Date.now();
    await kube.create(pmemDeployment(LATER, { deviceMode: 'direct', nodeSelector: DIRECT_LABELS }));
    const [early, late] = [await get(EARLIER), await get(LATER)];
    expect(Date.parse(String(late?.metadata.creationTimestamp))).toBeGreaterThan(
      Date.parse(String(early?.metadata.creationTimestamp)),
    );

    // The later one: pods on its own nodes only, never on a shared one, and a status saying so.
    const ownNodes = sorted(DIRECT_ONLY);
    const sharedSeen = new Set<string>();
    let last = '';
    const excluded = await waitFor(
      `${LATER} Running with node pods on ${ownNodes.join(', ')} and PmemOverlap True (NodesExcluded)`,
      async () => {
        const nodes = await podNodes(LATER);
        for (const n of nodes) if (SHARED.includes(n)) sharedSeen.add(n);
        const cr = await get(LATER);
        last = `pods on [${nodes.join(', ')}]; ${describeStatus(cr)}`;
        return JSON.stringify(nodes) === JSON.stringify(ownNodes) &&
          cr?.status?.phase === 'Running' &&
          conditionOf(cr, 'PmemOverlap')?.reason === 'NodesExcluded'
          ? cr
          : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 200, describe: () => `${last}\n${operatorLog()}` },
    );
    const excludedMs = Date.now() - createdAt;
    const stamp = String(early?.metadata.creationTimestamp);
    expect(conditionOf(excluded, 'PmemOverlap')).toMatchObject({
      status: 'True',
      reason: 'NodesExcluded',
      message:
        `kept off 4 nodes where an earlier PmemCSIDeployment manages PMEM: "${EARLIER}" (lvm on storage=pmem, created first, ${stamp}). ` +
        `Nodes kept off: ${SHARED.join(', ')}. One driver per node's PMEM: the node DaemonSet's required node affinity excludes every node these node selectors match, ` +
        'also nodes labelled later; this deployment takes a node over once no earlier one selects it any more.',
    });
    expect(conditionOf(await get(EARLIER), 'PmemOverlap')).toBeUndefined();
    const ds = await kube.must<DaemonSetObject>(workloadRefs(LATER).daemonSet);
    expect(ds.spec?.template?.spec?.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'storage', operator: 'NotIn', values: ['pmem'] }] }],
        },
      },
    });
    expect(ds.status?.desiredNumberScheduled).toBe(DIRECT_ONLY.length);
    // Steady: both keep to their nodes while they are reconciled.
    for (let i = 0; i < 10; i++) {
      await sleep(300);
      expect({ i, later: await podNodes(LATER), earlier: await podNodes(EARLIER), both: await bothOn() }).toEqual({
        i,
        later: ownNodes,
        earlier: lvmNodes,
        both: [],
      });
    }

    // A node labelled for both later: the earlier one gets it, the later one's pod there goes.
    const relabelled = Date.now();
    await kube.merge({ apiVersion: 'v1', kind: 'Node', metadata: { name: RELABELLED, labels: LVM_LABELS } });
    const shared = sorted([...SHARED, RELABELLED]);
    await waitFor(
      `${RELABELLED} to move from ${LATER} to ${EARLIER}, and ${LATER}'s status to name it`,
      async () => {
        const [later, earlier, cr] = [await podNodes(LATER), await podNodes(EARLIER), await get(LATER)];
        last = `${LATER} on [${later.join(', ')}], ${EARLIER} on [${earlier.join(', ')}]; ${conditionOf(cr, 'PmemOverlap')?.message ?? ''}`;
        return !later.includes(RELABELLED) &&
          earlier.includes(RELABELLED) &&
          conditionOf(cr, 'PmemOverlap')?.message.includes(`kept off 5 nodes`) === true &&
          conditionOf(cr, 'PmemOverlap')?.message.includes(`Nodes kept off: ${shared.join(', ')}.`) === true
          ? true
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, describe: () => `${last}\n${operatorLog()}` },
    );
    const relabelMs = Date.now() - relabelled;
    // The earlier one is never kept off: its new pod starts while the later one's terminates there.
    const relabelBoth = await waitFor(
      `${LATER}'s terminating pod on ${RELABELLED} to be gone`,
      async () => ((await bothOn()).length === 0 ? Date.now() - relabelled : undefined),
      { timeoutMs: 120_000, intervalMs: 200 },
    );

    // The earlier one goes: the later one takes the shared nodes over.
    const deleted = Date.now();
    let overlapSeen: string[] = [];
    let overlapFirst: number | undefined;
    let overlapLast: number | undefined;
    await kube.delete(crRef(EARLIER));
    const took = await waitFor(
      `${LATER} to take over ${shared.join(', ')} after ${EARLIER} was deleted`,
      async () => {
        const both = await bothOn();
        if (both.length > 0) {
          overlapFirst ??= Date.now() - deleted;
          overlapLast = Date.now() - deleted;
        }
        if (both.length > overlapSeen.length) overlapSeen = both;
        const [nodes, cr, earlierPods] = [await podNodes(LATER), await get(LATER), await podNodes(EARLIER)];
        const latest = await kube.get<DaemonSetObject>(workloadRefs(LATER).daemonSet);
        last = `pods on [${nodes.join(', ')}], ${EARLIER}'s on [${earlierPods.join(', ')}]; ${describeStatus(cr)}`;
        return JSON.stringify(nodes) === JSON.stringify(sorted([...SHARED, ...DIRECT_ONLY])) &&
          earlierPods.length === 0 &&
          latest?.spec?.template?.spec?.affinity === undefined &&
          conditionOf(cr, 'PmemOverlap')?.reason === 'NoOverlap' &&
          cr?.status?.phase === 'Running'
          ? cr
          : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 200, describe: () => `${last}\n${operatorLog()}` },
    );
    const takeoverMs = Date.now() - deleted;
    expect(conditionOf(took, 'PmemOverlap')).toMatchObject({
      status: 'False',
      message: 'no earlier PmemCSIDeployment in a PMEM-managing device mode can run on the nodes of this one',
    });
    expect([...sharedSeen]).toEqual([]);
    console.log(
      `pmem overlap: ${LATER} (direct on pmem-zone=z1) kept off ${SHARED.length} shared nodes of ${EARLIER} (lvm on storage=pmem) ` +
        `and Running on ${ownNodes.length} after ${(excludedMs / 1000).toFixed(1)} s (pods on a shared node seen: ${sharedSeen.size}); ` +
        `${RELABELLED} labelled for both -> ${EARLIER}'s after ${(relabelMs / 1000).toFixed(1)} s (${LATER}'s pod there terminating until ${(relabelBoth / 1000).toFixed(1)} s); ` +
        `${EARLIER} deleted -> ${LATER} on all ${SHARED.length + DIRECT_ONLY.length} nodes after ${(takeoverMs / 1000).toFixed(1)} s ` +
        `(nodes with both node pods during the handover, the earlier's terminating: ${overlapSeen.length === 0 ? 'none' : `${overlapSeen.join(', ')}, seen from ${((overlapFirst ?? 0) / 1000).toFixed(1)} s to ${((overlapLast ?? 0) / 1000).toFixed(1)} s`})`,
    );
    timings['exclusion, relabel, takeover'] = Date.now() - started;
    await kube.delete(crRef(LATER));
    await waitFor(`${LATER} to be gone`, async () => ((await get(LATER)) === undefined ? true : undefined), {
      timeoutMs: 60_000,
    });
  }, 900_000);
});
