// k8s-storage tier: Kubernetes' own External Storage suite (e2e.test of the pinned Kubernetes,
// -storage.testdriver=e2e/k8s-storage/pmem-csi.yaml and pmem-csi-xfs.yaml) against PMEM-CSI as
// users install it: the control plane and the real node of the real-node tier, our images, the
// Helm chart installing the operator, the operator deploying the driver in emulated mode with
// external-provisioner and external-resizer. The pods the suite starts use images built here
// (images.sh: busybox, agnhost and the suite's other test images under the names the suite asks
// for), imported into the node's containerd; nothing is pulled.
// PMEM_CSI_K8S_STORAGE=full runs every External Storage spec of both definitions and writes
// e2e/k8s-storage/RESULTS.md; unset (CI) runs the curated subset of k8s-storage-specs.ts.
// Needs root (containers, mounts, loop devices, iptables), like the real-node tier.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_DRIVER_NAME, METRICS_PORT, topologyKey } from '@pmem-csi/api';
import { REPO_ROOT } from '../cluster/components.js';
import { clusterHelm, createCluster, printTimings, type KwokCluster } from '../cluster/harness.js';
import type { KubeObject } from '../cluster/kube.js';
import { crRef, describeStatus, waitStatus, type PmemDeployment } from '../cluster/pmem-deployment.js';
import { runTool } from '../cluster/processes.js';
import { waitFor } from '../cluster/wait.js';
import { readPins, toolPath } from '../tools.js';
import { builtImages, type BuiltImage } from './images.js';
import { countOutcomes, summaryLine, type StorageSpecResult } from './k8s-storage-junit.js';
import {
  CURATED,
  DEFINITIONS,
  focusExpression,
  fullSpecText,
  skipExpression,
  storageSkips,
  type Definition,
  type SpecRef,
} from './k8s-storage-specs.js';
import {
  countedSpecs,
  resultsMarkdown,
  runModeFrom,
  runStorageSuiteSharded,
  shardsFrom,
  type SuiteRun,
} from './k8s-storage.js';
import { NODE_NETWORK } from './network.js';
import { CR_NAME, DRIVER_NAMESPACE, helmInstallArgs, uninstallStack } from './install.js';
import { leftovers, loopDevicesUnder, startRealNode, type RealNode } from './real-node.js';
import { podsReady, type Pod } from './workloads.js';

const MODE = runModeFrom(process.env);
const SHARDS = shardsFrom(process.env, MODE);
const DRIVER_STATE_DIR = `/var/lib/${DEFAULT_DRIVER_NAME}`;
/** Our stack's images, and the test images of the suite's pods (images.sh builds them under the suite's names). */
const STACK_IMAGES = ['driver', 'operator', 'csi-provisioner', 'csi-resizer', 'registrar', 'pause'] as const;
const SUITE_IMAGES = ['e2e-busybox', 'e2e-agnhost', 'e2e-nginx', 'e2e-jessie-dnsutils'] as const;
const DEFINITIONS_USED: readonly Definition[] = ['ext4', 'xfs'];
/** Hard limit of the e2e.test run: the curated subset took 5.3-5.7 min here (README); the full run a few hours. */
const SUITE_TIMEOUT_MS = MODE === 'full' ? 5 * 3600_000 : 20 * 60_000;
const RESULTS_FILE = join(REPO_ROOT, 'e2e/k8s-storage/RESULTS.md');
/** The test suites of External Storage (CSISuites of v1.33.1): the full run has one Jest test per suite. */
const SUITES = [
  'capacity',
  'disruptive',
  'ephemeral',
  'fsgroupchangepolicy',
  'multiVolume',
  'provisioning',
  'pvc-deletion-performance',
  'read-write-once-pod',
  'snapshottable',
  'snapshottable-stress',
  'subPath',
  'topology',
  'volume-expand',
  'volume-lifecycle-performance',
  'volume-modify',
  'volume-stress',
  'volumeIO',
  'volumeLimits',
  'volumeMode',
  'volumegroupsnapshottable',
  'volumes',
] as const;

