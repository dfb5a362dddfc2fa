// Cluster tier, operator-managed upgrade: operator version A deploys the driver and a volume is
// provisioned through it; A stops, version B starts and updates every object in place (same UIDs
// for the workloads), removes an obsolete object of a kind an older version created, keeps objects
// it does not own, and the existing volume stays bound with its device intact.
// external-provisioner runs here exactly as the operator deploys it: the args of the live
// Deployment's sidecar, the controller ServiceAccount's token (so the operator's RBAC is what is
// tested) and the simulated controller pod as its identity (CSIStorageCapacity owner lookup).
// Needs root and loop devices (the node drivers run on emulated PMEM).
import { join } from 'node:path';
import { API_GROUP_VERSION, KIND, LABEL_KEYS, FIELD_MANAGER, deploymentObjectNames } from '@pmem-csi/api';
import { freePort, startLocalStack, type LocalStack } from '@pmem-csi/driver';
import { createLogger } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';
import {
  DRIVER_NAMESPACE,
  serviceAccountKubeconfig,
  startOperator,
  startProvisioner,
  type OperatorRun,
} from './components.js';
import { createCluster, printTimings, ensureNamespace, type KwokCluster } from './harness.js';
import { describeRef, type KubeObject, type Ref } from './kube.js';
import { tail, type HostProcess } from './processes.js';
import {
  conditionIs,
  crRef,
  existing,
  expectedObjects,
  installCrd,
  pmemDeployment,
  VERSION_ANNOTATION,
  waitStatus,
  workloadRefs,
} from './pmem-deployment.js';
import {
  claim,
  claimRef,
  deviceNode,
  pvRef,
  stopStack,
  registerNodes,
  storageClass,
  waitBound,
  waitGone,
  type PersistentVolume,
} from './storage.js';
import { waitFor } from './wait.js';

const CR = 'pmem-csi.intel.com';
const A = { version: '0.1.0', image: 'registry.example.org/pmem-csi-driver:v0.1.0' };
const B = { version: '0.2.0', image: 'registry.example.org/pmem-csi-driver:v0.2.0' };
const log = createLogger({ level: 'warn' });
const timings: Record<string, number> = {};

interface Container {
  name: string;
  image: string;
  args?: string[];
}
interface Workload extends KubeObject {
  spec: { template: { spec: { containers: Container[] } } };
}

/** The external-provisioner args of the live controller Deployment, pointed at our host socket. */
async function deployedProvisionerArgs(deployment: Workload, socket: string): Promise<string[]> {
  const sidecar = deployment.spec.template.spec.containers.find((c) => c.name === 'external-provisioner');
  if (sidecar === undefined)
    throw new Error(
      `the controller Deployment has no external-provisioner container: ${deployment.spec.template.spec.containers.map((c) => c.name).join(', ')}`,
    );
  const args: string[] = [];
  for (const arg of sidecar.args ?? []) {
    if (arg.startsWith('--csi-address')) continue;
    // A diagnostics endpoint would listen on every interface in a pod; here it stays on 127.0.0.1.
    if (/^--(http-endpoint|metrics-address)=/.test(arg))
      args.push(`${arg.split('=')[0]}=127.0.0.1:${await freePort()}`);
    else args.push(arg);
  }
  return [`--csi-address=${socket}`, ...args];
}

const obsoleteStatefulSet = (name: string, owner: KubeObject | undefined): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: {
    name,
    namespace: DRIVER_NAMESPACE,
    labels: { [LABEL_KEYS.instance]: CR, [LABEL_KEYS.managedBy]: FIELD_MANAGER, [LABEL_KEYS.name]: 'pmem-csi' },
    ...(owner === undefined
      ? {}
      : {
          ownerReferences: [
            {
              apiVersion: API_GROUP_VERSION,
              kind: KIND,
              name: CR,
              uid: owner.metadata.uid ?? '',
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        }),
  },
  spec: {
    replicas: 0,
    serviceName: name,
    selector: { matchLabels: { 'e2e-obsolete': name } },
    template: {
      metadata: { labels: { 'e2e-obsolete': name } },
      spec: { containers: [{ name: 'c', image: 'registry.example.org/old:v0' }] },
    },
  },
});

