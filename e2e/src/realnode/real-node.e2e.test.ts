// Real-node tier: the whole stack as users run it. Our images (e2e/tools/images.sh), a real
// kubelet with containerd + runc (e2e/src/realnode/real-node.ts) joined to the cluster tier's
// control plane, the Helm chart installing the operator, the operator deploying the driver in
// emulated device mode (loop-backed files: this machine has no NVDIMM), and pods that write and
// read volumes through the kubelet, NodeStage/NodePublish and real mounts.
// Needs root (containers, mounts, loop devices, iptables); CI runs as root. One test file: the
// scenarios build on each other (install, then provisioning, then failure and removal), and the
// last one tears the node down and asserts that nothing was left behind.
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { CONTAINER_NAMES, DEFAULT_DRIVER_NAME, topologyKey } from '@pmem-csi/api';
import { REPO_ROOT } from '../cluster/components.js';
import { createCluster, ensureNamespace, printTimings, type KwokCluster } from '../cluster/harness.js';
import type { KubeObject } from '../cluster/kube.js';
import { conditionIs, crRef, describeStatus, waitStatus, type PmemDeployment } from '../cluster/pmem-deployment.js';
import { runTool } from '../cluster/processes.js';
import { claimRef, pvRef, waitBound, waitGone, type PersistentVolume } from '../cluster/storage.js';
import { waitFor } from '../cluster/wait.js';
import { toolPath } from '../tools.js';
import { NODE_NETWORK } from './network.js';
import { leftovers, startRealNode, type RealNode } from './real-node.js';
import { builtImages, podRef, podResult, podsReady, scriptPod, type BuiltImage, type Pod } from './workloads.js';

const CHART = join(REPO_ROOT, 'deploy/helm/pmem-csi');
const RELEASE = 'pmem-csi';
const OPERATOR_NAMESPACE = 'pmem-csi-operator';
const DRIVER_NAMESPACE = 'pmem-csi';
const APP_NAMESPACE = 'real-node-app';
const CR_NAME = DEFAULT_DRIVER_NAME;
/** Where the emulated device mode keeps its backing files on the node (spec's state dir). */
const DRIVER_STATE_DIR = `/var/lib/${DEFAULT_DRIVER_NAME}`;
const IMAGE_NAMES = ['driver', 'operator', 'csi-provisioner', 'registrar', 'pause'] as const;
const timings: Record<string, number> = {};

