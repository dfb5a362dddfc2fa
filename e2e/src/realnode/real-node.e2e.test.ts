// Real-node tier: the whole stack as users run it. Our images (e2e/tools/images.sh), a real
// kubelet with containerd + runc (e2e/src/realnode/real-node.ts) joined to the cluster tier's
// control plane, the Helm chart installing the operator, the operator deploying the driver in
// emulated device mode (loop-backed files: this machine has no NVDIMM), and pods that write and
// read volumes through the kubelet, NodeStage/NodePublish and real mounts.
// Needs root (containers, mounts, loop devices, iptables); CI runs as root. One test file: the
// scenarios build on each other (install, then provisioning, then failure and removal), and the
// last one tears the node down and asserts that nothing was left behind.
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import {
  CONTAINER_NAMES,
  DEFAULT_DRIVER_NAME,
  METRICS_PORT,
  deploymentObjectNames,
  resizerLeaseName,
  topologyKey,
} from '@pmem-csi/api';
import { listLoopDevices } from '@pmem-csi/node';
import { boundTo, fileIdentity } from '@pmem-csi/node/testing';
import { MiB } from '@pmem-csi/csi';
import { HostRunner } from '@pmem-csi/runtime';
import { REPO_ROOT } from '../cluster/components.js';
import { clusterHelm, createCluster, ensureNamespace, printTimings, type KwokCluster } from '../cluster/harness.js';
import type { KubeObject } from '../cluster/kube.js';
import {
  VERSION_ANNOTATION,
  conditionIs,
  crRef,
  describeStatus,
  existing,
  expectedObjects,
  pmemDeployment,
  waitStatus,
  workloadRefs,
  type PmemDeployment,
} from '../cluster/pmem-deployment.js';
import { runTool } from '../cluster/processes.js';
import { leaseHolder, provisionerLeaseRef, PvcStream, settledVolumes, volumesGone } from '../cluster/pvc-stream.js';
import { claimRef, pvRef, waitBound, waitGone, type PersistentVolume } from '../cluster/storage.js';
import { sleep, waitFor } from '../cluster/wait.js';
import { toolPath } from '../tools.js';
import { NODE_NETWORK } from './network.js';
import { POD_LOGS_SUBDIR } from './components.js';
import {
  CAP_SYS_RESOURCE,
  EXT4_NEEDS_SYS_RESOURCE,
  describeClaim,
  afterGrowthScript,
  growWatcherScript,
  inBoundingSet,
  quantityBytes,
  watcherSizes,
  type ExpandingClaim,
} from './expansion.js';
import {
  CHART,
  CR_NAME,
  DRIVER_NAMESPACE,
  helmInstallArgs,
  OPERATOR_NAMESPACE,
  RELEASE,
  splitRef,
  uninstallStack,
} from './install.js';
import { leftovers, startRealNode, type RealNode } from './real-node.js';
import { UPGRADE_VERSION, builtImages, type BuiltImage } from './images.js';
import {
  RolloutObserver,
  containerLog,
  crRunning,
  daemonSetRolled,
  deploymentRolled,
  imageOf,
  isLive,
  isReady,
  podState,
  type Invariant,
  type LogLine,
  type Milestone,
  type RolloutSnapshot,
  type Workload,
} from './rollout.js';
import {
  POD_LABEL,
  VOLUME_USER_READY_FILE,
  claimObject as rwoClaim,
  podRef,
  podResult,
  podsReady,
  scriptPod,
  volumeUserScript,
  type Pod,
} from './workloads.js';

const APP_NAMESPACE = 'real-node-app';
/** Where the emulated device mode keeps its backing files on the node (spec's state dir). */
const DRIVER_STATE_DIR = `/var/lib/${DEFAULT_DRIVER_NAME}`;
const IMAGE_NAMES = ['driver', 'operator', 'csi-provisioner', 'csi-resizer', 'registrar', 'pause'] as const;
/** Controller replicas of the failover scenario: after one kill there is still a warm standby for the next. */
const FAILOVER_REPLICAS = 3;
/** Issue 17: provisioning resumes within this long after the active controller is killed. */
const RESUME_LIMIT_MS = 15_000;
/** What a node driver's /status says (packages/node NodeStatus), as far as the tests read it. */
interface NodeDriverStatus {
  version: string;
  registration?: { registered: boolean; registeredReplicas: number; replicas: number };
}
/** What the controller's /status says (packages/controller ControllerStatus), as far as the tests read it. */
interface ControllerDriverStatus {
  startedAt: string;
  settled: boolean;
  volumes: number;
  nodes: Array<{ nodeId: string; state: string; version: string }>;
}
/** GET /status of a driver pod's HTTP endpoint (METRICS_PORT on the pod's address, reachable from the node's bridge). */
async function driverStatus<T>(pod: Pod): Promise<T> {
  const ip = pod.status?.podIP;
  if (ip === undefined || ip === '') throw new Error(`pod ${pod.metadata.name} has no IP address yet`);
  const url = `http://${ip}:${METRICS_PORT}/status`;
  const r = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  if (!r.ok) throw new Error(`GET ${url}: HTTP ${r.status} ${(await r.text()).trim()}`);
  return (await r.json()) as T;
}
const timings: Record<string, number> = {};
const HOST = new HostRunner();
const STORAGE_CLASS: KubeObject = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'pmem-real' },
  provisioner: DEFAULT_DRIVER_NAME,
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'WaitForFirstConsumer',
  // Emulated mode grows volumes (external-resizer -> ControllerExpandVolume, the kubelet's NodeExpandVolume).
  allowVolumeExpansion: true,
  parameters: { 'csi.storage.k8s.io/fstype': 'ext4' },
} as KubeObject;
/** The same for xfs (volumes of at least 300 MiB, mkfs.xfs's minimum). */
const XFS_STORAGE_CLASS: KubeObject = {
  ...STORAGE_CLASS,
  metadata: { name: 'pmem-real-xfs' },
  parameters: { 'csi.storage.k8s.io/fstype': 'xfs' },
} as KubeObject;