describe('cluster: operator-managed upgrade', () => {
  let cluster: KwokCluster;
  let stack: LocalStack;
  let operator: OperatorRun | undefined;
  let provisioner: HostProcess | undefined;
  let pv: PersistentVolume;
  const uids = new Map<string, string>();
  const why = (): string => `provisioner: ${tail(provisioner?.log() ?? '', 4)}`;

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error(
        'the upgrade scenario runs our node drivers on emulated PMEM: needs root and loop devices (CI runs as root)',
      );
    const started = Date.now();
    cluster = await createCluster({ suite: 'upgrade' });
    timings['cluster create (kwokctl until API)'] = cluster.timings.createMs;
    timings['cluster ready (nodes Ready)'] = cluster.timings.nodesReadyMs;
    await installCrd(cluster.kube);
    await ensureNamespace(cluster.kube, DRIVER_NAMESPACE);
    stack = await startLocalStack(
      join(cluster.dir, 'stack'),
      'emulated',
      log,
      cluster.nodes.map((n) => [n, 256 * MiB] as const),
    );
    await registerNodes(cluster.kube, cluster.nodes);
    await cluster.kube.apply(storageClass('pmem-immediate', 'Immediate'));
    // Storage capacity is tracked for late-binding classes only.
    await cluster.kube.apply(storageClass('pmem-late', 'WaitForFirstConsumer'));
    timings['set-up total'] = Date.now() - started;
  }, 300_000);

  afterAll(async () => {
    await provisioner?.stop().catch(() => undefined);
    await operator?.stop().catch(() => undefined);
    await stopStack(stack);
    await cluster?.delete();
    printTimings('upgrade', timings);
  }, 120_000);

  it(`operator ${A.version} deploys the driver and reaches Running`, async () => {
    const started = Date.now();
    const { kube } = cluster;
    operator = await startOperator(cluster, { version: A.version, driverImage: A.image });
    await kube.apply(pmemDeployment(CR, { deviceMode: 'lvm' }));
    await waitStatus(kube, CR, { what: 'phase Running', ok: (c) => c.status?.phase === 'Running', timeoutMs: 120_000 });
    const found = await existing(kube, expectedObjects(CR));
    expect(found.size).toBe(expectedObjects(CR).length);
    for (const [what, o] of found) {
      expect({ what, version: o.metadata.annotations?.[VERSION_ANNOTATION] }).toEqual({ what, version: A.version });
      uids.set(what, o.metadata.uid ?? '');
    }
    timings[`operator ${A.version}: deploy to Running`] = Date.now() - started;
  }, 180_000);

  it('provisions a volume through external-provisioner run as deployed (its args, its ServiceAccount)', async () => {
    const started = Date.now();
    const { kube } = cluster;
    const names = deploymentObjectNames(CR);
    const deployment = await kube.must<Workload>(workloadRefs(CR).deployment);
    const args = await deployedProvisionerArgs(deployment, stack.controllerSocket);
    const [pod] = await kube.list('v1', 'Pod', {
      namespace: DRIVER_NAMESPACE,
      labelSelector: 'app.kubernetes.io/component=controller',
    });
    if (pod === undefined) throw new Error('no (simulated) controller pod');
    const kubeconfig = await serviceAccountKubeconfig(cluster, kube, DRIVER_NAMESPACE, names.controllerServiceAccount);
    provisioner = startProvisioner(cluster, {
      csiSocket: stack.controllerSocket,
      args: args.slice(1),
      kubeconfig,
      env: { NAMESPACE: DRIVER_NAMESPACE, POD_NAME: pod.metadata.name },
    });
    await kube.apply(claim('before-upgrade', 'pmem-immediate', '64Mi'));
    pv = await waitBound(kube, 'before-upgrade', 120_000, why);
    const handle = pv.spec.csi?.volumeHandle ?? '';
    expect(deviceNode(stack, handle)).toBeDefined();
    // Storage capacity tracking works with the operator's RBAC and owner lookup (pod -> ReplicaSet -> Deployment).
    type Capacity = KubeObject & {
      storageClassName?: string;
      nodeTopology?: { matchLabels?: Record<string, string> };
      capacity?: string;
      maximumVolumeSize?: string;
    };
    const capacities = await waitFor(
      'a CSIStorageCapacity object per node for the late-binding class',
      async () => {
        const list = (
          await kube.list<Capacity>('storage.k8s.io/v1', 'CSIStorageCapacity', { namespace: DRIVER_NAMESPACE })
        ).filter((c) => c.storageClassName === 'pmem-late' && c.capacity !== undefined);
        return list.length === cluster.nodes.length ? list : undefined;
      },
      { timeoutMs: 60_000, describe: why },
    );
    expect(capacities.map((c) => c.nodeTopology?.matchLabels?.['pmem-csi.intel.com/node']).sort()).toEqual(
      [...cluster.nodes].sort(),
    );
    expect(capacities.map((c) => c.metadata.ownerReferences?.map((o) => `${o.kind}/${o.name}`))).toEqual(
      capacities.map(() => [`Deployment/${names.controllerDeployment}`]),
    );
    timings['provisioning as deployed'] = Date.now() - started;
  }, 240_000);

  it(`operator ${B.version} updates every object in place, removes obsolete ones and keeps the volume`, async () => {
    const started = Date.now();
    const { kube } = cluster;
    await operator?.stop();
    operator = undefined;
    const cr = await kube.must(crRef(CR));
    // Objects of a kind an older operator created (the Go operator's StatefulSet): one ours, one not
    // owned by the CR (someone else's, merely labelled alike), which must survive.
    await kube.apply(obsoleteStatefulSet('pmem-csi-intel-com-controller-old', cr));
    await kube.apply(obsoleteStatefulSet('unowned-lookalike', undefined));
    const obsolete: Ref = {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      name: 'pmem-csi-intel-com-controller-old',
      namespace: DRIVER_NAMESPACE,
    };
    const foreign: Ref = { ...obsolete, name: 'unowned-lookalike' };
    // Without an operator the driver stays as it is.
    expect((await existing(kube, expectedObjects(CR))).size).toBe(expectedObjects(CR).length);

    operator = await startOperator(cluster, { version: B.version, driverImage: B.image });
    const refs = expectedObjects(CR);
    await waitFor(
      `every object to carry operator version ${B.version}`,
      async () => {
        const found = await existing(kube, refs);
        return [...found.values()].every((o) => o.metadata.annotations?.[VERSION_ANNOTATION] === B.version) &&
          found.size === refs.length
          ? true
          : undefined;
      },
      {
        timeoutMs: 90_000,
        describe: async () =>
          [...(await existing(kube, refs)).entries()]
            .filter(([, o]) => o.metadata.annotations?.[VERSION_ANNOTATION] !== B.version)
            .map(([k]) => k)
            .join(', '),
      },
    );
    const after = await existing(kube, refs);
    // Updated, not recreated: same UIDs (workloads roll their pods instead of disappearing).
    for (const ref of Object.values(workloadRefs(CR)))
      expect({ what: describeRef(ref), uid: after.get(describeRef(ref))?.metadata.uid }).toEqual({
        what: describeRef(ref),
        uid: uids.get(describeRef(ref)),
      });
    const changedUids = [...after.entries()].filter(([k, o]) => uids.get(k) !== o.metadata.uid).map(([k]) => k);
    expect(changedUids).toEqual([]);
    const ds = after.get(describeRef(workloadRefs(CR).daemonSet)) as Workload;
    expect(ds.spec.template.spec.containers.find((c) => c.name === 'pmem-driver')?.image).toBe(B.image);
    await waitGone(kube, obsolete, 60_000, () => tail(operator?.process.log() ?? '', 5));
    expect(await kube.get(foreign)).toBeDefined();
    const running = await waitStatus(kube, CR, {
      what: 'phase Running after the rollout',
      ok: (c) => c.status?.phase === 'Running' && conditionIs(c, 'DriverDeployed', 'True'),
      timeoutMs: 180_000,
    });
    expect(running.status?.observedGeneration).toBe(running.metadata.generation);

    // The volume made before the upgrade is untouched.
    const pvNow = await kube.must<PersistentVolume>(pvRef(pv.metadata.name));
    expect(pvNow.metadata.uid).toBe(pv.metadata.uid);
    expect(pvNow.status?.phase).toBe('Bound');
    expect(deviceNode(stack, pv.spec.csi?.volumeHandle ?? '')).toBeDefined();
    timings[`upgrade to ${B.version}: until Running`] = Date.now() - started;
  }, 300_000);

  it('still provisions and deletes after the upgrade; the old volume is deleted with its device', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.apply(claim('after-upgrade', 'pmem-immediate', '32Mi'));
    const fresh = await waitBound(kube, 'after-upgrade', 120_000, why);
    for (const [name, volume] of [
      ['after-upgrade', fresh],
      ['before-upgrade', pv],
    ] as const) {
      await kube.delete(claimRef(name));
      await waitGone(kube, pvRef(volume.metadata.name), 90_000, why);
      const handle = volume.spec.csi?.volumeHandle ?? '';
      await waitFor(
        `the device of ${handle} to be removed`,
        () => (deviceNode(stack, handle) === undefined ? true : undefined),
        { timeoutMs: 30_000 },
      );
    }
    timings['provision + delete after upgrade'] = Date.now() - started;
  }, 240_000);
});
