// Real-node tier, the install a user makes from released artifacts (issue 30): two releases, X (the
// checkout's version) and X+1 (UPGRADE_VERSION), made by `npm run release`'s code (dry run, its own
// key each) into a local TLS registry (CNCF distribution, e2e/src/release/local-registry.ts). The
// sidecars are mirrored into the same registry, as a site without internet mirrors registry.k8s.io.
// The real node's containerd trusts that registry's CA (certs.d/<host>/hosts.toml) and has only the
// pause image imported: the kubelet pulls the operator, the driver and the sidecars. Before the
// install each release is verified against its key (release.json's signature, the files, every
// digest, the image signatures, SBOM attestations and the chart's signature). Then `helm install
// oci://…/charts/pmem-csi --version X`, a volume written, `helm upgrade` to X+1 from the registry
// (every pod on X+1's digests, pulled), the volume's data read back through X+1, and a teardown that
// leaves nothing. Needs root (containers, mounts, loop devices); CI runs as root.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTAINER_NAMES, DEFAULT_DRIVER_NAME } from '@pmem-csi/api';
import { clusterHelm, createCluster, ensureNamespace, printTimings, type KwokCluster } from '../cluster/harness.js';
import type { KubeObject } from '../cluster/kube.js';
import { conditionIs, crRef, describeStatus, waitStatus, type PmemDeployment } from '../cluster/pmem-deployment.js';
import { claimRef, pvRef, waitGone, type PersistentVolume } from '../cluster/storage.js';
import { waitFor } from '../cluster/wait.js';
import { helmCaArgs } from '../release/chart.js';
import { verifyImage, type Cosign } from '../release/cosign.js';
import { dryRunArgs, startLocalRegistry, type LocalRegistry } from '../release/local-registry.js';
import type { RegistryArtifact } from '../release/manifest.js';
import { parseReleaseArgs } from '../release/options.js';
import { pushBuiltImages, type PushedBuiltImage } from '../release/push-images.js';
import { resolveReleaseTools, toolEnv } from '../release/release-tools.js';
import { runRelease, sourceVersion, type ReleaseResult } from '../release/release.js';
import { verifyRelease } from '../release/verify.js';
import { UPGRADE_VERSION, builtImages, type BuiltImages } from './images.js';
import { CR_NAME, DRIVER_NAMESPACE, OPERATOR_NAMESPACE, RELEASE, uninstallStack } from './install.js';
import { NODE_NETWORK } from './network.js';
import { leftovers, startRealNode, type RealNode } from './real-node.js';
import { POD_LABEL, claimObject, podRef, podResult, scriptPod, type Pod } from './workloads.js';

const APP_NAMESPACE = 'registry-app';
const DRIVER_STATE_DIR = `/var/lib/${DEFAULT_DRIVER_NAME}`;
const SIDECARS = ['csi-provisioner', 'csi-resizer', 'registrar'] as const;
type Sidecar = (typeof SIDECARS)[number];
const VERSIONS = [sourceVersion(), UPGRADE_VERSION] as const;
const CLAIM = 'release-data';
const STORAGE_CLASS: KubeObject = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'pmem-registry' },
  provisioner: DEFAULT_DRIVER_NAME,
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'WaitForFirstConsumer',
  parameters: { 'csi.storage.k8s.io/fstype': 'ext4' },
} as KubeObject;

/** The release's image artifact `name` (driver, operator). */
function releasedImage(r: ReleaseResult, name: string): RegistryArtifact {
  const a = r.manifest.artifacts.find((x): x is RegistryArtifact => x.kind === 'image' && x.name === name);
  if (a === undefined) throw new Error(`release ${r.manifest.version} has no ${name} image`);
  return a;
}
/** repository@digest of a registry artifact whose ref is repository:tag. */
const byDigest = (a: RegistryArtifact): string => `${a.ref.slice(0, a.ref.lastIndexOf(':'))}@${a.digest}`;

