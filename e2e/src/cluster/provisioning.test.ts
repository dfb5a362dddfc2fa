// Cluster tier, dynamic provisioning: PVC -> the real external-provisioner (host process) -> our
// controller (CSI socket) -> our node drivers (host processes on emulated PMEM, named like the
// simulated nodes) -> PV, bound by kube-controller-manager's PV controller; and back on delete.
// Late binding goes through the real kube-scheduler, which picks the node of a pod.
// Needs root and loop devices (emulated PMEM), like the conformance tier.
import { join } from 'node:path';
import { volumeIdForName } from '@pmem-csi/api';
import { fetchStatus, startLocalStack, type LocalStack } from '@pmem-csi/driver';
import { createLogger } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';
import { startProvisioner } from './components.js';
import { createCluster, printTimings, type KwokCluster } from './harness.js';
import type { KubeObject } from './kube.js';
import type { HostProcess } from './processes.js';
import { tail } from './processes.js';
import {
  affinityNodes,
  claim,
  claimRef,
  csiDriver,
  deviceNode,
  DRIVER,
  podWithClaim,
  pvRef,
  stopStack,
  registerNodes,
  storageClass,
  TEST_NAMESPACE,
  waitBound,
  waitGone,
  type Claim,
} from './storage.js';
import { waitFor } from './wait.js';

const log = createLogger({ level: 'warn' });
const timings: Record<string, number> = {};

describe('cluster: dynamic provisioning through external-provisioner', () => {
  let cluster: KwokCluster;
  let stack: LocalStack;
  let provisioner: HostProcess;
  const why = (): string => `provisioner: ${tail(provisioner.log(), 3)}`;

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error(
        'dynamic provisioning runs our node drivers on emulated PMEM: needs root and loop devices (CI runs as root)',
      );
    const started = Date.now();
    cluster = await createCluster({ suite: 'prov' });
    timings['cluster create (kwokctl until API)'] = cluster.timings.createMs;
    timings['cluster ready (nodes Ready)'] = cluster.timings.nodesReadyMs;
    stack = await startLocalStack(
      join(cluster.dir, 'stack'),
      'emulated',
      log,
      cluster.nodes.map((n) => [n, 512 * MiB] as const),
    );
    const { kube } = cluster;
    await registerNodes(kube, cluster.nodes);
    await kube.apply(csiDriver());
    await kube.apply(storageClass('pmem-immediate', 'Immediate'));
    await kube.apply(storageClass('pmem-late', 'WaitForFirstConsumer'));
    provisioner = startProvisioner(cluster, { csiSocket: stack.controllerSocket });
    timings['set-up total'] = Date.now() - started;
  }, 300_000);

  afterAll(async () => {
    await provisioner?.stop().catch(() => undefined);
    await stopStack(stack);
    await cluster?.delete();
    printTimings('provisioning', timings);
  }, 120_000);

  it('Immediate binding: PVC -> PV bound with the volume on a node; PVC deleted -> PV deleted, device gone', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.apply(claim('immediate-1', 'pmem-immediate', '64Mi'));
    const pv = await waitBound(kube, 'immediate-1', 90_000, why);
    expect(pv.spec.csi?.driver).toBe(DRIVER);
    expect(pv.spec.claimRef).toMatchObject({ name: 'immediate-1', namespace: TEST_NAMESPACE });
    expect(pv.spec.persistentVolumeReclaimPolicy).toBe('Delete');
    expect(pv.spec.capacity?.storage).toBe('64Mi');
    const handle = pv.spec.csi?.volumeHandle ?? '';
    // external-provisioner names the volume after the PV; our controller derives the id from it.
    expect(handle).toBe(volumeIdForName(pv.metadata.name));
    // The volume lives where the PV's topology says, and nowhere else.
    const [node, ...others] = affinityNodes(pv);
    expect(others).toEqual([]);
    expect(cluster.nodes).toContain(node);
    expect(deviceNode(stack, handle)).toBe(node);
    const status = await fetchStatus(stack.statusUrl);
    expect(status.nodes.find((n) => n.nodeId === node)?.volumes).toBe(1);

    await kube.delete(claimRef('immediate-1'));
    await waitGone(kube, pvRef(pv.metadata.name), 90_000, why);
    await waitFor(
      `the device file of ${handle} on ${node} to be removed`,
      () => (deviceNode(stack, handle) === undefined ? true : undefined),
      { timeoutMs: 30_000 },
    );
    const after = await fetchStatus(stack.statusUrl);
    expect(after.nodes.map((n) => n.volumes)).toEqual(cluster.nodes.map(() => 0));
    timings['Immediate: create, bind, delete'] = Date.now() - started;
  }, 240_000);

  it('WaitForFirstConsumer: the scheduler picks a node for the pod and the volume is created there', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.apply(claim('late-1', 'pmem-late', '32Mi'));
    // Late binding: nothing happens until a pod needs the claim.
    await new Promise((r) => setTimeout(r, 2000));
    expect((await kube.must<Claim>(claimRef('late-1'))).status?.phase).toBe('Pending');
    await kube.apply(podWithClaim('consumer-1', 'late-1'));
    const pv = await waitBound(kube, 'late-1', 120_000, async () => {
      const c = await kube.get(claimRef('late-1'));
      return `selected-node=${c?.metadata.annotations?.['volume.kubernetes.io/selected-node'] ?? '-'}; ${why()}`;
    });
    const pvc = await kube.must<Claim>(claimRef('late-1'));
    const selected = pvc.metadata.annotations?.['volume.kubernetes.io/selected-node'];
    expect(cluster.nodes).toContain(selected);
    expect(affinityNodes(pv)).toEqual([selected]);
    expect(deviceNode(stack, pv.spec.csi?.volumeHandle ?? '')).toBe(selected);
    const pod = await waitFor(
      'pod consumer-1 to be scheduled and Running (kwok)',
      async () => {
        const p = await kube.get<KubeObject & { spec: { nodeName?: string }; status?: { phase?: string } }>({
          apiVersion: 'v1',
          kind: 'Pod',
          name: 'consumer-1',
          namespace: TEST_NAMESPACE,
        });
        return p?.spec.nodeName !== undefined && p.status?.phase === 'Running' ? p : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(pod.spec.nodeName).toBe(selected);

    await kube.delete({ apiVersion: 'v1', kind: 'Pod', name: 'consumer-1', namespace: TEST_NAMESPACE });
    await waitGone(kube, { apiVersion: 'v1', kind: 'Pod', name: 'consumer-1', namespace: TEST_NAMESPACE }, 60_000);
    await kube.delete(claimRef('late-1'));
    await waitGone(kube, pvRef(pv.metadata.name), 90_000, why);
    const handle = pv.spec.csi?.volumeHandle ?? '';
    await waitFor(
      `the device file of ${handle} to be removed`,
      () => (deviceNode(stack, handle) === undefined ? true : undefined),
      { timeoutMs: 30_000 },
    );
    timings['WaitForFirstConsumer: schedule, create, bind, delete'] = Date.now() - started;
  }, 300_000);
});
