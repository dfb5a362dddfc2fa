// API requests per reconcile of one PmemCSIDeployment (issue 18: "12 lists per reconcile"),
// against the in-memory apiserver with real certificates: at steady state (nothing changed) and
// during a node driver rollout over N nodes (one reconcile per DaemonSet status update, as the
// operator's watch triggers them), with the CR list and the owned objects from the informers'
// caches (as main.ts wires them) and without them. Prints lists, gets and writes (object writes
// and status writes) per reconcile; with the caches the one get is the CR itself, read fresh for
// its status; without them a second one reads external-provisioner's Lease (the active controller
// replica, issue 17), which the Lease informer serves otherwise.
// Run: node --conditions=@pmem-csi/source --import tsx packages/operator/bench/reconcile-requests.bench.ts [nodes]
//      (default 400; the rollout takes 20 steps)
import { LABEL_KEYS } from '@pmem-csi/api';
import type { KubeObject, ResourceType } from '../src/kube/kube-port.js';
import { RESOURCES } from '../src/kube/resources.js';
import { TEST_NAMESPACE } from '../src/testing/fixtures.js';
import { CR_NAME, NAMES, harness, type Harness } from '../src/testing/harness.js';

const NODES = Number(process.argv[2] ?? 400);
const STEPS = 20;
const out = (line: string): void => void process.stdout.write(`${line}\n`);

interface Counts {
  lists: number;
  gets: number;
  objectWrites: number;
  statusWrites: number;
}

/** Count the requests the reconciler makes (instance methods shadow the fake's). */
function counting(h: Harness): () => Counts {
  const counts = { lists: 0, gets: 0 };
  const list = h.kube.list.bind(h.kube);
  const get = h.kube.get.bind(h.kube);
  h.kube.list = (async (...args: Parameters<typeof list>) => {
    counts.lists++;
    return list(...args);
  }) as typeof h.kube.list;
  h.kube.get = (async (...args: Parameters<typeof get>) => {
    counts.gets++;
    return get(...args);
  }) as typeof h.kube.get;
  const writesAt = { all: h.kube.writes.length };
  const take = (): Counts => {
    const writes = h.kube.writes.slice(writesAt.all);
    writesAt.all = h.kube.writes.length;
    const statusWrites = writes.filter((w) => w.startsWith('status ')).length;
    const c = { lists: counts.lists, gets: counts.gets, objectWrites: writes.length - statusWrites, statusWrites };
    counts.lists = 0;
    counts.gets = 0;
    return c;
  };
  return take;
}

function dsStatus(h: Harness, ready: number, updated: number): void {
  h.kube.setStatus(
    { ...RESOURCES.daemonSet, namespace: TEST_NAMESPACE, name: NAMES.nodeDaemonSet },
    {
      desiredNumberScheduled: NODES,
      currentNumberScheduled: NODES,
      numberReady: ready,
      updatedNumberScheduled: updated,
      numberMisscheduled: 0,
    },
  );
}

const fmt = (label: string, reconciles: number, c: Counts): string =>
  `${label.padEnd(44)} reconciles ${String(reconciles).padStart(3)}  lists ${String(c.lists).padStart(4)} (${(c.lists / reconciles).toFixed(1)}/reconcile)  gets ${String(c.gets).padStart(4)}  object writes ${String(c.objectWrites).padStart(3)}  status writes ${String(c.statusWrites).padStart(3)}`;

async function scenario(withCache: boolean): Promise<void> {
  const h = harness();
  h.putCr();
  const crs = (): KubeObject[] => [...h.kube.objects.values()].filter((o) => o.kind === 'PmemCSIDeployment');
  // A cache that holds exactly what the apiserver holds (the informers' caches once synced).
  const owned = (type: ResourceType, crName: string): KubeObject[] =>
    [...h.kube.objects.values()].filter(
      (o) => o.kind === type.kind && o.metadata.labels?.[LABEL_KEYS.instance] === crName,
    );
  const leases = (): KubeObject[] => [...h.kube.objects.values()].filter((o) => o.kind === 'Lease');
  const r = h.reconciler(withCache ? { deployments: crs, owned, leases } : {});
  await r.reconcile(CR_NAME);
  h.workloadsReady({ nodes: NODES });
  await r.reconcile(CR_NAME);
  const take = counting(h);
  const sum = (a: Counts, b: Counts): Counts => ({
    lists: a.lists + b.lists,
    gets: a.gets + b.gets,
    objectWrites: a.objectWrites + b.objectWrites,
    statusWrites: a.statusWrites + b.statusWrites,
  });
  let steady: Counts = { lists: 0, gets: 0, objectWrites: 0, statusWrites: 0 };
  for (let i = 0; i < 10; i++) {
    await r.reconcile(CR_NAME);
    steady = sum(steady, take());
  }
  const cache = withCache ? 'informer caches' : 'no caches';
  out(fmt(`steady state, ${cache}`, 10, steady));
  h.putCr({ logLevel: 5 }); // a node driver rollout
  let rollout: Counts = { lists: 0, gets: 0, objectWrites: 0, statusWrites: 0 };
  await r.reconcile(CR_NAME);
  rollout = sum(rollout, take());
  for (let step = 1; step <= STEPS; step++) {
    const updated = Math.round((NODES * step) / STEPS);
    dsStatus(h, NODES - 1, updated); // one pod restarting at a time
    await r.reconcile(CR_NAME);
    rollout = sum(rollout, take());
  }
  dsStatus(h, NODES, NODES);
  await r.reconcile(CR_NAME);
  rollout = sum(rollout, take());
  out(fmt(`rollout over ${NODES} nodes, ${cache}`, STEPS + 2, rollout));
  out(
    `  phase during the rollout stayed ${h.cr().status?.phase === 'Running' ? 'Running' : `"${h.cr().status?.phase ?? ''}"`}; events: ${h.events.map((e) => e.reason).join(', ')}`,
  );
}

await scenario(true);
await scenario(false);