describe('real node: a release installed from a registry — helm install oci://, kubelet pulls, upgrade X -> X+1', () => {
  let work: string;
  let registry: LocalRegistry;
  let cosign: Cosign;
  let cluster: KwokCluster;
  let node: RealNode | undefined;
  let nodeLeft: string[] | undefined;
  let base: BuiltImages;
  let mirrored: ReadonlyMap<Sidecar, PushedBuiltImage>;
  const releases = new Map<string, ReleaseResult>();
  const timings: Record<string, number> = {};

  const helm = (args: readonly string[], timeoutMs = 300_000): Promise<string> => clusterHelm(cluster)(args, timeoutMs);
  const release = (version: string): ReleaseResult => {
    const r = releases.get(version);
    if (r === undefined) throw new Error(`release ${version} was not made (see beforeAll)`);
    return r;
  };
  const chartRef = (): string => `oci://${registry.host}/pmem-csi/charts/pmem-csi`;
  const sidecarRef = (name: Sidecar): string => {
    const m = mirrored.get(name);
    if (m === undefined) throw new Error(`sidecar ${name} was not mirrored`);
    return `${m.target.slice(0, m.target.lastIndexOf(':'))}@${m.digest}`;
  };
  const why = async (): Promise<string> =>
    describeStatus(await cluster.kube.get<PmemDeployment>(crRef(CR_NAME)).catch(() => undefined));
  const pods = (namespace: string, selector: string): Promise<Pod[]> =>
    cluster.kube.list<Pod>('v1', 'Pod', { namespace, labelSelector: selector });
  /** name=imageID of every container of the pods: what containerd runs, by the digest it pulled. */
  const runningImages = (ps: readonly Pod[]): string[] =>
    ps.flatMap((p) => (p.status?.containerStatuses ?? []).map((c) => `${c.name}=${c.imageID ?? '?'}`)).sort();
  /** The stack's pods all run `version`'s operator and driver and the mirrored sidecars, each pulled from the registry. */
  const expectPulled = async (version: string): Promise<void> => {
    const r = release(version);
    const driver = byDigest(releasedImage(r, 'driver'));
    const operator = byDigest(releasedImage(r, 'operator'));
    const allowed = new Set([driver, operator, ...SIDECARS.map(sidecarRef)]);
    const operatorPods = await pods(OPERATOR_NAMESPACE, 'app.kubernetes.io/component=operator');
    const driverPods = await pods(DRIVER_NAMESPACE, `app.kubernetes.io/instance=${CR_NAME}`);
    expect(runningImages(operatorPods)).toEqual([`pmem-csi-operator=${operator}`]);
    const ids = runningImages(driverPods);
    const own = `${CONTAINER_NAMES.driver}=`;
    expect(ids.filter((x) => x.startsWith(own))).toEqual([`${own}${driver}`, `${own}${driver}`]);
    // Every other container runs a mirrored sidecar, by the digest pushed: nothing came from an import.
    expect(ids.filter((x) => !allowed.has(x.slice(x.indexOf('=') + 1)))).toEqual([]);
    expect(ids.length).toBeGreaterThanOrEqual(2 + SIDECARS.length);
  };

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error(
        'the registry install runs buildah, containerd, the kubelet, mounts and loop devices: needs root (CI runs as root)',
      );
    const tools = resolveReleaseTools(); // throws naming each missing tool and its bootstrap command
    work = mkdtempSync(join(tmpdir(), 'pmem-csi-registry-e2e-'));
    registry = await startLocalRegistry({ dir: join(work, 'registry'), maxLifetimeMs: 60 * 60_000 });
    cosign = { bin: tools.cosign, env: toolEnv(join(work, 'verify'), registry.tls.caFile, '') };
    const certDir = join(work, 'certs.d');
    mkdirSync(certDir, { recursive: true });
    copyFileSync(registry.tls.caFile, join(certDir, 'ca.crt'));

    let t0 = Date.now();
    base = builtImages([...SIDECARS, 'pause']);
    for (const w of base.warnings) process.stdout.write(`${w}\n`);
    const pushed = await pushBuiltImages(
      base,
      SIDECARS.map((name) => {
        const ref = base.images.get(name)?.ref ?? '';
        return { name, target: `${registry.host}/mirror/${ref.replace(/^.*\//, '')}` };
      }),
      { certDir, work: join(work, 'mirror') },
    );
    mirrored = new Map(pushed.map((p) => [p.name as Sidecar, p]));
    timings['sidecars mirrored into the registry'] = Date.now() - t0;

    for (const version of VERSIONS) {
      t0 = Date.now();
      const opts = parseReleaseArgs(dryRunArgs(registry, version, join(work, `release-${version}`)));
      releases.set(version, await runRelease(opts, () => undefined));
      timings[`release ${version} (images cached)`] = Date.now() - t0;
    }

    t0 = Date.now();
    cluster = await createCluster({ suite: 'registry', nodes: [], podAccess: NODE_NETWORK });
    timings['control plane'] = Date.now() - t0;
    const pause = base.images.get('pause');
    if (pause?.archive === undefined) throw new Error('image pause missing or without an archive');
    node = await startRealNode({
      cluster,
      imageArchives: [pause.archive],
      sandboxImage: pause.ref,
      labels: { storage: 'pmem' },
      registries: [{ host: registry.host, caFile: registry.tls.caFile }],
    });
    for (const [phase, ms] of Object.entries(node.timings)) timings[`node: ${phase}`] = ms;
    await ensureNamespace(cluster.kube, APP_NAMESPACE);
  }, 60 * 60_000);

  afterAll(async () => {
    if (node !== undefined && nodeLeft === undefined)
      nodeLeft = await node.stop().catch((e: Error) => [`stop failed: ${e.message}`]);
    if (node !== undefined) await rm(DRIVER_STATE_DIR, { recursive: true, force: true }).catch(() => undefined);
    await cluster?.delete().catch(() => undefined);
    await registry?.stop();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
    printTimings('registry install', timings);
  }, 300_000);

  it('each release verifies against its own key before anything is installed; an image signed with another key is refused', async () => {
    for (const version of VERSIONS) {
      const r = release(version);
      const checks = await verifyRelease(r.out, cosign, registry.client);
      expect(checks.filter((c) => !c.ok).map((c) => `${version}: ${c.what}: ${c.reason ?? ''}`)).toEqual([]);
      // release.json's signature, its files, 8 registry artifacts, 2 images x (signature, SBOM), the chart.
      expect(checks.length).toBeGreaterThan(15);
    }
    // X+1's driver is not X's: verified with X's key, it is refused, saying why.
    const [x, x1] = VERSIONS.map(release) as [ReleaseResult, ReleaseResult];
    const foreign = await verifyImage(cosign, x.publicKey, releasedImage(x1, 'driver').ref);
    expect(foreign.ok).toBe(false);
    if (!foreign.ok) expect(foreign.reason).toMatch(/signature|verif/i);
  }, 300_000);

  it('helm install oci://<registry>/pmem-csi/charts/pmem-csi --version X: the kubelet pulls operator, driver and sidecars; the driver runs', async () => {
    const started = Date.now();
    const spec = {
      deviceMode: 'emulated',
      emulatedSize: '1Gi',
      nodeSelector: { storage: 'pmem' },
      provisionerImage: sidecarRef('csi-provisioner'),
      resizerImage: sidecarRef('csi-resizer'),
      nodeRegistrarImage: sidecarRef('registrar'),
      imagePullPolicy: 'IfNotPresent',
    };
    await helm([
      'install',
      RELEASE,
      chartRef(),
      '--version',
      VERSIONS[0],
      ...helmCaArgs(registry.tls.caFile),
      '--namespace',
      OPERATOR_NAMESPACE,
      '--create-namespace',
      '--set',
      'deployment.create=true',
      '--set',
      `deployment.name=${CR_NAME}`,
      '--set-json',
      `deployment.spec=${JSON.stringify(spec)}`,
      '--wait',
      '--timeout',
      '240s',
    ]);
    timings['helm install oci:// --wait (operator pulled and ready)'] = Date.now() - started;
    const running = await waitStatus(cluster.kube, CR_NAME, {
      what: 'phase Running with both components Ready',
      ok: (d) =>
        d.status?.phase === 'Running' &&
        (d.status.driverComponents ?? []).length === 2 &&
        (d.status.driverComponents ?? []).every((c) => c.status === 'Ready'),
      timeoutMs: 300_000,
    });
    timings['driver Running (from helm install)'] = Date.now() - started;
    expect(conditionIs(running, 'DriverDeployed', 'True')).toBe(true);
    await expectPulled(VERSIONS[0]);
  }, 600_000);

  it('a volume of release X: a pod writes to it', async () => {
    const { kube } = cluster;
    await kube.apply(STORAGE_CLASS);
    await kube.apply(
      claimObject({ name: CLAIM, namespace: APP_NAMESPACE, storageClassName: 'pmem-registry', size: '32Mi' }),
    );
    await kube.create(
      scriptPod({
        name: 'writer',
        namespace: APP_NAMESPACE,
        // The driver image as pulled (it has a shell); present on the node by now.
        image: byDigest(releasedImage(release(VERSIONS[0]), 'driver')),
        script: `echo written-by-${VERSIONS[0]} > /data/f; sync; cat /data/f > /dev/termination-log`,
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: CLAIM } }],
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
      }),
    );
    expect(await podResult(kube, podRef('writer', APP_NAMESPACE), 240_000, why)).toBe(`written-by-${VERSIONS[0]}`);
    await kube.delete(podRef('writer', APP_NAMESPACE));
    await waitGone(kube, podRef('writer', APP_NAMESPACE), 120_000);
  }, 400_000);

  it('helm upgrade to X+1 from the registry: every pod runs X+1 by digest, pulled; the volume written under X is read under X+1', async () => {
    const { kube } = cluster;
    const started = Date.now();
    const [, next] = VERSIONS;
    // helm upgrade does not touch crds/: the CRD of X+1 first, as its upgrade notes say.
    await cluster.kubectl(['apply', '--server-side', '-f', '-'], {
      input: await helm(['show', 'crds', chartRef(), '--version', next, ...helmCaArgs(registry.tls.caFile)]),
    });
    await helm([
      'upgrade',
      RELEASE,
      chartRef(),
      '--version',
      next,
      ...helmCaArgs(registry.tls.caFile),
      '--namespace',
      OPERATOR_NAMESPACE,
      '--reset-then-reuse-values',
      '--wait',
      '--timeout',
      '240s',
    ]);
    timings['helm upgrade oci:// --wait'] = Date.now() - started;
    const driverB = byDigest(releasedImage(release(next), 'driver'));
    await waitFor(
      `the driver pods to run X+1 (${driverB}) and the PmemCSIDeployment to be Running`,
      async () => {
        const driverPods = await pods(DRIVER_NAMESPACE, `app.kubernetes.io/instance=${CR_NAME}`);
        const onB = driverPods.filter(
          (p) =>
            p.status?.phase === 'Running' &&
            (p.status.containerStatuses ?? []).every((c) => c.ready) &&
            (p.status.containerStatuses ?? []).some((c) => c.imageID === driverB),
        );
        const cr = await kube.get<PmemDeployment>(crRef(CR_NAME));
        return onB.length === 2 && driverPods.length === 2 && cr?.status?.phase === 'Running' ? true : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1_000, describe: why },
    );
    timings['upgrade: driver on X+1'] = Date.now() - started;
    await expectPulled(next);
    await kube.create(
      scriptPod({
        name: 'reader',
        namespace: APP_NAMESPACE,
        image: driverB,
        script: 'cat /data/f > /dev/termination-log',
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: CLAIM } }],
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
      }),
    );
    expect(await podResult(kube, podRef('reader', APP_NAMESPACE), 240_000, why)).toBe(`written-by-${VERSIONS[0]}`);
    await kube.delete(podRef('reader', APP_NAMESPACE));
    await waitGone(kube, podRef('reader', APP_NAMESPACE), 120_000);
    expect(await pods(APP_NAMESPACE, POD_LABEL)).toEqual([]);
  }, 900_000);

  it('the claim deleted removes PV and device; uninstall and teardown leave nothing', async () => {
    const { kube } = cluster;
    const claim = await kube.get<KubeObject & { spec: { volumeName?: string } }>({
      ...claimRef(CLAIM),
      namespace: APP_NAMESPACE,
    });
    const pv = claim?.spec.volumeName;
    expect(pv).toBeDefined();
    const handle = (await kube.must<PersistentVolume>(pvRef(pv ?? ''))).spec.csi?.volumeHandle ?? '';
    await kube.delete({ ...claimRef(CLAIM), namespace: APP_NAMESPACE });
    await waitGone(kube, pvRef(pv ?? ''), 120_000, why);
    const emulated = join(DRIVER_STATE_DIR, 'emulated');
    await waitFor(
      `the emulated device file of ${handle} to be removed`,
      async () => (existsSync(emulated) && (await readdir(emulated)).includes(`${handle}.img`) ? undefined : true),
      { timeoutMs: 60_000 },
    );
    await uninstallStack(cluster);
    expect(await kube.list('v1', 'Pod', { namespace: DRIVER_NAMESPACE })).toEqual([]);
    nodeLeft = (await node?.stop()) ?? ['no node'];
    expect(nodeLeft).toEqual([]);
    expect(await leftovers([DRIVER_STATE_DIR])).toEqual([]);
    await rm(DRIVER_STATE_DIR, { recursive: true, force: true });
  }, 600_000);
});
