// Real-node tier, issue 31: a cluster that ran the Go PMEM-CSI v1.x operator switches to ours while
// a pod keeps a volume of the "old" deployment mounted. Its own control plane and real node.
//
// WHAT RUNS AS "THE GO DRIVER" — a substitution, said plainly: the Go driver's images cannot be
// pulled here (no internet) and its module is not on the Go module proxy, so no Go binary runs.
// The "old" deployment is the Go operator v1.x object set of the cluster tier's fixture
// (../cluster/__fixtures__/go-operator-v1.ts: names, labels, selectors, controller owner
// references to the CR, the CSIDriver without storageCapacity, the Services, the RBAC, the
// webhooks' and raw-namespace conversion objects), in which only two pod templates are replaced:
// - the node DaemonSet `<p>-node` (Go name, labels and selector) runs OUR node driver and
//   registrar, with the containers, volumes and arguments our operator renders for emulated mode
//   (buildDesiredObjects of @pmem-csi/operator), under the Go node pods' ServiceAccount;
// - the controller StatefulSet `<p>-controller` (Go's, which served its webhooks) runs OUR
//   controller and external-provisioner (the Go driver provisioned with a provisioner in each
//   node pod; ours provisions through the controller), without external-resizer (the Go driver
//   had none), with --capacity-ownerref-level=1 (its CSIStorageCapacity objects owned by the
//   StatefulSet: the Go Role grants get on ReplicaSets, not StatefulSets), under the Go
//   provisioner's ServiceAccount and RBAC;
//   Its controller runs with --lease-seconds=6 (settle period 15 s instead of 75 s: only the
//   switch and our controller after it are under test);
// - their TLS material (the Go v1.x driver had none) in two Secrets of test-only names that no
//   operator knows, deleted by the test after the switch.
// So the node's volume was provisioned, staged and published by a pod of the Go-shaped DaemonSet
// before the switch; what this file does NOT show is the Go binary's own on-node state being taken
// over (the QEMU tier's guest-migration cases build that state). The CRDs: the CR is created under
// the Go operator's CRD (the fixture's) as a Go user wrote it (mutatePods Try, controllerTLSSecret
// "", schedulerNodePort 0, our sidecar images) with the Go operator's status, then our CRD replaces
// the Go one before the Go-shaped objects are made (the guide's step 3, done early; the cluster
// tier checks that swap field by field) and the fields this machine needs and the Go CRD lacks
// are added (deviceMode emulated, emulatedSize, resizerImage).
//
// The switch, as docs/migration.md's guide says: the Go operator is stopped (here: none runs),
// then `helm install` of our operator with the Go operator's driver namespace
// (driver.namespace, driver.createNamespace false) and no CR of its own. Checked: the CR Running
// with DriverDeployed AllObjectsApplied and the GoOperatorObjectsTakenOver event; the Go-only
// objects gone, ours present, the CSIDriver changed in place; a watch of every driver pod and a
// 250 ms sampler: never two node driver pods at once; the volume user never restarted, stayed
// Ready, its checks (read, mount line, fsync'd heartbeat) never failed; a new pod reads the old
// volume; a new claim is provisioned by our driver; deleting the claims removes the PVs, the
// emulated files and their loop devices; the node's teardown leaves nothing.
import { existsSync } from 'node:fs';
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Container, V1PodSpec, V1Volume } from '@kubernetes/client-node';
import {
  API_GROUP_VERSION,
  CONTAINER_NAMES,
  KIND,
  LABEL_KEYS,
  NODE_CONTROLLER_SAN,
  REGISTRY_SAN,
  deploymentObjectNames,
  withDefaults,
} from '@pmem-csi/api';
import { renderDriverArgs } from '@pmem-csi/csi';
import { CA_COMMON_NAME, buildDesiredObjects, type TlsMaterial } from '@pmem-csi/operator';
import { createCa, createLeaf } from '@pmem-csi/runtime';
import { clusterHelm, createCluster, ensureNamespace, printTimings, type KwokCluster } from '../cluster/harness.js';
import { describeRef, refOf, type KubeObject } from '../cluster/kube.js';
import {
  crRef,
  describeStatus,
  expectedObjects,
  installCrd,
  waitCrdEstablished,
  type PmemDeployment,
} from '../cluster/pmem-deployment.js';
import { PodTimeline } from '../cluster/pod-timeline.js';
import { runTool } from '../cluster/processes.js';
import { claimRef, pvRef, waitGone, type PersistentVolume } from '../cluster/storage.js';
import { sleep, waitFor } from '../cluster/wait.js';
import {
  goOnlyObjectNames,
  goOperatorCrd,
  goOperatorObjects,
  goStatus,
  type GoSpec,
} from '../cluster/__fixtures__/go-operator-v1.js';
import { builtImages, type BuiltImage } from './images.js';
import {
  CR_NAME,
  DRIVER_NAMESPACE,
  OPERATOR_NAMESPACE,
  deploymentSpec,
  helmInstallArgs,
  uninstallStack,
  type StackImage,
} from './install.js';
import { NODE_NETWORK } from './network.js';
import { leftovers, loopDevicesUnder, startRealNode, type RealNode } from './real-node.js';
import {
  RolloutObserver,
  isLive,
  isReady,
  type Invariant,
  type Milestone,
  type RolloutSnapshot,
  type Workload,
} from './rollout.js';
import {
  POD_LABEL,
  VOLUME_USER_READY_FILE,
  claimObject,
  podRef,
  podResult,
  podsReady,
  scriptPod,
  volumeUserScript,
  type Pod,
} from './workloads.js';