describe('real node: our images under a real kubelet, installed with Helm, emulated PMEM', () => {
  let images: ReadonlyMap<string, BuiltImage> | undefined;
  let cluster: KwokCluster;
  let node: RealNode | undefined;
  let nodeLeft: string[] | undefined;

  const helm = (args: readonly string[], timeoutMs = 240_000): Promise<string> => clusterHelm(cluster)(args, timeoutMs);
  const image = (name: (typeof IMAGE_NAMES)[number]): BuiltImage => {
    const i = images?.get(name);
    if (i?.archive === undefined) throw new Error(`image ${name} missing or without an archive`);
    return i;
  };
  const cr = (): Promise<PmemDeployment | undefined> => cluster.kube.get<PmemDeployment>(crRef(CR_NAME));
  const why = async (): Promise<string> => describeStatus(await cr());
  /** Every backing file name seen during the run (volume ids are unique, so the name identifies ours). */
  const seenVolumeFiles = new Set<string>();
  /** The emulated volumes' backing files on the node. */
  const emulatedDevices = async (): Promise<string[]> => {
    const dir = join(DRIVER_STATE_DIR, 'emulated');
    const files = existsSync(dir) ? (await readdir(dir)).filter((f) => f.endsWith('.img')) : [];
    for (const f of files) seenVolumeFiles.add(f);
    return files;
  };
  /**
   * Loop devices backed by the driver's files: "loopN -> <file>[ (deleted)]", sorted. Matched by the
   * file's identity (device, inode) as the driver does, and, for files that are gone, by the name
   * of a volume file seen earlier: once the driver container that attached a device is gone, the
   * kernel reports its backing file relative to that container's vanished mount ("/emulated/<id>.img").
   */
  const loopDevicesOfDriver = async (): Promise<string[]> => {
    const loops = await listLoopDevices(HOST);
    const found = new Set<string>();
    for (const f of await emulatedDevices()) {
      const file = join(DRIVER_STATE_DIR, 'emulated', f);
      for (const l of boundTo(loops, file, await fileIdentity(file))) found.add(`${l.name} -> ${f}`);
    }
    for (const l of loops) {
      const f = basename(l.backFile);
      if (seenVolumeFiles.has(f) && (l.deleted || !l.backFile.startsWith(`${DRIVER_STATE_DIR}/`)))
        found.add(`${l.name} -> ${f}${l.deleted ? ' (deleted)' : ''}`);
    }
    return [...found].sort();
  };
  /** PVC -> a pod writes -> the next pod reads it back -> PVC deleted -> PV and device gone. */
  const roundTrip = async (prefix: string, because: () => Promise<string>): Promise<void> => {
    const { kube } = cluster;
    const claim = `${prefix}-data`;
    await kube.apply(STORAGE_CLASS);
    await kube.apply(claimObject(claim, '32Mi', 'pmem-real'));
    const mount = {
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
    };
    const token = `${prefix}-${Date.now()}`;
    for (const [pod, script] of [
      [`${prefix}-writer`, `echo ${token} > /data/f; sync; cat /data/f > /dev/termination-log`],
      [`${prefix}-reader`, 'cat /data/f > /dev/termination-log'],
    ] as const) {
      await kube.create(
        scriptPod({ name: pod, namespace: APP_NAMESPACE, image: image('driver').ref, script, ...mount }),
      );
      expect(await podResult(kube, podRef(pod, APP_NAMESPACE), 240_000, because)).toBe(token);
      await kube.delete(podRef(pod, APP_NAMESPACE));
      await waitGone(kube, podRef(pod, APP_NAMESPACE), 120_000);
    }
    const pvName = (
      await kube.must<KubeObject & { spec: { volumeName: string } }>({ ...claimRef(claim), namespace: APP_NAMESPACE })
    ).spec.volumeName;
    const handle = (await kube.must<PersistentVolume>(pvRef(pvName))).spec.csi?.volumeHandle ?? '';
    await kube.delete({ ...claimRef(claim), namespace: APP_NAMESPACE });
    await waitGone(kube, pvRef(pvName), 120_000, because);
    await waitFor(
      `the emulated device file of ${handle} to be removed`,
      async () => ((await emulatedDevices()).includes(`${handle}.img`) ? undefined : true),
      { timeoutMs: 60_000 },
    );
  };
  const driverNodePod = async (): Promise<Pod> => {
    const pods = await cluster.kube.list<Pod>('v1', 'Pod', {
      namespace: DRIVER_NAMESPACE,
      labelSelector: 'app.kubernetes.io/component=node',
    });
    if (pods.length !== 1 || pods[0] === undefined)
      throw new Error(`expected one node driver pod, found ${pods.map((p) => p.metadata.name).join(', ') || 'none'}`);
    return pods[0];
  };

  /** A claim of `size` in the app namespace. */
  const claimObject = (name: string, size: string, storageClassName: string): KubeObject =>
    rwoClaim({ name, namespace: APP_NAMESPACE, storageClassName, size });
  const claimOf = (name: string): Promise<ExpandingClaim> =>
    cluster.kube.must<ExpandingClaim>({ ...claimRef(name), namespace: APP_NAMESPACE });
  /** What a user's `kubectl patch pvc <name> -p '{"spec":{"resources":{"requests":{"storage":"<size>"}}}}'` sends. */
  const resizeClaim = (name: string, size: string): Promise<ExpandingClaim> =>
    cluster.kube.merge<ExpandingClaim>({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: APP_NAMESPACE },
      spec: { resources: { requests: { storage: size } } },
    });
  /** The bound PV of a claim, its volume handle and the emulated device's backing file on the node. */
  const volumeOf = async (name: string): Promise<{ pv: string; handle: string; backingFile: string }> => {
    const pv = (await claimOf(name)).spec.volumeName ?? '';
    const handle = (await cluster.kube.must<PersistentVolume>(pvRef(pv))).spec.csi?.volumeHandle ?? '';
    return { pv, handle, backingFile: join(DRIVER_STATE_DIR, 'emulated', `${handle}.img`) };
  };
  const pvBytes = async (pv: string): Promise<number> =>
    quantityBytes((await cluster.kube.must<PersistentVolume>(pvRef(pv))).spec.capacity?.storage);
  /** Wait until the claim's PV has `bytes` (external-resizer wrote ControllerExpandVolume's answer). */
  const waitPvGrown = (claim: string, pv: string, bytes: number): Promise<true> =>
    waitFor(
      `PV ${pv} of claim ${claim} to have ${bytes / MiB} MiB`,
      async () => ((await pvBytes(pv)) === bytes ? true : undefined),
      { timeoutMs: 120_000, intervalMs: 250, describe: async () => describeClaim(await claimOf(claim)) },
    );
  /** Wait until the claim's status.capacity is `bytes`: the kubelet's NodeExpandVolume has succeeded. */
  const waitClaimGrown = (claim: string, bytes: number): Promise<ExpandingClaim> =>
    waitFor(
      `claim ${claim} to report status.capacity ${bytes / MiB} MiB`,
      async () => {
        const c = await claimOf(claim);
        return quantityBytes(c.status?.capacity?.storage) === bytes ? c : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 250, describe: async () => describeClaim(await claimOf(claim)) },
    );
  /** Delete pods and claim; wait until the PV and the emulated device are gone. */
  const removeClaim = async (claim: string, pods: readonly string[]): Promise<void> => {
    const { kube } = cluster;
    const pv = (await kube.get<ExpandingClaim>({ ...claimRef(claim), namespace: APP_NAMESPACE }))?.spec.volumeName;
    for (const name of pods) await kube.delete(podRef(name, APP_NAMESPACE));
    for (const name of pods) await waitGone(kube, podRef(name, APP_NAMESPACE), 120_000);
    await kube.delete({ ...claimRef(claim), namespace: APP_NAMESPACE });
    if (pv !== undefined) await waitGone(kube, pvRef(pv), 120_000, why);
    await waitFor(
      'no emulated device and no loop device of the driver left',
      async () =>
        (await emulatedDevices()).length === 0 && (await loopDevicesOfDriver()).length === 0 ? true : undefined,
      { timeoutMs: 60_000 },
    );
  };
  const mountOf = (claim: string): { volumes: unknown[]; volumeMounts: unknown[] } => ({
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
    volumeMounts: [{ name: 'data', mountPath: '/data' }],
  });

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error(
        'the real-node tier runs containerd, the kubelet, mounts and loop devices: needs root (CI runs as root)',
      );
    const built = builtImages(IMAGE_NAMES);
    images = built.images;
    for (const w of built.warnings) process.stdout.write(`${w}\n`);
    const started = Date.now();
    cluster = await createCluster({ suite: 'real', nodes: [], podAccess: NODE_NETWORK });
    timings['control plane'] = Date.now() - started;
    node = await startRealNode({
      cluster,
      imageArchives: IMAGE_NAMES.map((n) => image(n).archive ?? ''),
      sandboxImage: image('pause').ref,
      labels: { storage: 'pmem' },
    });
    for (const [phase, ms] of Object.entries(node.timings)) timings[`node: ${phase}`] = ms;
    await ensureNamespace(cluster.kube, APP_NAMESPACE);
  }, 600_000);

  afterAll(async () => {
    if (node !== undefined && nodeLeft === undefined)
      nodeLeft = await node.stop().catch((e: Error) => [`stop failed: ${e.message}`]);
    // A failed run may leave volumes: their loop devices go with the node's clean-up above (and here).
    // Only after a node of this run: when startRealNode refused because another run's node holds the
    // machine, the driver's state directory and loop devices are that run's (same host path).
    if (node !== undefined) {
      for (const loop of await loopDevicesOfDriver().catch(() => []))
        await runTool('losetup', ['--detach', loop.split(' ')[0] ?? '']).catch(() => undefined);
      await rm(DRIVER_STATE_DIR, { recursive: true, force: true }).catch(() => undefined);
    }
    await cluster?.delete().catch(() => undefined);
    printTimings('real node', timings);
    process.stdout.write(
      `images: ${IMAGE_NAMES.map((n) => `${n} ${((images?.get(n)?.sizeBytes ?? 0) / 1e6).toFixed(0)} MB`).join(', ')}\n`,
    );
  }, 300_000);

  it('helm install: the operator pod runs, the driver pods run and are ready, the status reports it', async () => {
    const started = Date.now();
    await helm(helmInstallArgs((n) => image(n).ref, '1Gi'));
    timings['helm install --wait (operator ready)'] = Date.now() - started;
    const operatorPods = await podsReady(cluster.kube, {
      namespace: OPERATOR_NAMESPACE,
      selector: 'app.kubernetes.io/component=operator',
      count: 1,
      timeoutMs: 60_000,
    });
    expect(operatorPods[0]?.spec.nodeName).toBe(node?.name);

    const running = await waitStatus(cluster.kube, CR_NAME, {
      what: 'phase Running with both components Ready',
      ok: (d) =>
        d.status?.phase === 'Running' &&
        (d.status.driverComponents ?? []).every((c) => c.status === 'Ready') &&
        (d.status.driverComponents ?? []).length === 2,
      timeoutMs: 240_000,
    });
    timings['driver Running (from helm install)'] = Date.now() - started;
    const status = running.status ?? {};
    expect(status.driverComponents?.map((c) => [c.component, c.status, c.desired, c.ready])).toEqual([
      ['Controller', 'Ready', 1, 1],
      ['Node', 'Ready', 1, 1],
    ]);
    for (const type of ['CertsReady', 'DriverDeployed', 'EmulatedPmem'])
      expect([type, conditionIs(running, type, 'True')]).toEqual([type, true]);
    // The operator issued the certificates itself: there is nothing user-supplied to verify.
    expect(status.conditions?.find((c) => c.type === 'CertsVerified')).toBeUndefined();
    const driverPods = await cluster.kube.list<Pod>('v1', 'Pod', { namespace: DRIVER_NAMESPACE });
    expect(driverPods.map((p) => [p.spec.nodeName, p.status?.phase])).toEqual(
      driverPods.map(() => [node?.name, 'Running']),
    );
    expect(driverPods.length).toBe(2);
  }, 600_000);

  it('the kubelet registered the node plugin (CSINode by the kubelet) and capacity is published', async () => {
    const csiNode = await waitFor(
      `CSINode ${node?.name} with driver ${DEFAULT_DRIVER_NAME}`,
      async () => {
        const n = await cluster.kube.get<
          KubeObject & { spec: { drivers?: Array<{ name: string; nodeID: string; topologyKeys?: string[] }> } }
        >({ apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', name: node?.name ?? '' });
        return n?.spec.drivers?.some((d) => d.name === DEFAULT_DRIVER_NAME) ? n : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(csiNode.spec.drivers?.find((d) => d.name === DEFAULT_DRIVER_NAME)).toMatchObject({
      nodeID: node?.name,
      topologyKeys: [topologyKey(DEFAULT_DRIVER_NAME)],
    });
    // Created by the kubelet (managed fields), not by a test.
    expect(
      (csiNode.metadata as { managedFields?: Array<{ manager: string }> }).managedFields?.map((f) => f.manager),
    ).toContain('kubelet');
    const nodeObject = await cluster.kube.must({ apiVersion: 'v1', kind: 'Node', name: node?.name ?? '' });
    expect(nodeObject.metadata.labels?.[topologyKey(DEFAULT_DRIVER_NAME)]).toBe(node?.name);
    // external-provisioner publishes capacity per StorageClass of the driver (and node topology).
    await cluster.kube.apply(STORAGE_CLASS);
    const capacities = await waitFor(
      'CSIStorageCapacity objects with capacity on the real node',
      async () => {
        const all = await cluster.kube.list<
          KubeObject & { capacity?: string; nodeTopology?: { matchLabels?: Record<string, string> } }
        >('storage.k8s.io/v1', 'CSIStorageCapacity', { namespace: DRIVER_NAMESPACE });
        const mine = all.filter(
          (c) =>
            c.nodeTopology?.matchLabels?.[topologyKey(DEFAULT_DRIVER_NAME)] === node?.name &&
            c.capacity !== undefined &&
            c.capacity !== '0',
        );
        return mine.length > 0 ? mine : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(capacities[0]?.capacity).toMatch(/^\d+(Ki|Mi|Gi)?$/);
  }, 240_000);

  it('dynamic provisioning: a file written by one pod is read back by the next; the PVC deleted removes PV and device', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.apply(STORAGE_CLASS);
    await kube.apply({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: APP_NAMESPACE },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'pmem-real',
        resources: { requests: { storage: '64Mi' } },
      },
    });
    const mount = {
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
    };
    const token = `written-${Date.now()}`;
    await kube.create(
      scriptPod({
        name: 'writer',
        namespace: APP_NAMESPACE,
        image: image('driver').ref,
        script: `echo ${token} > /data/file; sync; df -P /data | tail -1 | awk '{print $2}' > /dev/termination-log`,
        ...mount,
      }),
    );
    const kib = await podResult(kube, podRef('writer', APP_NAMESPACE), 240_000, why);
    timings['PVC -> writer pod done'] = Date.now() - started;
    // A 64 MiB ext4 filesystem: its size in 1 KiB blocks, a little under 64 Mi for metadata.
    expect(Number(kib)).toBeGreaterThan(50_000);
    expect(Number(kib)).toBeLessThanOrEqual(65_536);
    const pv = await waitBound(kube, 'data', 10_000).catch(async () =>
      kube.must<PersistentVolume>(
        pvRef(
          (
            await kube.must<KubeObject & { spec: { volumeName: string } }>({
              ...claimRef('data'),
              namespace: APP_NAMESPACE,
            })
          ).spec.volumeName,
        ),
      ),
    );
    await kube.delete(podRef('writer', APP_NAMESPACE));
    await waitGone(kube, podRef('writer', APP_NAMESPACE), 120_000);

    await kube.create(
      scriptPod({
        name: 'reader',
        namespace: APP_NAMESPACE,
        image: image('driver').ref,
        script: 'cat /data/file > /dev/termination-log',
        ...mount,
      }),
    );
    expect(await podResult(kube, podRef('reader', APP_NAMESPACE), 180_000, why)).toBe(token);
    await kube.delete(podRef('reader', APP_NAMESPACE));
    await waitGone(kube, podRef('reader', APP_NAMESPACE), 120_000);

    await kube.delete({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'data', namespace: APP_NAMESPACE });
    await waitGone(kube, pvRef(pv.metadata.name), 120_000, why);
    const handle = pv.spec.csi?.volumeHandle ?? '';
    await waitFor(
      `the emulated device file of ${handle} to be removed`,
      () => (existsSync(join(DRIVER_STATE_DIR, 'emulated', `${handle}.img`)) ? undefined : true),
      { timeoutMs: 60_000 },
    );
    timings['provisioning round trip'] = Date.now() - started;
  }, 600_000);

  it('a raw block volume: the pod sees a block device of the claimed size and writes to it', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.apply({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'block', namespace: APP_NAMESPACE },
      spec: {
        accessModes: ['ReadWriteOnce'],
        volumeMode: 'Block',
        storageClassName: 'pmem-real',
        resources: { requests: { storage: '32Mi' } },
      },
    });
    await kube.create(
      scriptPod({
        name: 'block-user',
        namespace: APP_NAMESPACE,
        image: image('driver').ref,
        script:
          'test -b /dev/pmem-block; echo block-data | dd of=/dev/pmem-block conv=fsync status=none; test "$(head -c 10 /dev/pmem-block)" = block-data; blockdev --getsize64 /dev/pmem-block > /dev/termination-log',
        volumes: [{ name: 'block', persistentVolumeClaim: { claimName: 'block' } }],
        volumeDevices: [{ name: 'block', devicePath: '/dev/pmem-block' }],
      }),
    );
    expect(Number(await podResult(kube, podRef('block-user', APP_NAMESPACE), 240_000, why))).toBeGreaterThanOrEqual(
      32 * 1024 ** 2,
    );
    await kube.delete(podRef('block-user', APP_NAMESPACE));
    await waitGone(kube, podRef('block-user', APP_NAMESPACE), 120_000);
    const pvName = (
      await kube.must<KubeObject & { spec: { volumeName: string } }>({ ...claimRef('block'), namespace: APP_NAMESPACE })
    ).spec.volumeName;
    await kube.delete({ ...claimRef('block'), namespace: APP_NAMESPACE });
    await waitGone(kube, pvRef(pvName), 120_000, why);
    timings['raw block round trip'] = Date.now() - started;
  }, 400_000);

  it('a CSI ephemeral inline volume lives and dies with its pod', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.create(
      scriptPod({
        name: 'ephemeral-user',
        namespace: APP_NAMESPACE,
        image: image('driver').ref,
        script:
          'echo scratch > /scratch/f; test "$(cat /scratch/f)" = scratch; df -P /scratch | tail -1 | awk \'{print $2}\' > /dev/termination-log',
        volumes: [
          { name: 'scratch', csi: { driver: DEFAULT_DRIVER_NAME, fsType: 'ext4', volumeAttributes: { size: '32Mi' } } },
        ],
        volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
      }),
    );
    const kib = Number(await podResult(kube, podRef('ephemeral-user', APP_NAMESPACE), 240_000, why));
    expect(kib).toBeGreaterThan(20_000);
    expect(kib).toBeLessThanOrEqual(32_768);
    await kube.delete(podRef('ephemeral-user', APP_NAMESPACE));
    await waitGone(kube, podRef('ephemeral-user', APP_NAMESPACE), 120_000);
    // Unpublished with the pod: no emulated device remains on the node.
    await waitFor(
      'no emulated device file left after the ephemeral pod',
      async () => ((await emulatedDevices()).length === 0 ? true : undefined),
      { timeoutMs: 60_000, describe: async () => (await emulatedDevices()).join(', ') },
    );
    timings['ephemeral round trip'] = Date.now() - started;
  }, 400_000);

  it('volume expansion, ext4: a claim in use by a running pod patched from 64Mi to 128Mi grows its volume, and its filesystem online where this machine allows it, else at the next stage; the data stays; a shrink is refused', async () => {
    const started = Date.now();
    const { kube } = cluster;
    const claim = 'grow-ext4';
    // Removed however the scenario ends: a volume left behind would fail the scenarios that follow.
    let cleaned = false;
    try {
      // external-resizer runs in the controller pod and holds its own Lease, named after the driver.
      const controller = await podsReady(kube, {
        namespace: DRIVER_NAMESPACE,
        selector: `app.kubernetes.io/instance=${CR_NAME},app.kubernetes.io/component=controller`,
        count: 1,
        timeoutMs: 60_000,
      });
      const resizerLease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        name: resizerLeaseName(CR_NAME),
        namespace: DRIVER_NAMESPACE,
      };
      expect(resizerLease.name).toBe('external-resizer-pmem-csi-intel-com');
      expect(await waitFor('the resizer Lease to have a holder', () => leaseHolder(kube, resizerLease))).toBe(
        controller[0]?.metadata.name,
      );
      // The CR names the pod that resizes beside the one that provisions (one replica: the same pod).
      const named = await waitFor(
        'the CR to name the replica that resizes',
        async () => {
          const c = (await cr())?.status?.driverComponents?.find((x) => x.component === 'Controller');
          return c?.activeResizer === undefined ? undefined : c;
        },
        { timeoutMs: 60_000 },
      );
      expect([named.active, named.activeResizer]).toEqual([controller[0]?.metadata.name, controller[0]?.metadata.name]);
      await kube.apply(STORAGE_CLASS);
      await kube.apply(claimObject(claim, '64Mi', 'pmem-real'));
      const token = `ext4-${Date.now()}`;
      await kube.create(
        scriptPod({
          name: 'grow-ext4',
          namespace: APP_NAMESPACE,
          image: image('driver').ref,
          // Once grown: 80 MiB more than the old 64 MiB filesystem could take.
          script: growWatcherScript(token, 80),
          readyWhenFile: '/tmp/written',
          ...mountOf(claim),
        }),
      );
      await podsReady(kube, {
        namespace: APP_NAMESPACE,
        selector: `${POD_LABEL}=grow-ext4`,
        count: 1,
        timeoutMs: 240_000,
      });
      const { pv, backingFile } = await volumeOf(claim);
      expect((await stat(backingFile)).size).toBe(64 * MiB);

      const t0 = Date.now();
      await resizeClaim(claim, '128Mi');
      await waitPvGrown(claim, pv, 128 * MiB);
      const controllerMs = Date.now() - t0;
      // The device itself grew (emulated: the backing file behind the loop device).
      expect((await stat(backingFile)).size).toBe(128 * MiB);
      let sizes: [number, number];
      if (inBoundingSet(CAP_SYS_RESOURCE)) {
        await waitClaimGrown(claim, 128 * MiB);
        const nodeMs = Date.now() - t0;
        sizes = watcherSizes(await podResult(kube, podRef('grow-ext4', APP_NAMESPACE), 120_000, why));
        process.stdout.write(
          `expansion ext4 64Mi -> 128Mi online: PV grown after ${(controllerMs / 1000).toFixed(1)} s, ` +
            `claim status after ${(nodeMs / 1000).toFixed(1)} s, pod saw ${sizes[0]} -> ${sizes[1]} KiB after ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
        );
        // Grown by the 64 MiB less the new block groups' metadata.
        expect(sizes[1] - sizes[0]).toBeGreaterThan(56 * 1024);
        expect(sizes[1] - sizes[0]).toBeLessThanOrEqual(64 * 1024);
      } else {
        // This machine's bounding set lacks CAP_SYS_RESOURCE, so the node driver does too (containerd
        // and runc cannot add it): the kubelet's NodeExpandVolume is refused naming what is missing,
        // the claim keeps its old capacity, and the mounted filesystem and its data stay as they were.
        const nodePod = (await driverNodePod()).metadata.name;
        /** The first line of the node driver's log that `match` accepts, waited for up to `timeoutMs`. */
        const driverLogLine = (what: string, match: (l: LogLine) => boolean, timeoutMs: number): Promise<LogLine> =>
          waitFor(
            what,
            async () =>
              (
                await containerLog(
                  join(node?.dir ?? '', POD_LOGS_SUBDIR),
                  DRIVER_NAMESPACE,
                  nodePod,
                  CONTAINER_NAMES.driver,
                )
              ).find(match),
            { timeoutMs, describe: async () => describeClaim(await claimOf(claim)) },
          );
        const refusal = await driverLogLine(
          "the node driver's refusal to grow the mounted ext4 filesystem",
          (l) => l.text.includes(EXT4_NEEDS_SYS_RESOURCE),
          180_000,
        );
        expect(refusal.text).toContain('NodeExpandVolume');
        expect(quantityBytes((await claimOf(claim)).status?.capacity?.storage)).toBe(64 * MiB);
        // Another pod on the node (ReadWriteOnce: one node) tells the watcher to stop. From here on
        // both pods may end, and the kubelet unstages the volume as soon as neither uses it — often
        // before the test gets to delete them — so the unstage looked for is any one after this mark.
        const stopping = Date.now();
        await kube.create(
          scriptPod({
            name: 'grow-ext4-stop',
            namespace: APP_NAMESPACE,
            image: image('driver').ref,
            script: 'touch /data/stop; sync; echo stopped > /dev/termination-log',
            ...mountOf(claim),
          }),
        );
        expect(await podResult(kube, podRef('grow-ext4-stop', APP_NAMESPACE), 120_000, why)).toBe('stopped');
        sizes = watcherSizes(await podResult(kube, podRef('grow-ext4', APP_NAMESPACE), 60_000, why));
        process.stdout.write(
          `expansion ext4 64Mi -> 128Mi online: PV grown after ${(controllerMs / 1000).toFixed(1)} s; this machine lacks ` +
            `CAP_SYS_RESOURCE, the node driver refused the filesystem (after ${((refusal.at - t0) / 1000).toFixed(1)} s: ${refusal.text.trim()})\n`,
        );
        expect(sizes[1]).toBe(sizes[0]);
        // Once no pod uses the claim the kubelet unstages it; the next pod's NodeStageVolume grows the
        // ext4 before mounting it (offline: no capability needed), the NodeExpandVolume that follows
        // has nothing left to do, and the claim reaches 128Mi. The data stays; the new space is usable.
        const { handle } = await volumeOf(claim);
        for (const name of ['grow-ext4', 'grow-ext4-stop']) await kube.delete(podRef(name, APP_NAMESPACE));
        for (const name of ['grow-ext4', 'grow-ext4-stop']) await waitGone(kube, podRef(name, APP_NAMESPACE), 120_000);
        // The kubelet unstages the volume once no pod uses it (a moment after the pods are gone, or
        // already when they completed); a pod started before that would find it still staged (and
        // the mounted ext4 still small).
        await driverLogLine(
          'the kubelet to unstage the claim (NodeUnstageVolume in the node driver log)',
          (l) => l.at >= stopping && l.text.includes('volume unstaged') && l.text.includes(handle),
          120_000,
        );
        const t1 = Date.now();
        await kube.create(
          scriptPod({
            name: 'grow-ext4-next',
            namespace: APP_NAMESPACE,
            image: image('driver').ref,
            script: afterGrowthScript(token, 80),
            ...mountOf(claim),
          }),
        );
        const grownKiB = Number(await podResult(kube, podRef('grow-ext4-next', APP_NAMESPACE), 240_000, why));
        await waitClaimGrown(claim, 128 * MiB);
        process.stdout.write(
          `expansion ext4 64Mi -> 128Mi at the next stage: the next pod saw ${grownKiB} KiB and the claim 128Mi after ${((Date.now() - t1) / 1000).toFixed(1)} s\n`,
        );
        expect(grownKiB - sizes[0]).toBeGreaterThan(56 * 1024);
        expect(grownKiB - sizes[0]).toBeLessThanOrEqual(64 * 1024);
      }
      // A 64 MiB ext4 filesystem before: its size in KiB, a little under 64 Mi for metadata.
      expect(sizes[0]).toBeGreaterThan(50_000);
      expect(sizes[0]).toBeLessThanOrEqual(65_536);

      // Kubernetes refuses to shrink a claim below its status.capacity (API validation; nothing reaches the driver).
      await expect(resizeClaim(claim, '32Mi')).rejects.toThrow(
        `PATCH /api/v1/namespaces/${APP_NAMESPACE}/persistentvolumeclaims/${claim}: 422 PersistentVolumeClaim "${claim}" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity`,
      );
      expect(await pvBytes(pv)).toBe(128 * MiB);
      await removeClaim(claim, ['grow-ext4', 'grow-ext4-stop', 'grow-ext4-next']);
      cleaned = true;
    } finally {
      if (!cleaned) await removeClaim(claim, ['grow-ext4', 'grow-ext4-stop', 'grow-ext4-next']).catch(() => undefined);
    }
    timings['expansion ext4'] = Date.now() - started;
  }, 600_000);

  it('volume expansion, xfs: online from 300Mi to 400Mi under a running pod (data kept, the new space usable), then offline to 500Mi while no pod uses it, which the next pod sees', async () => {
    const started = Date.now();
    const { kube } = cluster;
    const claim = 'grow-xfs';
    // Removed however the scenario ends: a volume left behind would fail the scenarios that follow.
    let cleaned = false;
    try {
      await kube.apply(XFS_STORAGE_CLASS);
      await kube.apply(claimObject(claim, '300Mi', 'pmem-real-xfs'));
      const token = `xfs-${Date.now()}`;
      await kube.create(
        scriptPod({
          name: 'grow-xfs',
          namespace: APP_NAMESPACE,
          image: image('driver').ref,
          // Once grown: 280 MiB, more than the old filesystem could take (236 MiB beside its log).
          script: growWatcherScript(token, 280),
          readyWhenFile: '/tmp/written',
          ...mountOf(claim),
        }),
      );
      await podsReady(kube, {
        namespace: APP_NAMESPACE,
        selector: `${POD_LABEL}=grow-xfs`,
        count: 1,
        timeoutMs: 240_000,
      });
      const { pv, backingFile } = await volumeOf(claim);
      expect((await stat(backingFile)).size).toBe(300 * MiB);

      // Online: the pod keeps the volume mounted; the kubelet grows the filesystem under it.
      let t0 = Date.now();
      await resizeClaim(claim, '400Mi');
      await waitPvGrown(claim, pv, 400 * MiB);
      const onlineControllerMs = Date.now() - t0;
      expect((await stat(backingFile)).size).toBe(400 * MiB);
      const grown = await waitClaimGrown(claim, 400 * MiB);
      const onlineNodeMs = Date.now() - t0;
      expect((grown.status?.conditions ?? []).filter((c) => c.type === 'FileSystemResizePending')).toEqual([]);
      const [before, after] = watcherSizes(await podResult(kube, podRef('grow-xfs', APP_NAMESPACE), 120_000, why));
      const onlinePodMs = Date.now() - t0;
      // mkfs.xfs keeps a 64 MiB log in a volume this small (measured: 241664 KiB of 307200); growing
      // adds data blocks only, so the filesystem grows by the 100 MiB less a few allocation-group headers.
      expect(before).toBeGreaterThan((300 - 72) * 1024);
      expect(before).toBeLessThanOrEqual(300 * 1024);
      expect(after - before).toBeGreaterThan(96 * 1024);
      expect(after - before).toBeLessThanOrEqual(100 * 1024);
      await kube.delete(podRef('grow-xfs', APP_NAMESPACE));
      await waitGone(kube, podRef('grow-xfs', APP_NAMESPACE), 120_000);

      // Offline: no pod uses it (unpublished and unstaged). The controller grows the device; the
      // filesystem waits for the next stage, where the kubelet calls NodeExpandVolume on the staging path.
      t0 = Date.now();
      await resizeClaim(claim, '500Mi');
      await waitPvGrown(claim, pv, 500 * MiB);
      const offlineControllerMs = Date.now() - t0;
      expect((await stat(backingFile)).size).toBe(500 * MiB);
      // external-resizer marks the claim (after the PV): the filesystem is the kubelet's, at the next stage.
      const pending = await waitFor(
        `claim ${claim} to wait for its filesystem (FileSystemResizePending)`,
        async () => {
          const c = await claimOf(claim);
          return c.status?.conditions?.some((x) => x.type === 'FileSystemResizePending' && x.status === 'True')
            ? c
            : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250, describe: async () => describeClaim(await claimOf(claim)) },
      );
      expect(quantityBytes(pending.status?.capacity?.storage)).toBe(400 * MiB);
      await kube.create(
        scriptPod({
          name: 'grow-xfs-next',
          namespace: APP_NAMESPACE,
          image: image('driver').ref,
          script:
            `if [ "$(cat /data/f)" != ${token} ]; then echo "/data/f changed: $(cat /data/f)" > /dev/termination-log; exit 1; fi; ` +
            `echo "$(stat -c %s /data/fill) $(df -P /data | tail -1 | awk '{print $2}')" > /dev/termination-log`,
          ...mountOf(claim),
        }),
      );
      const t1 = Date.now();
      const [fill, offline] = watcherSizes(await podResult(kube, podRef('grow-xfs-next', APP_NAMESPACE), 240_000, why));
      expect(fill).toBe(280 * MiB);
      expect(offline - after).toBeGreaterThan(96 * 1024);
      expect(offline - after).toBeLessThanOrEqual(100 * 1024);
      const done = await waitClaimGrown(claim, 500 * MiB);
      expect((done.status?.conditions ?? []).filter((c) => c.type === 'FileSystemResizePending')).toEqual([]);
      process.stdout.write(
        `expansion xfs online 300Mi -> 400Mi: PV after ${(onlineControllerMs / 1000).toFixed(1)} s, claim status after ` +
          `${(onlineNodeMs / 1000).toFixed(1)} s, pod saw ${before} -> ${after} KiB after ${(onlinePodMs / 1000).toFixed(1)} s; ` +
          `offline 400Mi -> 500Mi: PV after ${(offlineControllerMs / 1000).toFixed(1)} s, the next pod saw ${offline} KiB ` +
          `${((Date.now() - t1) / 1000).toFixed(1)} s after it was created\n`,
      );
      await removeClaim(claim, ['grow-xfs', 'grow-xfs-next']);
      cleaned = true;
    } finally {
      if (!cleaned) await removeClaim(claim, ['grow-xfs', 'grow-xfs-next']).catch(() => undefined);
    }
    await kube.delete({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', name: 'pmem-real-xfs' });
    timings['expansion xfs'] = Date.now() - started;
  }, 600_000);

  it('the node driver container killed: the node component turns NotReady, the kubelet restarts it, volumes still work', async () => {
    const started = Date.now();
    const { kube } = cluster;
    // A volume in use while the driver dies: it must be found again (same device, no second loop device).
    await kube.apply({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'survivor', namespace: APP_NAMESPACE },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'pmem-real',
        resources: { requests: { storage: '32Mi' } },
      },
    });
    const mount = {
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'survivor' } }],
      volumeMounts: [{ name: 'data', mountPath: '/data' }],
    };
    // It keeps running (and the volume staged and mounted) while the driver is killed.
    await kube.create(
      scriptPod({
        name: 'in-use',
        namespace: APP_NAMESPACE,
        image: image('driver').ref,
        script: 'echo survived > /data/f; sync; touch /tmp/written; exec sleep 3600',
        readyWhenFile: '/tmp/written',
        ...mount,
      }),
    );
    await podsReady(kube, { namespace: APP_NAMESPACE, selector: `${POD_LABEL}=in-use`, count: 1, timeoutMs: 240_000 });
    const loopsBefore = await loopDevicesOfDriver();
    expect(loopsBefore.length).toBe(1);

    const nodePodName = (await driverNodePod()).metadata.name;
    const restarts = async (): Promise<number> =>
      (await driverNodePod()).status?.containerStatuses?.find((c) => c.name === CONTAINER_NAMES.driver)?.restartCount ??
      -1;
    const restartsBefore = await restarts();
    // What the pod and the CR say, every 250 ms from the kill on: printed, and what the assertions read.
    const timeline: string[] = [];
    let sampling = true;
    const sampler = (async () => {
      const t0 = Date.now();
      let previous = '';
      while (sampling) {
        const pod = await driverNodePod().catch(() => undefined);
        const ready = pod?.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? '?';
        const c = (await cr())?.status?.driverComponents?.find((x) => x.component === 'Node');
        const now = `pod Ready=${ready} restarts=${pod?.status?.containerStatuses?.find((x) => x.name === CONTAINER_NAMES.driver)?.restartCount ?? '?'}; CR Node ${c?.status ?? '?'} (${c?.reason ?? ''})`;
        if (now !== previous) timeline.push(`${((Date.now() - t0) / 1000).toFixed(1)} s: ${now}`);
        previous = now;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    if (node === undefined) throw new Error('the real node did not start');
    await node.containerd.killContainer(nodePodName, CONTAINER_NAMES.driver);
    try {
      const notReady = await waitStatus(kube, CR_NAME, {
        what: 'the Node component NotReady',
        ok: (d) => d.status?.driverComponents?.find((c) => c.component === 'Node')?.status === 'NotReady',
        timeoutMs: 60_000,
      });
      expect(notReady.status?.driverComponents?.find((c) => c.component === 'Node')?.reason).toBe(
        '0 of 1 node driver pods ready',
      );
      timings['driver killed -> NotReady reported'] = Date.now() - started;
      await waitStatus(kube, CR_NAME, {
        what: 'the Node component Ready again',
        ok: (d) =>
          d.status?.driverComponents?.find((c) => c.component === 'Node')?.status === 'Ready' &&
          d.status.phase === 'Running',
        timeoutMs: 120_000,
      });
      timings['driver killed -> Ready again'] = Date.now() - started;
    } finally {
      sampling = false;
      await sampler;
      process.stdout.write(`node driver killed, timeline:\n  ${timeline.join('\n  ')}\n`);
    }
    expect(await restarts()).toBe(restartsBefore + 1);

    await kube.create(
      scriptPod({
        name: 'after-kill',
        namespace: APP_NAMESPACE,
        image: image('driver').ref,
        script: 'cat /data/f > /dev/termination-log',
        ...mount,
      }),
    );
    expect(await podResult(kube, podRef('after-kill', APP_NAMESPACE), 240_000, why)).toBe('survived');
    // The restarted driver recognised the loop device of the staged volume instead of attaching a second one.
    expect(await loopDevicesOfDriver()).toEqual(loopsBefore);
    const inUse = await kube.must<Pod>(podRef('in-use', APP_NAMESPACE));
    expect(inUse.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    for (const name of ['in-use', 'after-kill']) await kube.delete(podRef(name, APP_NAMESPACE));
    for (const name of ['in-use', 'after-kill']) await waitGone(kube, podRef(name, APP_NAMESPACE), 120_000);
    const pvName = (
      await kube.must<KubeObject & { spec: { volumeName: string } }>({
        ...claimRef('survivor'),
        namespace: APP_NAMESPACE,
      })
    ).spec.volumeName;
    await kube.delete({ ...claimRef('survivor'), namespace: APP_NAMESPACE });
    await waitGone(kube, pvRef(pvName), 120_000, why);
    await waitFor(
      'no emulated device and no loop device of the driver left',
      async () =>
        (await emulatedDevices()).length === 0 && (await loopDevicesOfDriver()).length === 0 ? true : undefined,
      { timeoutMs: 60_000 },
    );
  }, 600_000);

  it('controller failover under the real kubelet: 3 replicas, a PVC stream, the active replica killed (driver container, then pod) — provisioning resumes within 15 s, nothing duplicated or leaked', async () => {
    const started = Date.now();
    const { kube } = cluster;
    if (node === undefined) throw new Error('the real node did not start');
    const realNode = node;
    const selector = `app.kubernetes.io/instance=${CR_NAME},app.kubernetes.io/component=controller`;
    const controllerPods = (): Promise<Pod[]> =>
      kube.list<Pod>('v1', 'Pod', { namespace: DRIVER_NAMESPACE, labelSelector: selector });
    const lease = provisionerLeaseRef(DRIVER_NAMESPACE, DEFAULT_DRIVER_NAME);
    const holder = (): Promise<string | undefined> => leaseHolder(kube, lease);
    /** A controller that knows the node (available), and whose settle period is over. */
    const warm = async (pod: Pod): Promise<boolean> => {
      const s = await driverStatus<ControllerDriverStatus>(pod);
      return s.settled && s.nodes.length === 1 && s.nodes[0]?.state === 'available';
    };
    /** The CR's Controller component is Ready with `replicas` of `replicas` pods ready (and names `active`, if given). */
    const controllerReady = (d: PmemDeployment, replicas: number, active?: string): boolean => {
      const c = d.status?.driverComponents?.find((x) => x.component === 'Controller');
      return (
        c?.status === 'Ready' &&
        c.desired === replicas &&
        c.ready === replicas &&
        (active === undefined || c.active === active)
      );
    };
    const podsLine = async (): Promise<string> =>
      (await controllerPods())
        .map(
          (p) =>
            `${p.metadata.name} ${p.status?.phase ?? '-'} ${p.metadata.deletionTimestamp === undefined ? '' : 'deleting '}` +
            `restarts ${(p.status?.containerStatuses ?? []).map((c) => `${c.name}=${c.restartCount}`).join(',')}`,
        )
        .join('; ') + `; Lease ${(await holder()) ?? 'nobody'}`;

    // Scale the controller to three replicas (the CR, as a user would).
    await kube.merge(pmemDeployment(CR_NAME, { controllerReplicas: FAILOVER_REPLICAS }));
    await podsReady(kube, {
      namespace: DRIVER_NAMESPACE,
      selector,
      count: FAILOVER_REPLICAS,
      timeoutMs: 120_000,
    });
    timings['failover: 3 controller pods ready'] = Date.now() - started;
    // The new replicas settle (75 s: the nodes' lease 30 s) and meanwhile learn the node, which finds
    // them by resolving the headless registry Service again.
    await waitFor(
      `all ${FAILOVER_REPLICAS} controller replicas to know the node and to settle`,
      async () => {
        const pods = await controllerPods();
        return pods.length === FAILOVER_REPLICAS && (await Promise.all(pods.map(warm))).every(Boolean)
          ? true
          : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000, describe: podsLine },
    );
    timings['failover: 3 replicas settled'] = Date.now() - started;
    const nodeStatus = await driverStatus<NodeDriverStatus>(await driverNodePod());
    expect([nodeStatus.registration?.registeredReplicas, nodeStatus.registration?.replicas]).toEqual([
      FAILOVER_REPLICAS,
      FAILOVER_REPLICAS,
    ]);
    const pdb = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      name: deploymentObjectNames(CR_NAME).controllerDisruptionBudget,
      namespace: DRIVER_NAMESPACE,
    };
    expect((await kube.get(pdb))?.metadata.name).toBe(pdb.name);
    const objects = expectedObjects(CR_NAME, DRIVER_NAMESPACE, { controllerReplicas: FAILOVER_REPLICAS });
    expect((await existing(kube, objects)).size).toBe(objects.length);
    const first = await waitFor('a controller pod to hold the Lease', holder, {
      timeoutMs: 60_000,
      describe: podsLine,
    });
    await waitStatus(kube, CR_NAME, {
      what: `the Controller component Ready, 3 of 3, naming ${first} as active`,
      ok: (d) => controllerReady(d, FAILOVER_REPLICAS, first),
      timeoutMs: 60_000,
    });

    await kube.apply({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'pmem-failover' },
      provisioner: DEFAULT_DRIVER_NAME,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    } as KubeObject);
    const stream = new PvcStream({
      kube,
      namespace: APP_NAMESPACE,
      storageClass: 'pmem-failover',
      size: '16Mi',
      label: 'failover',
    });
    const resumed: Record<'process' | 'pod', number> = { process: Number.NaN, pod: Number.NaN };
    /** Kill the Lease holder, wait for a PVC created after the kill to be Bound; returns [old, new] holder. */
    const killActive = async (what: 'process' | 'pod'): Promise<[string, string]> => {
      const active = await waitFor('a controller pod to hold the Lease', holder, { timeoutMs: 30_000 });
      // From the signal (process) or the delete request (pod) on.
      let killedAt = Date.now();
      if (what === 'process') ({ killedAt } = await realNode.containerd.killContainer(active, CONTAINER_NAMES.driver));
      else await kube.delete(podRef(active, DRIVER_NAMESPACE), { gracePeriodSeconds: 0 });
      const next = await waitFor(
        `the Lease to leave ${active}`,
        async () => {
          const h = await holder();
          return h !== undefined && h !== active ? ([h, Date.now() - killedAt] as const) : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 100, describe: podsLine },
      );
      resumed[what] = await waitFor(
        `provisioning to resume after the ${what} kill of ${active}`,
        () => stream.resumedAfter(killedAt),
        { timeoutMs: 90_000, intervalMs: 100, describe: podsLine },
      );
      process.stdout.write(
        `real node: ${what} kill of the active controller ${active}: Lease taken over by ${next[0]} after ` +
          `${(next[1] / 1000).toFixed(1)} s, first PVC created after the kill Bound after ${(resumed[what] / 1000).toFixed(1)} s\n`,
      );
      return [active, next[0]];
    };
    try {
      stream.start();
      await waitFor('three stream PVCs to be Bound', () => (stream.bound() >= 3 ? true : undefined), {
        timeoutMs: 90_000,
        describe: podsLine,
      });
      // 1. The active controller's driver container dies; the kubelet restarts it (and the sidecar, if it
      //    exits on the lost socket). A warm standby takes the Lease, not the restarted cold one.
      const [killed, second] = await killActive('process');
      expect(resumed.process).toBeLessThanOrEqual(RESUME_LIMIT_MS);
      await waitFor(
        `the kubelet to restart the driver container of ${killed}`,
        async () => {
          const p = await kube.get<Pod>(podRef(killed, DRIVER_NAMESPACE));
          const c = p?.status?.containerStatuses?.find((x) => x.name === CONTAINER_NAMES.driver);
          return (c?.restartCount ?? 0) >= 1 && c?.ready === true ? true : undefined;
        },
        { timeoutMs: 90_000, describe: podsLine },
      );
      // 2. The new active replica's pod is deleted at once (grace period 0); the third, warm, takes over.
      const [deleted, third] = await killActive('pod');
      expect(deleted).toBe(second);
      expect(resumed.pod).toBeLessThanOrEqual(RESUME_LIMIT_MS);
      expect(third).not.toBe(killed); // the restarted replica is still settling: it must not lead
      await sleep(3000); // a few more PVCs through the third replica
    } finally {
      await stream.stop();
    }
    expect(stream.errors).toEqual([]);
    const created = stream.claims.size;
    await stream.settled(120_000, podsLine);
    const pvs = await settledVolumes(kube, DEFAULT_DRIVER_NAME, 120_000);
    // Exactly one device per PV: no volume created twice, none left behind by a create the old leader
    // started and the new one repeated.
    const handles = pvs.map((pv) => `${pv.spec.csi?.volumeHandle ?? ''}.img`).sort();
    await waitFor(
      'one emulated device per PV and no other',
      async () => (JSON.stringify((await emulatedDevices()).sort()) === JSON.stringify(handles) ? true : undefined),
      {
        timeoutMs: 60_000,
        describe: async () => `devices ${(await emulatedDevices()).join(' ')}; PVs ${handles.join(' ')}`,
      },
    );
    const active = await waitFor('a controller pod to hold the Lease', holder, { timeoutMs: 30_000 });
    const activePod = await kube.must<Pod>(podRef(active, DRIVER_NAMESPACE));
    const activeStatus = await driverStatus<ControllerDriverStatus>(activePod);
    expect(activeStatus.nodes.map((n) => n.state)).toEqual(['available']);
    expect(activeStatus.volumes).toBe(pvs.length);
    // The status names the new active replica and counts the replacement pod once it is ready.
    await waitStatus(kube, CR_NAME, {
      what: `the Controller component Ready, 3 of 3, naming ${active} as active`,
      ok: (d) => controllerReady(d, FAILOVER_REPLICAS, active),
      timeoutMs: 120_000,
    });
    await stream.deleteAll();
    await volumesGone(kube, DEFAULT_DRIVER_NAME, 120_000, podsLine);
    await waitFor(
      'no emulated device and no loop device of the driver left',
      async () =>
        (await emulatedDevices()).length === 0 && (await loopDevicesOfDriver()).length === 0 ? true : undefined,
      { timeoutMs: 60_000 },
    );
    await kube.delete({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', name: 'pmem-failover' });
    timings['failover: kills, checks, clean-up'] = Date.now() - started;

    // Back to one replica for the scenarios that follow: Recreate again, no disruption budget.
    await kube.merge(pmemDeployment(CR_NAME, { controllerReplicas: 1 }));
    await waitStatus(kube, CR_NAME, {
      what: 'phase Running with one controller replica',
      ok: (d) => d.status?.phase === 'Running' && controllerReady(d, 1),
      timeoutMs: 180_000,
    });
    const single = await kube.must<KubeObject & { spec: { replicas?: number; strategy?: { type?: string } } }>(
      workloadRefs(CR_NAME, DRIVER_NAMESPACE).deployment,
    );
    expect([single.spec.replicas, single.spec.strategy?.type]).toEqual([1, 'Recreate']);
    await waitFor('the PodDisruptionBudget to be removed', async () =>
      (await kube.get(pdb)) === undefined ? true : undefined,
    );
    await podsReady(kube, { namespace: DRIVER_NAMESPACE, selector, count: 1, timeoutMs: 120_000 });
    timings['failover: total'] = Date.now() - started;
    process.stdout.write(
      `failover (real node): process kill → resumed in ${(resumed.process / 1000).toFixed(1)} s; ` +
        `pod kill → resumed in ${(resumed.pod / 1000).toFixed(1)} s (${created} PVCs streamed)\n`,
    );
  }, 900_000);

  it('operator upgrade A -> B (helm upgrade) with a volume in use: DaemonSet and controller roll to B, never two controllers, the pod keeps mount and data, a new pod reads it', async () => {
    const { kube } = cluster;
    const versionA = splitRef(image('driver').ref)[1];
    const upgraded = builtImages(['driver', 'operator'], { version: UPGRADE_VERSION });
    for (const w of upgraded.warnings) process.stdout.write(`${w}\n`);
    const imageB = (name: 'driver' | 'operator'): BuiltImage => {
      const i = upgraded.images.get(name);
      if (i?.archive === undefined)
        throw new Error(
          `image ${name} ${UPGRADE_VERSION} missing or without an archive: bash e2e/tools/images.sh --version ${UPGRADE_VERSION}`,
        );
      return i;
    };
    const refs = {
      driverA: image('driver').ref,
      operatorA: image('operator').ref,
      driverB: imageB('driver').ref,
      operatorB: imageB('operator').ref,
    };
    expect([versionA, refs.driverB, refs.operatorB]).toEqual([
      splitRef(refs.operatorA)[1],
      `pmem-csi-driver:${UPGRADE_VERSION}`,
      `pmem-csi-operator:${UPGRADE_VERSION}`,
    ]);
    expect(versionA).not.toBe(UPGRADE_VERSION);
    // B onto the node, as a registry pull would bring it (the pods' pull policy is Never).
    let t0 = Date.now();
    await node?.containerd.importImages([imageB('driver').archive ?? '', imageB('operator').archive ?? '']);
    timings['upgrade: images B imported into containerd'] = Date.now() - t0;
    const label = (ref: string | undefined): string =>
      ref === refs.driverA || ref === refs.operatorA
        ? 'A'
        : ref === refs.driverB || ref === refs.operatorB
          ? 'B'
          : (ref ?? '?');
    const workloads = workloadRefs(CR_NAME, DRIVER_NAMESPACE);
    const selector = (component: string): string =>
      `app.kubernetes.io/instance=${CR_NAME},app.kubernetes.io/component=${component}`;
    const controllerPods = (): Promise<Pod[]> =>
      kube.list<Pod>('v1', 'Pod', { namespace: DRIVER_NAMESPACE, labelSelector: selector('controller') });
    const nodePods = (): Promise<Pod[]> =>
      kube.list<Pod>('v1', 'Pod', { namespace: DRIVER_NAMESPACE, labelSelector: selector('node') });
    const operatorPods = (): Promise<Pod[]> =>
      kube.list<Pod>('v1', 'Pod', {
        namespace: OPERATOR_NAMESPACE,
        labelSelector: 'app.kubernetes.io/component=operator',
      });
    const one = async (pods: Promise<Pod[]>, what: string): Promise<Pod> => {
      const all = await pods;
      if (all.length !== 1 || all[0] === undefined)
        throw new Error(`expected one ${what} pod, found ${all.map((p) => p.metadata.name).join(', ') || 'none'}`);
      return all[0];
    };

    // Before: everything runs A.
    const nodeA = await one(nodePods(), 'node driver');
    const controllerA = await one(controllerPods(), 'controller');
    expect([
      imageOf(nodeA, CONTAINER_NAMES.driver),
      imageOf(controllerA, CONTAINER_NAMES.driver),
      imageOf(await one(operatorPods(), 'operator'), 'pmem-csi-operator'),
    ]).toEqual([refs.driverA, refs.driverA, refs.operatorA]);
    expect((await driverStatus<NodeDriverStatus>(nodeA)).version).toBe(versionA);
    for (const w of [workloads.daemonSet, workloads.deployment])
      expect((await kube.must(w)).metadata.annotations?.[VERSION_ANNOTATION]).toBe(versionA);
    expect((await kube.must<Workload>(workloads.deployment)).spec.strategy?.type).toBe('Recreate');
    const registrarImage = imageOf(nodeA, CONTAINER_NAMES.registrar);
    expect(registrarImage).toBe(image('registrar').ref);

    // A volume in use across the upgrade: every 0.2 s the pod checks its mount (the /proc/mounts
    // line) and the file's content, and writes and fsyncs a heartbeat file (reads could come from
    // the page cache; a write through to a lost device fails); it fails at once with the reason. It
    // ends when a later pod has read the volume and left /data/done, reporting how often it checked.
    // Removed however the scenario ends: a volume left behind would fail the teardown's leak check too.
    let cleaned = false;
    try {
      await kube.apply({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'upgrade-data', namespace: APP_NAMESPACE },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'pmem-real',
          resources: { requests: { storage: '32Mi' } },
        },
      });
      const mount = {
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'upgrade-data' } }],
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
      };
      const token = `before-upgrade-${Date.now()}`;
      await kube.create(
        scriptPod({
          name: 'upgrade-user',
          namespace: APP_NAMESPACE,
          image: refs.driverA,
          script: volumeUserScript(token),
          readyWhenFile: VOLUME_USER_READY_FILE,
          ...mount,
        }),
      );
      const [userPod] = await podsReady(kube, {
        namespace: APP_NAMESPACE,
        selector: `${POD_LABEL}=upgrade-user`,
        count: 1,
        timeoutMs: 240_000,
      });
      const userUid = userPod?.metadata.uid;
      const loopsBefore = await loopDevicesOfDriver();
      expect(loopsBefore.length).toBe(1);

      // The upgrade, as deploy/helm/pmem-csi/README.md says: the new chart's CRD first, then helm upgrade
      // of the operator's image (and the default driver image it passes as --driver-image).
      const started = Date.now();
      let helmReturned = false;
      const milestones: Milestone[] = [
        { name: 'helm upgrade returned', holds: () => helmReturned },
        {
          name: 'operator B ready',
          holds: (s) =>
            s.operatorPods.length === 1 &&
            s.operatorPods.every((p) => imageOf(p, 'pmem-csi-operator') === refs.operatorB && isReady(p)),
        },
        {
          name: 'node driver A gone',
          holds: (s) => s.nodePods.every((p) => imageOf(p, CONTAINER_NAMES.driver) !== refs.driverA),
        },
        {
          name: 'DaemonSet rolled',
          holds: (s) => daemonSetRolled(s.daemonSet, s.nodePods, CONTAINER_NAMES.driver, refs.driverB),
        },
        {
          name: 'controller A gone',
          holds: (s) => s.controllerPods.every((p) => imageOf(p, CONTAINER_NAMES.driver) !== refs.driverA),
        },
        {
          name: 'controller ready',
          holds: (s) => deploymentRolled(s.deployment, s.controllerPods, CONTAINER_NAMES.driver, refs.driverB),
        },
        {
          // Reported by the operator after both rolled: Running, both components Ready and computed since.
          name: 'CR Running',
          holds: (s, reached) => {
            if (!reached.has('DaemonSet rolled') || !reached.has('controller ready') || !crRunning(s.cr)) return false;
            const rolledAt =
              started +
              Math.max(
                observer.reachedAt.get('DaemonSet rolled') ?? 0,
                observer.reachedAt.get('controller ready') ?? 0,
              );
            return (s.cr?.status?.driverComponents ?? []).every(
              (c) =>
                c.desired === c.ready && Date.parse(c.lastUpdated ?? '') >= Math.floor(rolledAt / 1000) * 1000 - 1000,
            );
          },
        },
      ];
      const invariants: Invariant[] = [
        {
          name: 'at most one controller',
          broken: (s) =>
            s.controllerPods.filter(isLive).length <= 1
              ? undefined
              : s.controllerPods
                  .filter(isLive)
                  .map((p) => `${p.metadata.name} ${podState(p, CONTAINER_NAMES.driver, label)}`)
                  .join(', '),
        },
        {
          name: 'at most one node driver',
          broken: (s) =>
            s.nodePods.filter(isLive).length <= 1
              ? undefined
              : s.nodePods
                  .filter(isLive)
                  .map((p) => `${p.metadata.name} ${podState(p, CONTAINER_NAMES.driver, label)}`)
                  .join(', '),
        },
        {
          name: 'the volume user keeps running',
          broken: (s) => {
            const p = s.workload;
            const restarts = p?.status?.containerStatuses?.[0]?.restartCount;
            if (p === undefined) return 'gone';
            // Running, its container never restarted (the script exits at once when the mount or the
            // data change); readiness is only a probe under load and not judged here.
            const running = p.status?.containerStatuses?.[0]?.state?.running !== undefined;
            return p.metadata.uid === userUid && p.status?.phase === 'Running' && running && restarts === 0
              ? undefined
              : `uid ${p.metadata.uid ?? '?'}, phase ${p.status?.phase ?? '-'}, container running ${String(running)}, restarts ${restarts ?? '?'}`;
          },
        },
      ];
      const take = async (): Promise<RolloutSnapshot> => {
        const [operator, controller, nodes, deployment, daemonSet, crNow, workload] = await Promise.all([
          operatorPods(),
          controllerPods(),
          nodePods(),
          kube.get<Workload>(workloads.deployment),
          kube.get<Workload>(workloads.daemonSet),
          cr(),
          kube.get<Pod>(podRef('upgrade-user', APP_NAMESPACE)),
        ]);
        return {
          ms: Date.now() - started,
          operatorPods: operator,
          controllerPods: controller,
          nodePods: nodes,
          deployment,
          daemonSet,
          cr: crNow,
          workload,
        };
      };
      const describe = (s: RolloutSnapshot): string => {
        const pods = (ps: readonly Pod[], c: string): string => `[${ps.map((p) => podState(p, c, label)).join(', ')}]`;
        const ds = s.daemonSet?.status;
        const dep = s.deployment?.status;
        const comps = (s.cr?.status?.driverComponents ?? [])
          .map((c) => `${c.component} ${c.status}${c.status === 'Ready' ? '' : ` (${c.reason ?? ''})`}`)
          .join(', ');
        return [
          `operator ${pods(s.operatorPods, 'pmem-csi-operator')}`,
          `controller ${pods(s.controllerPods, CONTAINER_NAMES.driver)}`,
          `node ${pods(s.nodePods, CONTAINER_NAMES.driver)}`,
          `DS ${label(s.daemonSet === undefined ? undefined : imageOf(s.daemonSet, CONTAINER_NAMES.driver))} updated ${ds?.updatedNumberScheduled ?? '?'}/${ds?.desiredNumberScheduled ?? '?'} ready ${ds?.numberReady ?? '?'}`,
          `Deploy ${label(s.deployment === undefined ? undefined : imageOf(s.deployment, CONTAINER_NAMES.driver))} updated ${dep?.updatedReplicas ?? 0} ready ${dep?.readyReplicas ?? 0}`,
          `CR ${s.cr?.status?.phase ?? '-'} (${comps})`,
          `app ${s.workload === undefined ? 'gone' : isReady(s.workload) ? 'ready' : (s.workload.status?.phase ?? '-')}`,
        ].join(' | ');
      };
      const observer = new RolloutObserver({ take, describe, milestones, invariants }).start();
      try {
        await cluster.kubectl(['apply', '--server-side', '-f', '-'], { input: await helm(['show', 'crds', CHART]) });
        // --reset-then-reuse-values: the release's own values (images, the PmemCSIDeployment) on top of
        // the new chart's defaults. --reuse-values would take the old release's computed values whole,
        // without the defaults of keys the new chart added: a chart that gained `monitoring` (3479e9a)
        // then fails to render (nil pointer in templates/monitors.yaml), as a run here found when the
        // chart changed between helm install and helm upgrade.
        await helm([
          'upgrade',
          RELEASE,
          CHART,
          '--namespace',
          OPERATOR_NAMESPACE,
          '--reset-then-reuse-values',
          '--set',
          `operator.image.tag=${UPGRADE_VERSION}`,
          '--set',
          `driver.image.tag=${UPGRADE_VERSION}`,
          '--wait',
          '--timeout',
          '180s',
        ]);
        helmReturned = true;
        timings['upgrade: helm upgrade --wait'] = Date.now() - started;
        await waitFor(
          'the rollout to B (DaemonSet rolled, controller ready, then CR Running)',
          async () => (observer.reachedAt.has('CR Running') ? true : undefined),
          {
            timeoutMs: 300_000,
            intervalMs: 500,
            describe: async () => `${observer.summary()}; last: ${observer.lines.at(-1) ?? ''}; ${await why()}`,
          },
        );
        // A few more samples: the state after the rollout holds (no late restart of the volume user).
        await sleep(3_000);
      } finally {
        await observer.stop();
        process.stdout.write(
          `operator upgrade ${versionA} (A) -> ${UPGRADE_VERSION} (B) with a volume in use, timeline (s from helm upgrade; ${observer.samples} samples, ${observer.failedSamples} failed):\n  ${observer.lines.join('\n  ')}\n  => ${observer.summary()}\n`,
        );
      }
      for (const m of ['DaemonSet rolled', 'controller ready', 'CR Running'])
        timings[`upgrade: ${m}`] = observer.reachedAt.get(m) ?? -1;
      expect(observer.violations).toEqual([]);
      expect(observer.failedSamples).toBe(0);
      // Every milestone was reached; A's pods went before B's were ready.
      expect(milestones.filter((m) => !observer.reachedAt.has(m.name)).map((m) => m.name)).toEqual([]);

      // After: the objects, the pods and the running binaries are B.
      for (const w of [workloads.daemonSet, workloads.deployment]) {
        const o = await kube.must<Workload>(w);
        expect([w.kind, imageOf(o, CONTAINER_NAMES.driver), o.metadata.annotations?.[VERSION_ANNOTATION]]).toEqual([
          w.kind,
          refs.driverB,
          UPGRADE_VERSION,
        ]);
      }
      expect((await kube.must<Workload>(workloads.deployment)).spec.strategy?.type).toBe('Recreate');
      const operatorB = await one(operatorPods(), 'operator');
      expect([imageOf(operatorB, 'pmem-csi-operator'), isReady(operatorB)]).toEqual([refs.operatorB, true]);
      // B leads (its log, read from the kubelet's pod logs): when it started and took the Lease explains
      // the time between "operator B ready" and the first change of the driver objects.
      const operatorLog = await containerLog(
        join(node?.dir ?? '', POD_LOGS_SUBDIR),
        OPERATOR_NAMESPACE,
        operatorB.metadata.name,
        'pmem-csi-operator',
      );
      const logAt = (what: string): string => {
        const l = operatorLog.find((x) => x.text.includes(what));
        return l === undefined ? `no '${what}' line` : `'${what}' at ${((l.at - started) / 1000).toFixed(1)} s`;
      };
      process.stdout.write(`operator B log (s from helm upgrade): ${logAt('starting')}, ${logAt('became leader')}\n`);
      expect(operatorLog.some((l) => l.text.includes('became leader'))).toBe(true);
      const nodeB = await one(nodePods(), 'node driver');
      const controllerB = await one(controllerPods(), 'controller');
      expect(nodeB.metadata.uid).not.toBe(nodeA.metadata.uid);
      expect(controllerB.metadata.uid).not.toBe(controllerA.metadata.uid);
      for (const p of [nodeB, controllerB]) {
        const c = p.status?.containerStatuses?.find((x) => x.name === CONTAINER_NAMES.driver);
        // What containerd runs: B's image (by name and image ID), not A's.
        expect([
          p.metadata.name,
          c?.image?.replace(/^docker\.io\/library\//, ''),
          c?.imageID?.includes(imageB('driver').id),
          c?.imageID?.includes(image('driver').id),
        ]).toEqual([p.metadata.name, refs.driverB, true, false]);
      }
      // The sidecar is pinned in the spec: it did not change.
      expect(imageOf(nodeB, CONTAINER_NAMES.registrar)).toBe(registrarImage);
      const nodeStatus = await waitFor(
        'the node driver B to report its version and registration on /status',
        async () => {
          const s = await driverStatus<NodeDriverStatus>(nodeB);
          return s.registration?.registered === true ? s : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(nodeStatus.version).toBe(UPGRADE_VERSION);
      const controllerStatus = await waitFor(
        `the controller B to list node ${node?.name} available with version ${UPGRADE_VERSION}`,
        async () => {
          const s = await driverStatus<ControllerDriverStatus>(controllerB);
          return s.nodes.some(
            (n) => n.nodeId === node?.name && n.state === 'available' && n.version === UPGRADE_VERSION,
          )
            ? s
            : undefined;
        },
        { timeoutMs: 120_000 },
      );
      expect(Date.parse(controllerStatus.startedAt)).toBeGreaterThanOrEqual(Math.floor(started / 1000) * 1000);
      const after = (await cr())?.status;
      expect(after?.phase).toBe('Running');
      expect(after?.driverComponents?.map((c) => [c.component, c.status, c.desired, c.ready])).toEqual([
        ['Controller', 'Ready', 1, 1],
        ['Node', 'Ready', 1, 1],
      ]);

      // The volume user: the same pod, never restarted, its mount and data checked throughout.
      const user = await kube.must<Pod>(podRef('upgrade-user', APP_NAMESPACE));
      expect([user.metadata.uid, user.status?.phase, user.status?.containerStatuses?.[0]?.restartCount]).toEqual([
        userUid,
        'Running',
        0,
      ]);
      // No second loop device: the driver B found A's device of the staged volume.
      expect(await loopDevicesOfDriver()).toEqual(loopsBefore);

      // A new pod mounts the volume after the upgrade (published by driver B), reads the data and
      // leaves /data/done; the volume user sees it through its own mount and ends reporting it.
      t0 = Date.now();
      await kube.create(
        scriptPod({
          name: 'upgrade-reader',
          namespace: APP_NAMESPACE,
          image: refs.driverB,
          script:
            'echo "$(cat /data/f) beat=$(cat /data/beat)" > /dev/termination-log; echo read-by-upgrade-reader > /data/done; sync',
          ...mount,
        }),
      );
      const read = /^(\S+) beat=(\d+)$/.exec(
        await podResult(kube, podRef('upgrade-reader', APP_NAMESPACE), 240_000, why),
      );
      // The file written before the upgrade, and the heartbeats the first pod wrote during it.
      expect([read?.[1], Number(read?.[2] ?? -1) > 0]).toEqual([token, true]);
      timings['upgrade: new pod read the volume'] = Date.now() - t0;
      const report = await podResult(kube, podRef('upgrade-user', APP_NAMESPACE), 60_000, why);
      const m = /^(\S+) read-by-upgrade-reader checks=(\d+)$/.exec(report);
      expect([m?.[1], m !== null]).toEqual([token, true]);
      // It checked at least once per second of the whole upgrade (every 0.2 s, plus the time of a check).
      const checkedSeconds = (Date.now() - started) / 1000;
      expect(Number(m?.[2])).toBeGreaterThanOrEqual(Math.floor(checkedSeconds));
      expect(Number(m?.[2])).toBeGreaterThanOrEqual(Number(read?.[2]));
      process.stdout.write(`volume user: ${report} over ${checkedSeconds.toFixed(0)} s\n`);

      for (const name of ['upgrade-user', 'upgrade-reader']) await kube.delete(podRef(name, APP_NAMESPACE));
      for (const name of ['upgrade-user', 'upgrade-reader']) await waitGone(kube, podRef(name, APP_NAMESPACE), 120_000);
      const pvName = (
        await kube.must<KubeObject & { spec: { volumeName: string } }>({
          ...claimRef('upgrade-data'),
          namespace: APP_NAMESPACE,
        })
      ).spec.volumeName;
      await kube.delete({ ...claimRef('upgrade-data'), namespace: APP_NAMESPACE });
      await waitGone(kube, pvRef(pvName), 120_000, why);
      await waitFor(
        'no emulated device and no loop device of the driver left after the upgrade scenario',
        async () =>
          (await emulatedDevices()).length === 0 && (await loopDevicesOfDriver()).length === 0 ? true : undefined,
        { timeoutMs: 60_000 },
      );
      cleaned = true;
    } finally {
      if (!cleaned) {
        for (const name of ['upgrade-user', 'upgrade-reader'])
          await kube.delete(podRef(name, APP_NAMESPACE)).catch(() => false);
        for (const name of ['upgrade-user', 'upgrade-reader'])
          await waitGone(kube, podRef(name, APP_NAMESPACE), 60_000).catch(() => undefined);
        await kube.delete({ ...claimRef('upgrade-data'), namespace: APP_NAMESPACE }).catch(() => false);
      }
    }
  }, 900_000);

  it("the drivers survive the operator's removal (helm uninstall); the chart keeps only what it documents", async () => {
    const started = Date.now();
    const { kube } = cluster;
    const before = (await kube.list<Pod>('v1', 'Pod', { namespace: DRIVER_NAMESPACE }))
      .map((p) => p.metadata.uid)
      .sort();
    await helm(['uninstall', RELEASE, '--namespace', OPERATOR_NAMESPACE, '--wait', '--timeout', '120s']);
    await waitFor(
      'the operator pod to be gone',
      async () => ((await kube.list('v1', 'Pod', { namespace: OPERATOR_NAMESPACE })).length === 0 ? true : undefined),
      { timeoutMs: 120_000 },
    );
    // Kept, as the chart documents (helm.sh/resource-policy: keep): the PmemCSIDeployment and the drivers' namespace; the CRD (crds/) is never deleted by helm.
    expect((await cr())?.metadata.annotations?.['helm.sh/resource-policy']).toBe('keep');
    expect(await kube.get({ apiVersion: 'v1', kind: 'Namespace', name: DRIVER_NAMESPACE })).toBeDefined();
    expect(
      await kube.get({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: 'pmemcsideployments.pmem-csi.intel.com',
      }),
    ).toBeDefined();
    // Gone: everything else of the release (the operator's Deployment, ServiceAccount, cluster RBAC).
    expect(await kube.list('apps/v1', 'Deployment', { namespace: OPERATOR_NAMESPACE })).toEqual([]);
    expect(
      await kube.list('v1', 'ServiceAccount', {
        namespace: OPERATOR_NAMESPACE,
        labelSelector: 'app.kubernetes.io/component=operator',
      }),
    ).toEqual([]);
    expect(
      await kube.list('rbac.authorization.k8s.io/v1', 'ClusterRole', {
        labelSelector: 'app.kubernetes.io/component=operator',
      }),
    ).toEqual([]);
    // The same driver pods still run, and provisioning works without the operator.
    const after = await podsReady(kube, {
      namespace: DRIVER_NAMESPACE,
      selector: 'app.kubernetes.io/instance=pmem-csi.intel.com',
      count: 2,
      timeoutMs: 30_000,
    });
    expect(after.map((p) => p.metadata.uid).sort()).toEqual(before);
    await roundTrip('no-operator', why);
    timings['operator removed, provisioning round trip'] = Date.now() - started;
    // Deleting the kept PmemCSIDeployment removes the driver (owner references), leaving nothing of it.
    await kube.delete(crRef(CR_NAME));
    await waitFor(
      'the driver pods and the CSIDriver to be gone',
      async () =>
        (await kube.list('v1', 'Pod', { namespace: DRIVER_NAMESPACE })).length === 0 &&
        (await kube.get({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', name: DEFAULT_DRIVER_NAME })) ===
          undefined
          ? true
          : undefined,
      { timeoutMs: 180_000 },
    );
  }, 600_000);

  it('the kustomize driver base (emulated, no operator) runs the same provisioning case', async () => {
    const started = Date.now();
    const overlay = join(cluster.dir, 'kustomize-overlay');
    await mkdir(overlay, { recursive: true });
    const [drvRepo, drvTag] = splitRef(image('driver').ref);
    const [provRepo, provTag] = splitRef(image('csi-provisioner').ref);
    const [regRepo, regTag] = splitRef(image('registrar').ref);
    const [resRepo, resTag] = splitRef(image('csi-resizer').ref);
    // Our local images in place of the registry's (no registry is reachable), pulled never.
    await writeFile(
      join(overlay, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'resources:',
        // kustomize takes bases by relative path only.
        `  - ${relative(overlay, join(REPO_ROOT, 'deploy/kustomize/driver/emulated/testing'))}`,
        'images:',
        `  - {name: pmem-csi-driver, newName: ${drvRepo}, newTag: "${drvTag}"}`,
        `  - {name: registry.k8s.io/sig-storage/csi-provisioner, newName: ${provRepo}, newTag: "${provTag}"}`,
        `  - {name: registry.k8s.io/sig-storage/csi-node-driver-registrar, newName: ${regRepo}, newTag: "${regTag}"}`,
        `  - {name: registry.k8s.io/sig-storage/csi-resizer, newName: ${resRepo}, newTag: "${resTag}"}`,
        'patches:',
        '  - target: {kind: DaemonSet}',
        '    patch: |-',
        '      - {op: replace, path: /spec/template/spec/containers/0/imagePullPolicy, value: Never}',
        '      - {op: replace, path: /spec/template/spec/containers/1/imagePullPolicy, value: Never}',
        '  - target: {kind: Deployment}',
        '    patch: |-',
        '      - {op: replace, path: /spec/template/spec/containers/0/imagePullPolicy, value: Never}',
        '      - {op: replace, path: /spec/template/spec/containers/1/imagePullPolicy, value: Never}',
        '      - {op: replace, path: /spec/template/spec/containers/2/imagePullPolicy, value: Never}',
        '',
      ].join('\n'),
    );
    const manifests = (await runTool(toolPath('kustomize'), ['build', overlay], { timeoutMs: 60_000 })).stdout;
    const certs = (
      await runTool(
        process.execPath,
        ['--import', 'tsx', join(REPO_ROOT, 'deploy/tools/make-certs.ts'), '--namespace', DRIVER_NAMESPACE],
        { cwd: REPO_ROOT, timeoutMs: 120_000 },
      )
    ).stdout;
    await cluster.kubectl(['apply', '-f', '-'], {
      input: manifests
        .split('\n---\n')
        .filter((d) => /\nkind: Namespace\n/.test(`\n${d}\n`))
        .join('\n---\n'),
    });
    await cluster.kubectl(['apply', '-f', '-'], { input: certs });
    await cluster.kubectl(['apply', '-f', '-'], { input: manifests, timeoutMs: 120_000 });
    await podsReady(cluster.kube, {
      namespace: DRIVER_NAMESPACE,
      selector: 'app.kubernetes.io/instance=pmem-csi.intel.com',
      count: 2,
      timeoutMs: 240_000,
    });
    timings['kustomize: driver pods ready'] = Date.now() - started;
    await roundTrip('kustomize', async () => '');
    timings['kustomize: provisioning round trip'] = Date.now() - started;
    await cluster.kubectl(['delete', '-f', '-', '--wait=true', '--timeout=180s'], {
      input: manifests,
      timeoutMs: 240_000,
    });
    await waitFor(
      'the kustomize driver pods to be gone',
      async () =>
        (await cluster.kube.list('v1', 'Pod', { namespace: DRIVER_NAMESPACE })).length === 0 ? true : undefined,
      { timeoutMs: 180_000 },
    );
  }, 600_000);

  it('the teardown leaves no mounts, loop devices, containers, network devices, rules or processes', async () => {
    await uninstallStack(cluster);
    const started = Date.now();
    nodeLeft = (await node?.stop()) ?? ['no node'];
    timings['node teardown'] = Date.now() - started;
    expect(nodeLeft).toEqual([]);
    expect(await leftovers([DRIVER_STATE_DIR])).toEqual([]);
    // Every volume was deleted: the driver's state on the node is all that remains of it, and no
    // loop device holds one of its files (also not one seen only through a vanished mount).
    expect(await emulatedDevices()).toEqual([]);
    expect(await loopDevicesOfDriver()).toEqual([]);
    await rm(DRIVER_STATE_DIR, { recursive: true, force: true });
  }, 400_000);
});