describe('real node: our images under a real kubelet, installed with Helm, emulated PMEM', () => {
  let images: Record<string, BuiltImage>;
  let cluster: KwokCluster;
  let node: RealNode | undefined;
  let nodeLeft: string[] | undefined;

  const helmEnv = (): Record<string, string> => ({
    HELM_CACHE_HOME: join(cluster.dir, 'helm', 'cache'),
    HELM_CONFIG_HOME: join(cluster.dir, 'helm', 'config'),
    HELM_DATA_HOME: join(cluster.dir, 'helm', 'data'),
    KUBECONFIG: cluster.kubeconfig,
  });
  const helm = async (args: readonly string[], timeoutMs = 240_000): Promise<string> => (await runTool(toolPath('helm'), args, { env: helmEnv(), timeoutMs })).stdout;
  const image = (name: (typeof IMAGE_NAMES)[number]): BuiltImage => {
    const i = images[name];
    if (i === undefined) throw new Error(`image ${name} missing`);
    return i;
  };
  const splitRef = (ref: string): [string, string] => {
    const at = ref.lastIndexOf(':');
    return [ref.slice(0, at), ref.slice(at + 1)];
  };
  const cr = (): Promise<PmemDeployment | undefined> => cluster.kube.get<PmemDeployment>(crRef(CR_NAME));
  const why = async (): Promise<string> => describeStatus(await cr());
  /** The emulated volumes' backing files on the node. */
  const emulatedDevices = async (): Promise<string[]> => {
    const dir = join(DRIVER_STATE_DIR, 'emulated');
    return existsSync(dir) ? (await readdir(dir)).filter((f) => f.endsWith('.img')) : [];
  };
  /** Loop devices backed by the driver's files: "loopN -> file", sorted. */
  const loopDevicesOfDriver = async (): Promise<string[]> => {
    const { stdout } = await runTool('losetup', ['--json', '--list', '--output', 'NAME,BACK-FILE'], { timeoutMs: 10_000 });
    const list = (JSON.parse(stdout || '{"loopdevices":[]}') as { loopdevices?: Array<{ name: string; 'back-file'?: string | null }> }).loopdevices ?? [];
    return list.filter((l) => (l['back-file'] ?? '').includes(DRIVER_STATE_DIR)).map((l) => `${l.name} -> ${l['back-file'] ?? ''}`).sort();
  };
  const driverNodePod = async (): Promise<Pod> => {
    const pods = await cluster.kube.list<Pod>('v1', 'Pod', { namespace: DRIVER_NAMESPACE, labelSelector: 'app.kubernetes.io/component=node' });
    if (pods.length !== 1 || pods[0] === undefined) throw new Error(`expected one node driver pod, found ${pods.map((p) => p.metadata.name).join(', ') || 'none'}`);
    return pods[0];
  };

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error('the real-node tier runs containerd, the kubelet, mounts and loop devices: needs root (CI runs as root)');
    images = builtImages(IMAGE_NAMES);
    const started = Date.now();
    cluster = await createCluster({ suite: 'real', nodes: [], podAccess: NODE_NETWORK });
    timings['control plane'] = Date.now() - started;
    node = await startRealNode({
      cluster,
      imageArchives: IMAGE_NAMES.map((n) => image(n).archive),
      sandboxImage: image('pause').ref,
      labels: { storage: 'pmem' },
    });
    for (const [phase, ms] of Object.entries(node.timings)) timings[`node: ${phase}`] = ms;
    await ensureNamespace(cluster.kube, APP_NAMESPACE);
  }, 600_000);

  afterAll(async () => {
    if (node !== undefined && nodeLeft === undefined) nodeLeft = await node.stop().catch((e: Error) => [`stop failed: ${e.message}`]);
    await cluster?.delete().catch(() => undefined);
    printTimings('real node', timings);
    process.stdout.write(`images: ${IMAGE_NAMES.map((n) => `${n} ${images?.[n]?.size ?? '?'}`).join(', ')}\n`);
  }, 300_000);

  it('helm install: the operator pod runs, the driver pods run and are ready, the status reports it', async () => {
    const started = Date.now();
    const [opRepo, opTag] = splitRef(image('operator').ref);
    const [drvRepo, drvTag] = splitRef(image('driver').ref);
    const spec = {
      deviceMode: 'emulated',
      emulatedSize: '1Gi',
      kubeletDir: node?.kubeletDir,
      nodeSelector: { storage: 'pmem' },
      provisionerImage: image('csi-provisioner').ref,
      nodeRegistrarImage: image('registrar').ref,
      imagePullPolicy: 'Never',
      logLevel: 4,
    };
    await helm(['install', RELEASE, CHART, '--namespace', OPERATOR_NAMESPACE, '--create-namespace',
      '--set', `operator.image.repository=${opRepo}`, '--set', `operator.image.tag=${opTag}`, '--set', 'operator.image.pullPolicy=Never',
      '--set', `driver.image.repository=${drvRepo}`, '--set', `driver.image.tag=${drvTag}`,
      '--set', 'deployment.create=true', '--set', `deployment.name=${CR_NAME}`, '--set-json', `deployment.spec=${JSON.stringify(spec)}`,
      '--wait', '--timeout', '180s']);
    timings['helm install --wait (operator ready)'] = Date.now() - started;
    const operatorPods = await podsReady(cluster.kube, { namespace: OPERATOR_NAMESPACE, selector: 'app.kubernetes.io/component=operator', count: 1, timeoutMs: 60_000 });
    expect(operatorPods[0]?.spec.nodeName).toBe(node?.name);

    const running = await waitStatus(cluster.kube, CR_NAME, {
      what: 'phase Running with both components Ready',
      ok: (d) => d.status?.phase === 'Running' && (d.status.driverComponents ?? []).every((c) => c.status === 'Ready') && (d.status.driverComponents ?? []).length === 2,
      timeoutMs: 240_000,
    });
    timings['driver Running (from helm install)'] = Date.now() - started;
    const status = running.status ?? {};
    expect(status.driverComponents?.map((c) => [c.component, c.status, c.desired, c.ready])).toEqual([
      ['Controller', 'Ready', 1, 1],
      ['Node', 'Ready', 1, 1],
    ]);
    for (const type of ['CertsReady', 'DriverDeployed', 'EmulatedPmem']) expect([type, conditionIs(running, type, 'True')]).toEqual([type, true]);
    // The operator issued the certificates itself: there is nothing user-supplied to verify.
    expect(status.conditions?.find((c) => c.type === 'CertsVerified')).toBeUndefined();
    const driverPods = await cluster.kube.list<Pod>('v1', 'Pod', { namespace: DRIVER_NAMESPACE });
    expect(driverPods.map((p) => [p.spec.nodeName, p.status?.phase])).toEqual(driverPods.map(() => [node?.name, 'Running']));
    expect(driverPods.length).toBe(2);
  }, 600_000);

  it('the kubelet registered the node plugin (CSINode by the kubelet) and capacity is published', async () => {
    const csiNode = await waitFor(`CSINode ${node?.name} with driver ${DEFAULT_DRIVER_NAME}`, async () => {
      const n = await cluster.kube.get<KubeObject & { spec: { drivers?: Array<{ name: string; nodeID: string; topologyKeys?: string[] }> } }>({ apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', name: node?.name ?? '' });
      return n?.spec.drivers?.some((d) => d.name === DEFAULT_DRIVER_NAME) ? n : undefined;
    }, { timeoutMs: 60_000 });
    expect(csiNode.spec.drivers?.find((d) => d.name === DEFAULT_DRIVER_NAME)).toMatchObject({ nodeID: node?.name, topologyKeys: [topologyKey(DEFAULT_DRIVER_NAME)] });
    // Created by the kubelet (managed fields), not by a test.
    expect((csiNode.metadata as { managedFields?: Array<{ manager: string }> }).managedFields?.map((f) => f.manager)).toContain('kubelet');
    const nodeObject = await cluster.kube.must({ apiVersion: 'v1', kind: 'Node', name: node?.name ?? '' });
    expect(nodeObject.metadata.labels?.[topologyKey(DEFAULT_DRIVER_NAME)]).toBe(node?.name);
    const capacities = await waitFor('CSIStorageCapacity objects with capacity on the real node', async () => {
      const all = await cluster.kube.list<KubeObject & { capacity?: string; nodeTopology?: { matchLabels?: Record<string, string> } }>('storage.k8s.io/v1', 'CSIStorageCapacity', { namespace: DRIVER_NAMESPACE });
      const mine = all.filter((c) => c.nodeTopology?.matchLabels?.[topologyKey(DEFAULT_DRIVER_NAME)] === node?.name && c.capacity !== undefined && c.capacity !== '0');
      return mine.length > 0 ? mine : undefined;
    }, { timeoutMs: 120_000 });
    expect(capacities[0]?.capacity).toMatch(/^\d+(Ki|Mi|Gi)?$/);
  }, 240_000);

  it('dynamic provisioning: a file written by one pod is read back by the next; the PVC deleted removes PV and device', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.apply({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'pmem-real' }, provisioner: DEFAULT_DRIVER_NAME, reclaimPolicy: 'Delete', volumeBindingMode: 'WaitForFirstConsumer', parameters: { 'csi.storage.k8s.io/fstype': 'ext4' } });
    await kube.apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'data', namespace: APP_NAMESPACE }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'pmem-real', resources: { requests: { storage: '64Mi' } } } });
    const mount = { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }], volumeMounts: [{ name: 'data', mountPath: '/data' }] };
    const token = `written-${Date.now()}`;
    await kube.create(scriptPod({ name: 'writer', namespace: APP_NAMESPACE, image: image('driver').ref, script: `echo ${token} > /data/file; sync; df -P /data | tail -1 | awk '{print $2}' > /dev/termination-log`, ...mount }));
    const kib = await podResult(kube, podRef('writer', APP_NAMESPACE), 240_000, why);
    timings['PVC -> writer pod done'] = Date.now() - started;
    // A 64 MiB ext4 filesystem: its size in 1 KiB blocks, a little under 64 Mi for metadata.
    expect(Number(kib)).toBeGreaterThan(50_000);
    expect(Number(kib)).toBeLessThanOrEqual(65_536);
    const pv = await waitBound(kube, 'data', 10_000).catch(async () => kube.must<PersistentVolume>(pvRef((await kube.must<KubeObject & { spec: { volumeName: string } }>({ ...claimRef('data'), namespace: APP_NAMESPACE })).spec.volumeName)));
    await kube.delete(podRef('writer', APP_NAMESPACE));
    await waitGone(kube, podRef('writer', APP_NAMESPACE), 120_000);

    await kube.create(scriptPod({ name: 'reader', namespace: APP_NAMESPACE, image: image('driver').ref, script: 'cat /data/file > /dev/termination-log', ...mount }));
    expect(await podResult(kube, podRef('reader', APP_NAMESPACE), 180_000, why)).toBe(token);
    await kube.delete(podRef('reader', APP_NAMESPACE));
    await waitGone(kube, podRef('reader', APP_NAMESPACE), 120_000);

    await kube.delete({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'data', namespace: APP_NAMESPACE });
    await waitGone(kube, pvRef(pv.metadata.name), 120_000, why);
    const handle = pv.spec.csi?.volumeHandle ?? '';
    await waitFor(`the emulated device file of ${handle} to be removed`, () => (existsSync(join(DRIVER_STATE_DIR, 'emulated', `${handle}.img`)) ? undefined : true), { timeoutMs: 60_000 });
    timings['provisioning round trip'] = Date.now() - started;
  }, 600_000);

  it('a raw block volume: the pod sees a block device of the claimed size and writes to it', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'block', namespace: APP_NAMESPACE }, spec: { accessModes: ['ReadWriteOnce'], volumeMode: 'Block', storageClassName: 'pmem-real', resources: { requests: { storage: '32Mi' } } } });
    await kube.create(scriptPod({
      name: 'block-user',
      namespace: APP_NAMESPACE,
      image: image('driver').ref,
      script: 'test -b /dev/pmem-block; echo block-data | dd of=/dev/pmem-block conv=fsync status=none; test "$(head -c 10 /dev/pmem-block)" = block-data; blockdev --getsize64 /dev/pmem-block > /dev/termination-log',
      volumes: [{ name: 'block', persistentVolumeClaim: { claimName: 'block' } }],
      volumeDevices: [{ name: 'block', devicePath: '/dev/pmem-block' }],
    }));
    expect(Number(await podResult(kube, podRef('block-user', APP_NAMESPACE), 240_000, why))).toBeGreaterThanOrEqual(32 * 1024 ** 2);
    await kube.delete(podRef('block-user', APP_NAMESPACE));
    await waitGone(kube, podRef('block-user', APP_NAMESPACE), 120_000);
    const pvName = (await kube.must<KubeObject & { spec: { volumeName: string } }>({ ...claimRef('block'), namespace: APP_NAMESPACE })).spec.volumeName;
    await kube.delete({ ...claimRef('block'), namespace: APP_NAMESPACE });
    await waitGone(kube, pvRef(pvName), 120_000, why);
    timings['raw block round trip'] = Date.now() - started;
  }, 400_000);

  it('a CSI ephemeral inline volume lives and dies with its pod', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await kube.create(scriptPod({
      name: 'ephemeral-user',
      namespace: APP_NAMESPACE,
      image: image('driver').ref,
      script: "echo scratch > /scratch/f; test \"$(cat /scratch/f)\" = scratch; df -P /scratch | tail -1 | awk '{print $2}' > /dev/termination-log",
      volumes: [{ name: 'scratch', csi: { driver: DEFAULT_DRIVER_NAME, fsType: 'ext4', volumeAttributes: { size: '32Mi' } } }],
      volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
    }));
    const kib = Number(await podResult(kube, podRef('ephemeral-user', APP_NAMESPACE), 240_000, why));
    expect(kib).toBeGreaterThan(20_000);
    expect(kib).toBeLessThanOrEqual(32_768);
    await kube.delete(podRef('ephemeral-user', APP_NAMESPACE));
    await waitGone(kube, podRef('ephemeral-user', APP_NAMESPACE), 120_000);
    // Unpublished with the pod: no emulated device remains on the node.
    await waitFor('no emulated device file left after the ephemeral pod', async () => ((await emulatedDevices()).length === 0 ? true : undefined), { timeoutMs: 60_000, describe: async () => (await emulatedDevices()).join(', ') });
    timings['ephemeral round trip'] = Date.now() - started;
  }, 400_000);

  it('the node driver container killed: the node component turns NotReady, the kubelet restarts it, volumes still work', async () => {
    const started = Date.now();
    const { kube } = cluster;
    // A volume in use while the driver dies: it must be found again (same device, no second loop device).
    await kube.apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'survivor', namespace: APP_NAMESPACE }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'pmem-real', resources: { requests: { storage: '32Mi' } } } });
    const mount = { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'survivor' } }], volumeMounts: [{ name: 'data', mountPath: '/data' }] };
    await kube.create(scriptPod({ name: 'before-kill', namespace: APP_NAMESPACE, image: image('driver').ref, script: 'echo survived > /data/f; sync; echo ok > /dev/termination-log', ...mount }));
    expect(await podResult(kube, podRef('before-kill', APP_NAMESPACE), 240_000, why)).toBe('ok');
    const loopsBefore = await loopDevicesOfDriver();

    const containers = (await node?.containerd.ctr(['containers', 'list', '--quiet', `labels."io.kubernetes.container.name"==${CONTAINER_NAMES.driver}`])) ?? '';
    const ids = containers.split('\n').filter((l) => l.trim() !== '');
    const running = (await node?.containerd.ctr(['tasks', 'list', '--quiet'])) ?? '';
    const target = ids.find((id) => running.split('\n').includes(id));
    expect(target).toBeDefined();
    const restartsBefore = (await driverNodePod()).status?.containerStatuses?.find((c) => c.name === CONTAINER_NAMES.driver)?.restartCount ?? -1;
    await node?.containerd.ctr(['tasks', 'kill', '--signal', 'SIGKILL', target ?? '']);
    const notReady = await waitStatus(kube, CR_NAME, { what: 'the Node component NotReady', ok: (d) => d.status?.driverComponents?.find((c) => c.component === 'Node')?.status === 'NotReady', timeoutMs: 60_000 });
    const nodeComponent = notReady.status?.driverComponents?.find((c) => c.component === 'Node');
    expect(nodeComponent?.reason).toMatch(/0 out of 1/);
    timings['driver killed -> NotReady reported'] = Date.now() - started;
    await waitStatus(kube, CR_NAME, { what: 'the Node component Ready again', ok: (d) => d.status?.driverComponents?.find((c) => c.component === 'Node')?.status === 'Ready' && d.status.phase === 'Running', timeoutMs: 120_000 });
    timings['driver killed -> Ready again'] = Date.now() - started;
    const restartsAfter = (await driverNodePod()).status?.containerStatuses?.find((c) => c.name === CONTAINER_NAMES.driver)?.restartCount ?? -1;
    expect(restartsAfter).toBe(restartsBefore + 1);

    await kube.create(scriptPod({ name: 'after-kill', namespace: APP_NAMESPACE, image: image('driver').ref, script: 'cat /data/f > /dev/termination-log', ...mount }));
    expect(await podResult(kube, podRef('after-kill', APP_NAMESPACE), 240_000, why)).toBe('survived');
    // The restarted driver recognised its loop device instead of attaching a second one.
    expect(await loopDevicesOfDriver()).toEqual(loopsBefore);
    for (const name of ['before-kill', 'after-kill']) await kube.delete(podRef(name, APP_NAMESPACE));
    for (const name of ['before-kill', 'after-kill']) await waitGone(kube, podRef(name, APP_NAMESPACE), 120_000);
    const pvName = (await kube.must<KubeObject & { spec: { volumeName: string } }>({ ...claimRef('survivor'), namespace: APP_NAMESPACE })).spec.volumeName;
    await kube.delete({ ...claimRef('survivor'), namespace: APP_NAMESPACE });
    await waitGone(kube, pvRef(pvName), 120_000, why);
    await waitFor('no emulated device and no loop device of the driver left', async () => ((await emulatedDevices()).length === 0 && (await loopDevicesOfDriver()).length === 0 ? true : undefined), { timeoutMs: 60_000 });
  }, 600_000);

  it('the teardown leaves no mounts, loop devices, containers, network devices, rules or processes', async () => {
    await helm(['uninstall', RELEASE, '--namespace', OPERATOR_NAMESPACE, '--wait', '--timeout', '120s']).catch(() => '');
    // The PmemCSIDeployment is kept by helm (resource-policy keep): delete it, which removes the driver.
    await cluster.kube.delete(crRef(CR_NAME)).catch(() => false);
    await waitFor('the driver pods to be gone', async () => ((await cluster.kube.list('v1', 'Pod', { namespace: DRIVER_NAMESPACE })).length === 0 ? true : undefined), { timeoutMs: 120_000 }).catch(() => undefined);
    const started = Date.now();
    nodeLeft = (await node?.stop()) ?? ['no node'];
    timings['node teardown'] = Date.now() - started;
    expect(nodeLeft).toEqual([]);
    expect(await leftovers(DRIVER_STATE_DIR)).toEqual([]);
  }, 400_000);
});