const APP_NAMESPACE = 'go-switch-app';
const DRIVER_STATE_DIR = `/var/lib/${CR_NAME}`;
const EMULATED_DIR = join(DRIVER_STATE_DIR, 'emulated');
const IMAGE_NAMES = ['driver', 'operator', 'csi-provisioner', 'csi-resizer', 'registrar', 'pause'] as const;
/** The Go v1.x fields as a Go user wrote them, in the accepted form. */
const GO_FIELDS: GoSpec = { mutatePods: 'Try', controllerTLSSecret: '', schedulerNodePort: 0 };
/** The TLS material our images need in the Go-shaped pods: Secrets of names no operator knows. */
const TEST_SECRETS = { registry: 'go-switch-e2e-registry-tls', node: 'go-switch-e2e-node-tls' } as const;
const OLD_CLAIM = 'go-old-data';
const NEW_CLAIM = 'go-new-data';
const USER = 'go-volume-user';
const READER = 'go-volume-reader';
const NEW_WRITER = 'go-new-writer';
const STORAGE_CLASS: KubeObject = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'pmem-go-switch' },
  provisioner: CR_NAME,
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'WaitForFirstConsumer',
  parameters: { 'csi.storage.k8s.io/fstype': 'ext4' },
} as KubeObject;
const timings: Record<string, number> = {};

const kindName = (o: KubeObject): string => `${o.kind} ${o.metadata.name}`;
const condition = (c: PmemDeployment | undefined, type: string): { status: string; reason: string } | undefined =>
  c?.status?.conditions?.find((x) => x.type === type);
/** Running as this operator reports it (the Go status said Running too). */
const runningByUs = (c: PmemDeployment | undefined): boolean =>
  c?.status?.phase === 'Running' && condition(c, 'DriverDeployed')?.reason === 'AllObjectsApplied';
const goNodePod = (p: Pod): boolean => p.metadata.labels?.['app.kubernetes.io/name'] === 'pmem-csi-node';
const goControllerPod = (p: Pod): boolean => p.metadata.labels?.['app.kubernetes.io/name'] === 'pmem-csi-controller';
const ourNodePod = (p: Pod): boolean => p.metadata.labels?.['app.kubernetes.io/name'] === 'pmem-csi';
const mountOf = (claim: string): { volumes: unknown[]; volumeMounts: unknown[] } => ({
  volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
  volumeMounts: [{ name: 'data', mountPath: '/data' }],
});

/** The emulated volumes' backing files on the node. */
const emulatedFiles = async (): Promise<string[]> =>
  existsSync(EMULATED_DIR) ? (await readdir(EMULATED_DIR)).filter((f) => f.endsWith('.img')).sort() : [];

/**
 * The Go operator's objects for the CR, with the node DaemonSet's and the controller StatefulSet's
 * pod specs replaced by what our operator renders for the same CR (see the header), and the two
 * test-only TLS Secrets they mount.
 */