/** Whether CAP_SYS_RESOURCE (bit 24) is in this machine's bounding set (no process here can have it otherwise). */
function sysResourceBounded(): boolean {
  const bnd = /CapBnd:\s*([0-9a-f]+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0';
  return (BigInt(`0x${bnd}`) & (1n << 24n)) !== 0n;
}

const SKIPS = storageSkips({ sysResource: sysResourceBounded() });
const timings: Record<string, number> = {};

describe(`k8s-storage: Kubernetes External Storage suite (${MODE}) on the real node`, () => {
  let cluster: KwokCluster;
  let node: RealNode | undefined;
  let nodeLeft: string[] | undefined;
  let images: ReadonlyMap<string, BuiltImage> | undefined;
  let run: SuiteRun | Error | undefined;

  const image = (name: string): BuiltImage => {
    const i = images?.get(name);
    if (i?.archive === undefined) throw new Error(`image ${name} missing or without an archive`);
    return i;
  };
  const why = async (): Promise<string> =>
    describeStatus(await cluster.kube.get<PmemDeployment>(crRef(CR_NAME)).catch(() => undefined));
  const result = (): SuiteRun => {
    if (run === undefined) throw new Error('e2e.test did not run (the set-up failed first)');
    if (run instanceof Error) throw run;
    return run;
  };
  const emulatedDevices = async (): Promise<string[]> => {
    const dir = join(DRIVER_STATE_DIR, 'emulated');
    return existsSync(dir) ? (await readdir(dir)).filter((f) => f.endsWith('.img')) : [];
  };
  const ourPvs = async (): Promise<string[]> =>
    (await cluster.kube.list<KubeObject & { spec: { csi?: { driver?: string } } }>('v1', 'PersistentVolume'))
      .filter((pv) => pv.spec.csi?.driver === DEFAULT_DRIVER_NAME)
      .map((pv) => pv.metadata.name);

  /** Helm installs the operator; the operator deploys the driver (emulated) with our sidecar images. */
  const install = async (): Promise<void> => {
    const started = Date.now();
    // Sparse files: the suite's volumes (16 MiB-2 GiB, a few at a time) fit with room to spare.
    await clusterHelm(cluster)(
      helmInstallArgs((n) => image(n).ref, '8Gi'),
      240_000,
    );
    await waitStatus(cluster.kube, CR_NAME, {
      what: 'phase Running with both components Ready',
      ok: (d) =>
        d.status?.phase === 'Running' &&
        (d.status.driverComponents ?? []).length === 2 &&
        (d.status.driverComponents ?? []).every((c) => c.status === 'Ready'),
      timeoutMs: 240_000,
    });
    await podsReady(cluster.kube, {
      namespace: DRIVER_NAMESPACE,
      selector: `app.kubernetes.io/instance=${CR_NAME}`,
      count: 2,
      timeoutMs: 120_000,
    });
    // The suite's capacity and topology specs read what the kubelet and the provisioner published.
    await waitFor(
      `CSINode ${node?.name} with driver ${DEFAULT_DRIVER_NAME} and its topology key`,
      async () => {
        const n = await cluster.kube.get<
          KubeObject & { spec: { drivers?: Array<{ name: string; topologyKeys?: string[] }> } }
        >({ apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', name: node?.name ?? '' });
        return n?.spec.drivers?.some(
          (d) => d.name === DEFAULT_DRIVER_NAME && (d.topologyKeys ?? []).includes(topologyKey(DEFAULT_DRIVER_NAME)),
        )
          ? true
          : undefined;
      },
      { timeoutMs: 120_000, describe: why },
    );
    // The controller answers UNAVAILABLE until its start-up settle period ends (75 s): the suite's
    // first claim would spend that in external-provisioner's back-off, inside a spec's budget.
    await waitFor(
      'the controller to settle with the node registered (its /status)',
      async () => {
        const [pod] = await cluster.kube.list<Pod>('v1', 'Pod', {
          namespace: DRIVER_NAMESPACE,
          labelSelector: 'app.kubernetes.io/component=controller',
        });
        const ip = pod?.status?.podIP;
        if (ip === undefined || ip === '') return undefined;
        const r = await fetch(`http://${ip}:${METRICS_PORT}/status`, { signal: AbortSignal.timeout(5_000) }).catch(
          () => undefined,
        );
        const st = r?.ok === true ? ((await r.json()) as { settled?: boolean; nodes?: Array<{ state: string }> }) : {};
        return st.settled === true && (st.nodes ?? []).some((n) => n.state === 'available') ? true : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 2_000, describe: why },
    );
    timings['helm install -> driver Running, plugin registered, controller settled'] = Date.now() - started;
  };

  beforeAll(
    async () => {
      if (process.getuid?.() !== 0)
        throw new Error(
          'the k8s-storage tier runs containerd, the kubelet, mounts and loop devices: needs root (CI runs as root)',
        );
      // Fails naming `bash e2e/tools/bootstrap.sh kubernetes-e2e` when it is not built.
      const e2eTest = toolPath('e2e.test');
      const built = builtImages([...STACK_IMAGES, ...SUITE_IMAGES]);
      images = built.images;
      for (const w of built.warnings) process.stdout.write(`${w}\n`);
      let started = Date.now();
      cluster = await createCluster({ suite: 'k8s-storage', nodes: [], podAccess: NODE_NETWORK });
      timings['control plane'] = Date.now() - started;
      node = await startRealNode({
        cluster,
        imageArchives: [...STACK_IMAGES, ...SUITE_IMAGES].map((n) => image(n).archive ?? ''),
        sandboxImage: image('pause').ref,
        labels: { storage: 'pmem' },
      });
      for (const [phase, ms] of Object.entries(node.timings)) timings[`node: ${phase}`] = ms;
      await install();
      started = Date.now();
      const focus = MODE === 'full' ? focusExpression('all') : focusExpression(CURATED);
      const skip = skipExpression(SKIPS);
      try {
        run = await runStorageSuiteSharded({
          e2eTest,
          kubeconfig: cluster.kubeconfig,
          repoRoot: REPO_ROOT,
          dir: join(cluster.logDir, 'k8s-storage'),
          definitions: DEFINITIONS_USED,
          focus,
          ...(skip === undefined ? {} : { skip }),
          skips: SKIPS,
          timeoutMs: SUITE_TIMEOUT_MS,
          shards: SHARDS,
        });
      } catch (e) {
        run = e instanceof Error ? e : new Error(String(e));
      }
      timings[`e2e.test (${MODE})`] = Date.now() - started;
      if (run instanceof Error) return;
      const counted = countedSpecs(run.report.specs, MODE === 'full' ? undefined : CURATED);
      process.stdout.write(
        `\ne2e.test (${MODE}, ${SHARDS} ${SHARDS === 1 ? 'process' : 'processes'}) ran ${(run.ms / 60_000).toFixed(1)} min, exit code ${run.exitCode}; output ${run.outputFile}, JUnit ${run.junitFile}\n`,
      );
      for (const s of counted.filter((x) => x.outcome === 'failed'))
        process.stdout.write(
          `  FAILED [${s.definition}] ${s.spec}\n    ${(s.message ?? '').split('\n').join('\n    ')}\n`,
        );
      if (run.report.suiteFailure !== undefined)
        process.stdout.write(
          `  e2e.test stopped early: ${run.report.suiteFailure}; the specs after that point did not run\n`,
        );
      process.stdout.write(`${summaryLine(counted)}\n`);
      if (MODE === 'full') {
        const kubernetes = readPins().get('KUBERNETES_VERSION') ?? '?';
        writeFileSync(
          RESULTS_FILE,
          resultsMarkdown(run.report.specs, {
            date: new Date().toISOString().slice(0, 10),
            command: `PMEM_CSI_K8S_STORAGE_SHARDS=${SHARDS} bash e2e/k8s-storage/run.sh --full`,
            minutes: run.ms / 60_000,
            kubernetes,
          }),
        );
        process.stdout.write(`the pattern x result table: ${RESULTS_FILE}\n`);
      }
    },
    SUITE_TIMEOUT_MS + 15 * 60_000,
  );

  afterAll(async () => {
    // The driver's state directory and loop devices are the machine's, not this file's, unless this
    // file started the node: a run that found another real node running (the lock) must not remove
    // that node's volumes from under it.
    if (node !== undefined) {
      if (nodeLeft === undefined) nodeLeft = await node.stop().catch((e: Error) => [`stop failed: ${e.message}`]);
      // A failed run may leave volumes: their loop devices are detached before their files are
      // removed (matched by identity too: the driver's container attached them under its own path).
      for (const l of await loopDevicesUnder(DRIVER_STATE_DIR).catch(() => []))
        await runTool('losetup', ['--detach', l.name]).catch(() => undefined);
      await rm(DRIVER_STATE_DIR, { recursive: true, force: true }).catch(() => undefined);
    }
    await cluster?.delete().catch(() => undefined);
    printTimings('k8s-storage', timings);
  }, 300_000);

  it('e2e.test ran to the end and wrote its report; no suite set-up or tear-down node failed', () => {
    const r = result();
    // "Suite Timeout Elapsed" and the like: Ginkgo's own -ginkgo.timeout (a minute below the hard one) stopped it.
    expect(r.report.suiteFailure).toBeUndefined();
    expect(r.report.otherFailures).toEqual([]);
    // 0 with every spec passed or skipped, 1 with failed specs (the tests below name them).
    expect([0, 1]).toContain(r.exitCode);
    expect(r.exitCode === 0).toBe(countOutcomes(countedSpecs(r.report.specs)).failed === 0);
  });

  if (MODE === 'curated') {
    const outcomeOf = (ref: SpecRef): StorageSpecResult | undefined =>
      result().report.specs.find((s) => s.definition === ref.definition && s.spec === ref.spec);
    it.each(CURATED.map((c) => [`[${c.definition}] ${c.spec}`, c] as const))('%s', (_label, ref) => {
      const s = outcomeOf(ref);
      if (s === undefined)
        throw new Error(
          `not in e2e.test's report: the curated text matches no spec of e2e.test (${fullSpecText(ref)})`,
        );
      const stopped = result().report.suiteFailure;
      if (s.outcome === 'unselected' && stopped !== undefined)
        throw new Error(`not run: e2e.test stopped before it (${stopped})`);
      expect([s.outcome, s.message]).toEqual(['passed', undefined]);
    });
    it('the curated run selected exactly the curated specs', () => {
      const selected = result()
        .report.specs.filter((s) => s.outcome !== 'unselected' && s.outcome !== 'listed')
        .map((s) => `[${s.definition}] ${s.spec}`)
        .sort();
      expect(selected).toEqual(CURATED.map((c) => `[${c.definition}] ${c.spec}`).sort());
    });
  } else {
    it.each(SUITES.map((s) => [s] as const))('suite %s: no spec failed', (suite) => {
      const failed = result()
        .report.specs.filter((s) => s.suite === suite && s.outcome === 'failed')
        .map((s) => `[${s.definition}] ${s.spec}: ${s.message ?? ''}`);
      expect(failed).toEqual([]);
    });
    it('every spec belongs to a suite above, and every definition contributed specs', () => {
      const specs = result().report.specs;
      expect([...new Set(specs.map((s) => s.suite))].filter((s) => !(SUITES as readonly string[]).includes(s))).toEqual(
        [],
      );
      expect(
        (Object.keys(DEFINITIONS) as Definition[]).filter(
          (d) => !specs.some((s) => s.definition === d && s.outcome === 'passed'),
        ),
      ).toEqual([]);
    });
  }

  it('every volume the suite made is deleted: no PV of the driver, no emulated device file', async () => {
    // The suite deletes its namespaces without waiting; their claims go with them.
    await waitFor(
      'the PVs of the driver and the emulated device files to be gone',
      async () => ((await ourPvs()).length === 0 && (await emulatedDevices()).length === 0 ? true : undefined),
      {
        timeoutMs: 300_000,
        describe: async () =>
          `PVs: ${(await ourPvs()).join(', ') || '-'}; files: ${(await emulatedDevices()).join(', ') || '-'}`,
      },
    );
  }, 330_000);

  it('the teardown leaves no mounts, loop devices, containers, network devices, rules or processes', async () => {
    await uninstallStack(cluster);
    const started = Date.now();
    nodeLeft = (await node?.stop()) ?? ['no node'];
    timings['node teardown'] = Date.now() - started;
    expect(nodeLeft).toEqual([]);
    expect(await leftovers([DRIVER_STATE_DIR])).toEqual([]);
    await rm(DRIVER_STATE_DIR, { recursive: true, force: true });
  }, 400_000);
});