async function goShapedObjects(
  cr: PmemDeployment & { metadata: { uid: string; name: string } },
  driverImage: string,
): Promise<KubeObject[]> {
  const ca = await createCa({ commonName: CA_COMMON_NAME, validityDays: 1 });
  const tls = async (dnsName: string): Promise<TlsMaterial> => {
    const leaf = await createLeaf({ ca, dnsName, validityDays: 1 });
    return { caBundlePem: ca.certPem, certPem: leaf.certPem, keyPem: leaf.keyPem };
  };
  const certs = { registry: await tls(REGISTRY_SAN), node: await tls(NODE_CONTROLLER_SAN) };
  const ours = buildDesiredObjects(cr, {
    namespace: DRIVER_NAMESPACE,
    operatorVersion: 'go-shaped',
    spec: withDefaults(cr.spec, { operatorImage: driverImage }),
    certs,
  });
  const names = deploymentObjectNames(CR_NAME);
  const podSpecOf = (id: string): V1PodSpec => {
    const o = ours.find((d) => d.builder.id === id)?.object as
      { spec?: { template?: { spec?: V1PodSpec } } } | undefined;
    const spec = o?.spec?.template?.spec;
    if (spec === undefined) throw new Error(`our operator rendered no ${id}`);
    return spec;
  };
  const renamed = (volumes: readonly V1Volume[] | undefined): V1Volume[] =>
    (volumes ?? []).map((v) =>
      v.secret?.secretName === names.registrySecret
        ? { ...v, secret: { ...v.secret, secretName: TEST_SECRETS.registry } }
        : v.secret?.secretName === names.nodeSecret
          ? { ...v, secret: { ...v.secret, secretName: TEST_SECRETS.node } }
          : v,
    );
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const secret = (name: string, m: TlsMaterial): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: DRIVER_NAMESPACE },
      type: 'kubernetes.io/tls',
      data: { 'ca.crt': b64(m.caBundlePem), 'tls.crt': b64(m.certPem), 'tls.key': b64(m.keyPem) },
    }) as KubeObject;
  const go = goOperatorObjects({
    crName: CR_NAME,
    crUid: cr.metadata.uid,
    namespace: DRIVER_NAMESPACE,
    spec: { ...GO_FIELDS, nodeSelector: { storage: 'pmem' }, logLevel: 4 },
  });
  const withPodSpec = (o: KubeObject, spec: V1PodSpec): KubeObject => {
    const w = structuredClone(o) as KubeObject & { spec: { template: { spec: V1PodSpec } } };
    const goPod = w.spec.template.spec;
    // Ours whole (containers, volumes, security context) with the Go pods' tolerations, under the
    // Go node pods' ServiceAccount <p>-controller, which holds the Go provisioner's RBAC (the Go
    // controller StatefulSet's own, <p>-webhooks, may not write CSIStorageCapacity objects).
    w.spec.template.spec = {
      ...spec,
      serviceAccountName: names.controllerServiceAccount,
      ...(goPod.tolerations === undefined ? {} : { tolerations: goPod.tolerations }),
      volumes: renamed(spec.volumes),
    };
    return w;
  };
  const node = podSpecOf('node-daemonset');
  const controller = podSpecOf('controller-deployment');
  const controllerContainers: V1Container[] = controller.containers
    .filter((c) => c.name !== CONTAINER_NAMES.resizer)
    .map((c) => {
      if (c.name === CONTAINER_NAMES.provisioner)
        return {
          ...c,
          args: (c.args ?? []).map((a) => (a === '--capacity-ownerref-level=2' ? '--capacity-ownerref-level=1' : a)),
        };
      // The stand-in's leases are short, so that its start-up settle period (15 s instead of the
      // default 75 s) does not dominate this file; the controller under test, ours after the
      // switch, runs with the defaults.
      if (c.name === CONTAINER_NAMES.driver)
        return {
          ...c,
          args: [...(c.args ?? []), ...renderDriverArgs({ mode: 'controller', leaseSeconds: STAND_IN_LEASE_SECONDS })],
        };
      return c;
    });
  return [
    secret(TEST_SECRETS.registry, certs.registry),
    secret(TEST_SECRETS.node, certs.node),
    ...go.map((o) => {
      if (o.kind === 'DaemonSet' && o.metadata.name === names.nodeDaemonSet) return withPodSpec(o, node);
      if (o.kind === 'StatefulSet') return withPodSpec(o, { ...controller, containers: controllerContainers });
      return o;
    }),
  ];
}

/** The stand-in old controller's registration lease (its settle period: 1.5 × lease + (4 × lease - lease) / 3 = 15 s). */
const STAND_IN_LEASE_SECONDS = 6;

describe('real node: switching from the Go operator (v1.x object shapes) to ours with a volume in use', () => {
  let images: ReadonlyMap<string, BuiltImage> | undefined;
  let cluster: KwokCluster;
  let node: RealNode | undefined;
  let nodeLeft: string[] | undefined;
  /** Every object of the Go-shaped deployment as created, by "Kind namespace/name". */
  const created = new Map<string, KubeObject>();
  let userUid: string | undefined;
  let token = '';
  let oldPv = '';
  let switchStarted = 0;

  const image = (name: (typeof IMAGE_NAMES)[number]): BuiltImage => {
    const i = images?.get(name);
    if (i?.archive === undefined) throw new Error(`image ${name} missing or without an archive`);
    return i;
  };
  const cr = (): Promise<PmemDeployment | undefined> => cluster.kube.get<PmemDeployment>(crRef(CR_NAME));
  const why = async (): Promise<string> => describeStatus(await cr());
  const driverPods = (component: string): Promise<Pod[]> =>
    cluster.kube.list<Pod>('v1', 'Pod', {
      namespace: DRIVER_NAMESPACE,
      labelSelector: `app.kubernetes.io/instance=${CR_NAME},app.kubernetes.io/component=${component}`,
    });
  /** The heartbeat the volume user last wrote, read on the host through the pod's mount of the volume. */
  const beatOnHost = async (): Promise<number> => {
    const dir = join(node?.kubeletDir ?? '', 'pods', userUid ?? '', 'volumes', 'kubernetes.io~csi', oldPv, 'mount');
    return Number((await readFile(join(dir, 'beat'), 'utf8')).trim());
  };
  const loops = async (): Promise<string[]> =>
    (await loopDevicesUnder(DRIVER_STATE_DIR)).map((l) => `${l.name} -> ${l.backFile}`).sort();

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error('the real-node tier runs containerd, the kubelet, mounts and loop devices: needs root');
    const built = builtImages(IMAGE_NAMES);
    images = built.images;
    for (const w of built.warnings) process.stdout.write(`${w}\n`);
    const started = Date.now();
    cluster = await createCluster({ suite: 'go-switch', nodes: [], podAccess: NODE_NETWORK });
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
    if (node !== undefined && nodeLeft === undefined) {
      await uninstallStack(cluster).catch(() => undefined);
      nodeLeft = await node.stop().catch((e: Error) => [`stop failed: ${e.message}`]);
    }
    if (node !== undefined) {
      for (const l of await loopDevicesUnder(DRIVER_STATE_DIR).catch(() => []))
        await runTool('losetup', ['--detach', l.name]).catch(() => undefined);
      await rm(DRIVER_STATE_DIR, { recursive: true, force: true }).catch(() => undefined);
    }
    await cluster?.delete().catch(() => undefined);
    printTimings('go switch', timings);
  }, 300_000);

  it('before: the Go-shaped deployment runs our node driver on the real node; a pod writes a volume and keeps it in use', async () => {
    const started = Date.now();
    const { kube } = cluster;
    await ensureNamespace(kube, DRIVER_NAMESPACE);
    // The Go operator's CRD, the CR as a Go user wrote it (Go v1.x fields only: the accepted form
    // of its scheduler fields, our sidecar images, the node selector) and the status the Go
    // operator wrote; then our CRD over the Go one (the guide's step 3, done early here: the
    // CR keeps every field) and the fields this machine needs, which the Go CRD does not have
    // (emulated mode: there is no PMEM here; external-resizer's image).
    await kube.apply(goOperatorCrd());
    await waitCrdEstablished(kube, 'the Go CRD');
    const spec = deploymentSpec((n: StackImage): string => image(n).ref, '1Gi');
    const { deviceMode, emulatedSize, resizerImage, ...goUserFields } = spec;
    await kube.create({
      apiVersion: API_GROUP_VERSION,
      kind: KIND,
      metadata: { name: CR_NAME },
      spec: { ...GO_FIELDS, ...goUserFields },
    } as KubeObject);
    await kube.request('PATCH', `/apis/${API_GROUP_VERSION}/pmemcsideployments/${CR_NAME}/status`, {
      body: { status: goStatus(new Date(), 1) },
      contentType: 'application/merge-patch+json',
    });
    await installCrd(kube);
    await kube.merge({
      apiVersion: API_GROUP_VERSION,
      kind: KIND,
      metadata: { name: CR_NAME },
      spec: { deviceMode, emulatedSize, resizerImage },
    } as KubeObject);
    const live = (await kube.must<PmemDeployment>(crRef(CR_NAME))) as PmemDeployment & {
      metadata: { uid: string; name: string };
    };
    for (const o of await goShapedObjects(live, image('driver').ref))
      created.set(describeRef(refOf(o)), await kube.create(o));
    const [goNode] = await podsReady(kube, {
      namespace: DRIVER_NAMESPACE,
      selector: `app.kubernetes.io/name=pmem-csi-node,app.kubernetes.io/instance=${CR_NAME}`,
      count: 1,
      timeoutMs: 180_000,
    });
    await podsReady(kube, {
      namespace: DRIVER_NAMESPACE,
      selector: `app.kubernetes.io/name=pmem-csi-controller,app.kubernetes.io/instance=${CR_NAME}`,
      count: 1,
      timeoutMs: 120_000,
    });
    expect(goNode?.spec.nodeName).toBe(node?.name);
    timings['Go-shaped deployment running'] = Date.now() - started;

    await kube.apply(STORAGE_CLASS);
    await kube.create(
      claimObject({ name: OLD_CLAIM, namespace: APP_NAMESPACE, storageClassName: 'pmem-go-switch', size: '32Mi' }),
    );
    token = `written-under-go-shapes-${Date.now()}`;
    await kube.create(
      scriptPod({
        name: USER,
        namespace: APP_NAMESPACE,
        image: image('driver').ref,
        script: volumeUserScript(token),
        readyWhenFile: VOLUME_USER_READY_FILE,
        ...mountOf(OLD_CLAIM),
      }),
    );
    const [user] = await podsReady(kube, {
      namespace: APP_NAMESPACE,
      selector: `${POD_LABEL}=${USER}`,
      count: 1,
      timeoutMs: 180_000,
    });
    userUid = user?.metadata.uid;
    oldPv =
      (
        await kube.must<KubeObject & { spec: { volumeName?: string } }>({
          ...claimRef(OLD_CLAIM),
          namespace: APP_NAMESPACE,
        })
      ).spec.volumeName ?? '';
    const pv = await kube.must<PersistentVolume>(pvRef(oldPv));
    expect(pv.spec.csi?.driver).toBe(CR_NAME);
    // Provisioned, staged and published by the Go-shaped pods: its device file and one loop device.
    expect(await emulatedFiles()).toEqual([`${pv.spec.csi?.volumeHandle ?? ''}.img`]);
    expect(await loops()).toHaveLength(1);
    expect(await beatOnHost()).toBeGreaterThanOrEqual(0);
    timings['volume in use (from Go-shaped deployment running; the stand-in settles 15 s first)'] =
      Date.now() - started - timings['Go-shaped deployment running'];
  }, 420_000);

  it('the switch (helm install into the Go namespace): CR Running by us, never two node drivers, the volume user untouched', async () => {
    const { kube } = cluster;
    if (oldPv === '') throw new Error('the "before" case did not finish: nothing to switch with');
    const csiDriverBefore = created.get(
      describeRef({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', name: CR_NAME }),
    );
    const names = deploymentObjectNames(CR_NAME);
    const timeline = await PodTimeline.start(kube, DRIVER_NAMESPACE);
    let helmReturned = false;
    const milestones: Milestone[] = [
      { name: 'helm install returned', holds: () => helmReturned },
      {
        name: 'operator ready',
        holds: (s) => s.operatorPods.length === 1 && s.operatorPods.every(isReady),
      },
      { name: 'Go controller gone', holds: (s) => !s.controllerPods.some(goControllerPod) },
      { name: 'Go node driver gone', holds: (s) => !s.nodePods.some(goNodePod) },
      {
        name: 'our node driver ready',
        holds: (s) => s.nodePods.length === 1 && s.nodePods.every((p) => ourNodePod(p) && isReady(p)),
      },
      {
        name: 'our controller ready',
        holds: (s) => s.controllerPods.length === 1 && s.controllerPods.every((p) => !goControllerPod(p) && isReady(p)),
      },
      { name: 'CR Running (by us)', holds: (s) => runningByUs(s.cr) },
    ];
    const invariants: Invariant[] = [
      {
        name: 'at most one node driver',
        broken: (s) =>
          s.nodePods.filter(isLive).length <= 1
            ? undefined
            : s.nodePods
                .filter(isLive)
                .map((p) => `${p.metadata.name} (${goNodePod(p) ? 'Go-shaped' : 'ours'}) ${p.status?.phase ?? '-'}`)
                .join(', '),
      },
      {
        name: 'the volume user keeps running and ready',
        broken: (s) => {
          const p = s.workload;
          if (p === undefined) return 'gone';
          const c = p.status?.containerStatuses?.[0];
          return p.metadata.uid === userUid &&
            p.status?.phase === 'Running' &&
            c?.state?.running !== undefined &&
            c.ready &&
            c.restartCount === 0
            ? undefined
            : `uid ${p.metadata.uid ?? '?'}, phase ${p.status?.phase ?? '-'}, ready ${String(c?.ready)}, restarts ${c?.restartCount ?? '?'}`;
        },
      },
    ];
    const take = async (): Promise<RolloutSnapshot> => {
      const [operatorPods, controllerPods, nodePods, deployment, daemonSet, crNow, workload] = await Promise.all([
        kube.list<Pod>('v1', 'Pod', {
          namespace: OPERATOR_NAMESPACE,
          labelSelector: 'app.kubernetes.io/component=operator',
        }),
        driverPods('controller'),
        driverPods('node'),
        kube.get<Workload>({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: names.controllerDeployment,
          namespace: DRIVER_NAMESPACE,
        }),
        kube.get<Workload>({
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          name: names.nodeDaemonSet,
          namespace: DRIVER_NAMESPACE,
        }),
        cr(),
        kube.get<Pod>(podRef(USER, APP_NAMESPACE)),
      ]);
      return {
        ms: Date.now() - switchStarted,
        operatorPods,
        controllerPods,
        nodePods,
        deployment,
        daemonSet,
        cr: crNow,
        workload,
      };
    };
    const who = (p: Pod): string =>
      `${goNodePod(p) || goControllerPod(p) ? 'Go-shaped' : 'ours'} ${isReady(p) ? 'ready' : (p.status?.phase ?? '-')}${p.metadata.deletionTimestamp === undefined ? '' : ' terminating'}`;
    const describe = (s: RolloutSnapshot): string =>
      [
        `operator [${s.operatorPods.map((p) => (isReady(p) ? 'ready' : (p.status?.phase ?? '-'))).join(', ')}]`,
        `controller [${s.controllerPods.map(who).join(', ')}]`,
        `node [${s.nodePods.map(who).join(', ')}]`,
        `DS ${s.daemonSet === undefined ? '-' : s.daemonSet.metadata.labels?.['app.kubernetes.io/name'] === 'pmem-csi' ? 'ours' : 'Go'}`,
        `CR ${s.cr?.status?.phase ?? '-'} (${condition(s.cr, 'DriverDeployed')?.reason ?? '-'})`,
        `app ${s.workload === undefined ? 'gone' : isReady(s.workload) ? 'ready' : (s.workload.status?.phase ?? '-')}`,
      ].join(' | ');
    const beatBefore = await beatOnHost();
    switchStarted = Date.now();
    const observer = new RolloutObserver({ take, describe, milestones, invariants }).start();
    let beatAfter = -1;
    try {
      // The guide's step 2 (stop the Go operator) is the absence of one here; step 3 (our CRD) was
      // done before; step 4: our operator into the Go operator's driver namespace, no CR of its own.
      await clusterHelm(cluster)(
        helmInstallArgs((n) => image(n).ref, '1Gi', { createDeployment: false, driverNamespaceExists: true }),
        240_000,
      );
      helmReturned = true;
      timings['switch: helm install --wait'] = Date.now() - switchStarted;
      await waitFor(
        'the switch: CR Running by us (AllObjectsApplied), our node driver and controller ready',
        async () =>
          observer.reachedAt.has('CR Running (by us)') &&
          observer.reachedAt.has('our node driver ready') &&
          observer.reachedAt.has('our controller ready')
            ? true
            : undefined,
        {
          timeoutMs: 180_000,
          intervalMs: 500,
          describe: async () => `${observer.summary()}; last: ${observer.lines.at(-1) ?? ''}; ${await why()}`,
        },
      );
      beatAfter = await beatOnHost();
      // A few more samples: the state after the switch holds (no late restart of the volume user).
      await sleep(3_000);
    } finally {
      await observer.stop();
      timeline.stop();
      process.stdout.write(
        `switch from the Go-shaped deployment with a volume in use, timeline (s from helm install; ${observer.samples} samples, ${observer.failedSamples} failed):\n  ${observer.lines.join('\n  ')}\n  => ${observer.summary()}\n`,
      );
    }
    const at = (m: string): number => observer.reachedAt.get(m) ?? -1;
    timings['switch: started -> CR Running'] = at('CR Running (by us)');
    timings['switch: node pod gap (Go-shaped gone -> ours ready)'] =
      at('our node driver ready') - at('Go node driver gone');
    const summary = timeline.summary();
    process.stdout.write(
      `pod watch: ${summary.events} events; ${summary.perNode.join('; ')}\nvolume user: heartbeat ${beatBefore} at the switch's start, ${beatAfter} when the CR was Running (${beatAfter - beatBefore} checks during the switch)\n`,
    );
    expect(timeline.failure()).toBeUndefined();
    expect(summary.overlaps).toEqual([]);
    expect(summary.nodesWithOurs).toEqual([node?.name]);
    expect(observer.violations).toEqual([]);
    expect(observer.failedSamples).toBe(0);
    expect(milestones.filter((m) => !observer.reachedAt.has(m.name)).map((m) => m.name)).toEqual([]);
    // The volume user checked on through the switch: at least one check per second.
    expect(beatAfter - beatBefore).toBeGreaterThanOrEqual(Math.floor(at('CR Running (by us)') / 1000));

    // The CR, its conditions and the takeover event.
    const running = await kube.must<PmemDeployment>(crRef(CR_NAME));
    expect(condition(running, 'DriverDeployed')).toMatchObject({ status: 'True', reason: 'AllObjectsApplied' });
    expect(condition(running, 'GoOperatorFields')).toMatchObject({ status: 'True', reason: 'Accepted' });
    const wanted = ['GoOperatorStatusConverted', 'GoOperatorFieldsAccepted', 'GoOperatorObjectsTakenOver'];
    let seen: string[] = [];
    const events = await waitFor(
      `events ${wanted.join(', ')} about PmemCSIDeployment ${CR_NAME}`,
      async () => {
        const all = await kube.list<
          KubeObject & { reason?: string; message?: string; involvedObject?: { kind?: string; name?: string } }
        >('v1', 'Event', { namespace: 'default' });
        const about = all.filter((e) => e.involvedObject?.kind === KIND && e.involvedObject.name === CR_NAME);
        seen = about.map((e) => e.reason ?? '');
        return wanted.every((r) => seen.includes(r)) ? about : undefined;
      },
      { timeoutMs: 30_000, describe: () => `seen: ${seen.join(', ')}` },
    );
    const takeover = events.find((e) => e.reason === 'GoOperatorObjectsTakenOver')?.message ?? '';
    process.stdout.write(`takeover event: ${takeover}\n`);
    expect(takeover).toMatch(new RegExp(`replaced \\d+ \\([^)]*DaemonSet ${DRIVER_NAMESPACE}/${names.nodeDaemonSet}`));

    // The Go-only objects gone, ours present with our label, the CSIDriver changed in place.
    const goOnly = goOnlyObjectNames(CR_NAME);
    for (const o of created.values()) {
      if (!goOnly.includes(kindName(o))) continue;
      const now = await kube.get(refOf(o));
      expect({ object: kindName(o), left: now !== undefined && now.metadata.uid === o.metadata.uid }).toEqual({
        object: kindName(o),
        left: false,
      });
    }
    for (const r of expectedObjects(CR_NAME)) {
      const o = await kube.must(r);
      expect([describeRef(r), o.metadata.labels?.[LABEL_KEYS.managedBy]]).toEqual([
        describeRef(r),
        'pmem-csi-operator',
      ]);
    }
    const csiDriver = await kube.must<KubeObject & { spec?: Record<string, unknown> }>(
      refOf(csiDriverBefore as KubeObject),
    );
    expect([csiDriver.metadata.uid, csiDriver.spec?.['storageCapacity']]).toEqual([
      csiDriverBefore?.metadata.uid,
      true,
    ]);
    const [ourNode] = await driverPods('node');
    expect([ourNode !== undefined && ourNodePod(ourNode), ourNode?.spec.nodeName]).toEqual([true, node?.name]);

    // The volume user: the same pod, never restarted; the volume's device and loop device unchanged.
    const user = await kube.must<Pod>(podRef(USER, APP_NAMESPACE));
    expect([
      user.metadata.uid,
      user.status?.phase,
      user.status?.containerStatuses?.[0]?.restartCount,
      isReady(user),
    ]).toEqual([userUid, 'Running', 0, true]);
    expect(await loops()).toHaveLength(1);
    // The test-only TLS Secrets of the Go-shaped pods are no longer used: removed.
    for (const name of Object.values(TEST_SECRETS))
      await kube.delete({ apiVersion: 'v1', kind: 'Secret', name, namespace: DRIVER_NAMESPACE });
  }, 420_000);

  it('after: a new pod reads the old volume, a new claim is provisioned by our driver, deleting the claims removes the volumes', async () => {
    const { kube } = cluster;
    if (oldPv === '') throw new Error('the "before" case did not finish: nothing to switch with');
    let t0 = Date.now();
    await kube.create(
      scriptPod({
        name: READER,
        namespace: APP_NAMESPACE,
        image: image('driver').ref,
        script:
          'echo "$(cat /data/f) beat=$(cat /data/beat)" > /dev/termination-log; echo read-after-switch > /data/done; sync',
        ...mountOf(OLD_CLAIM),
      }),
    );
    const read = /^(\S+) beat=(\d+)$/.exec(await podResult(kube, podRef(READER, APP_NAMESPACE), 180_000, why));
    expect([read?.[1], Number(read?.[2] ?? -1) > 0]).toEqual([token, true]);
    timings['after: new pod read the old volume'] = Date.now() - t0;
    const report = await podResult(kube, podRef(USER, APP_NAMESPACE), 60_000, why);
    const m = /^(\S+) read-after-switch checks=(\d+)$/.exec(report);
    expect([m?.[1], m !== null]).toEqual([token, true]);
    const checkedSeconds = (Date.now() - switchStarted) / 1000;
    expect(Number(m?.[2])).toBeGreaterThanOrEqual(Math.floor(checkedSeconds));
    process.stdout.write(
      `volume user: ${report} (every check passed; ${checkedSeconds.toFixed(0)} s since the switch began)\n`,
    );

    // A new claim, provisioned and published by our controller and node driver.
    t0 = Date.now();
    await kube.create(
      claimObject({ name: NEW_CLAIM, namespace: APP_NAMESPACE, storageClassName: 'pmem-go-switch', size: '32Mi' }),
    );
    const newToken = `written-after-switch-${Date.now()}`;
    await kube.create(
      scriptPod({
        name: NEW_WRITER,
        namespace: APP_NAMESPACE,
        image: image('driver').ref,
        script: `echo ${newToken} > /data/f; sync; cat /data/f > /dev/termination-log`,
        ...mountOf(NEW_CLAIM),
      }),
    );
    expect(await podResult(kube, podRef(NEW_WRITER, APP_NAMESPACE), 180_000, why)).toBe(newToken);
    const claim = await kube.must<KubeObject & { spec: { volumeName?: string }; status?: { phase?: string } }>({
      ...claimRef(NEW_CLAIM),
      namespace: APP_NAMESPACE,
    });
    expect(claim.status?.phase).toBe('Bound');
    const newPv = await kube.must<PersistentVolume>(pvRef(claim.spec.volumeName ?? ''));
    expect(newPv.spec.csi?.driver).toBe(CR_NAME);
    timings['after: new claim provisioned and written'] = Date.now() - t0;
    expect(await emulatedFiles()).toHaveLength(2);

    // Deleting the claims deletes the volumes: PVs, emulated files and loop devices gone.
    t0 = Date.now();
    for (const p of [USER, READER, NEW_WRITER]) await kube.delete(podRef(p, APP_NAMESPACE));
    for (const p of [USER, READER, NEW_WRITER]) await waitGone(kube, podRef(p, APP_NAMESPACE), 120_000);
    for (const c of [OLD_CLAIM, NEW_CLAIM]) await kube.delete({ ...claimRef(c), namespace: APP_NAMESPACE });
    for (const pv of [oldPv, newPv.metadata.name]) await waitGone(kube, pvRef(pv), 120_000, why);
    await waitFor(
      'no emulated device file and no loop device of the driver left',
      async () => ((await emulatedFiles()).length === 0 && (await loops()).length === 0 ? true : undefined),
      {
        timeoutMs: 60_000,
        describe: async () => `files ${(await emulatedFiles()).join(', ')}; loops ${(await loops()).join(', ')}`,
      },
    );
    timings['after: claims deleted -> volumes gone'] = Date.now() - t0;
  }, 420_000);

  it('the teardown leaves no mounts, loop devices, containers, network devices, rules or processes', async () => {
    await uninstallStack(cluster);
    const started = Date.now();
    nodeLeft = (await node?.stop()) ?? ['no node'];
    timings['node teardown'] = Date.now() - started;
    expect(nodeLeft).toEqual([]);
    expect(await leftovers([DRIVER_STATE_DIR])).toEqual([]);
    expect(await emulatedFiles()).toEqual([]);
    await rm(DRIVER_STATE_DIR, { recursive: true, force: true });
  }, 300_000);
});
