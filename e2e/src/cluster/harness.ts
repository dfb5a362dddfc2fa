// The cluster tier's Kubernetes: a real control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, all built from source by e2e/tools/bootstrap.sh) with simulated nodes and pods
// (kwok), started by `kwokctl --runtime binary` as host processes. Everything listens on 127.0.0.1,
// the cluster's working directory lives under os.tmpdir(), and kwokctl never touches
// ~/.kube/config or ~/.kwok. One cluster per test file; teardown deletes it even when tests failed,
// and a later run deletes clusters whose test process died before it could.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { readPins, toolPath } from '../tools.js';
import { Kube, type KubeObject } from './kube.js';
import { runTool, type ToolOptions } from './processes.js';
import { waitFor } from './wait.js';

/** Where every cluster of this tier lives: one directory per cluster (name = directory name). */
export const CLUSTERS_BASE = join(tmpdir(), 'pmem-csi-e2e-cluster');

/** Label every simulated node carries, so that the operator's node DaemonSet lands on it. */
export const PMEM_NODE_LABELS: Readonly<Record<string, string>> = { storage: 'pmem' };
export const DEFAULT_NODES: readonly string[] = ['pmem-worker-0', 'pmem-worker-1', 'pmem-worker-2'];

/** kwok manages (heartbeats, pod status) only nodes with this annotation. */
const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
const CREATE_TIMEOUT_MS = 240_000;
const DELETE_TIMEOUT_MS = 60_000;

export interface ClusterOptions {
  /** Short label for directory names and logs, e.g. "operator". */
  readonly suite: string;
  readonly nodes?: readonly string[];
  /** Labels of every node (default: storage=pmem). */
  readonly nodeLabels?: Readonly<Record<string, string>>;
  /** Set when a real kubelet's pods must reach the API server (the real-node tier). */
  readonly podAccess?: PodNetworkAccess;
  /** Record every API request (Metadata level) in an audit log: `KwokCluster.auditEvents()`. */
  readonly audit?: boolean;
}

/** One API request as the kube-apiserver's audit log records it (Metadata level). */
export interface AuditEvent {
  readonly verb: string;
  readonly userAgent?: string;
  readonly requestURI: string;
  readonly objectRef?: {
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
    readonly apiGroup?: string;
  };
  readonly responseStatus?: { readonly code?: number };
  readonly requestReceivedTimestamp: string;
  readonly stage: string;
}

/** Every request once (ResponseComplete; a watch is recorded when it starts streaming). */
const AUDIT_POLICY = [
  'apiVersion: audit.k8s.io/v1',
  'kind: Policy',
  'omitStages: ["RequestReceived"]',
  'rules:',
  '- level: Metadata',
  '',
].join('\n');

export interface KwokCluster {
  readonly name: string;
  /** This cluster's directory (kwok's working directory and our component logs). */
  readonly dir: string;
  /** Logs of the host processes the tests start (operator, provisioner, driver stack). */
  readonly logDir: string;
  /** Admin kubeconfig (client certificate, server https://127.0.0.1:<port>). */
  readonly kubeconfig: string;
  readonly server: string;
  readonly kube: Kube;
  readonly nodes: readonly string[];
  /** Wall time of `kwokctl create cluster` until the API answered, and until the nodes were Ready. */
  readonly timings: { readonly createMs: number; readonly nodesReadyMs: number };
  /** kubectl of the tool cache against this cluster. */
  kubectl(args: readonly string[], options?: ToolOptions): Promise<string>;
  /** The last lines of a control-plane component's log (kube-apiserver, kube-controller-manager, ...). */
  componentLog(component: string, lines?: number): string;
  /** The audit log so far (clusters created with `audit: true`; else an error saying so). */
  auditEvents(): Promise<AuditEvent[]>;
  /**
   * Stop every control-plane component (`kwokctl stop cluster`), wait `downMs`, start them again
   * on the same data and ports, and wait until the API answers; returns how long it was down.
   */
  restartControlPlane(downMs: number): Promise<number>;
  delete(): Promise<void>;
}

function kwokEnv(dir: string): Record<string, string> {
  return {
    KWOK_WORKDIR: join(dir, 'kwok'),
    KWOK_RUNTIME: 'binary',
    // kwokctl reads the versions from the binaries too; the pin keeps its defaults (flags) in step.
    KWOK_KUBE_VERSION: readPins().get('KUBERNETES_VERSION') ?? '',
    KWOK_KUBECTL_BINARY: toolPath('kubectl'),
    KWOK_KUBE_APISERVER_BINARY: toolPath('kube-apiserver'),
    KWOK_KUBE_CONTROLLER_MANAGER_BINARY: toolPath('kube-controller-manager'),
    KWOK_KUBE_SCHEDULER_BINARY: toolPath('kube-scheduler'),
    KWOK_CONTROLLER_BINARY: toolPath('kwok'),
    KWOK_ETCD_BINARY: toolPath('etcd'),
  };
}

/**
 * How pods of a real node (e2e/src/realnode) reach the API server: the kube-apiserver still listens
 * on 127.0.0.1 only, but advertises the node bridge's gateway address (the `kubernetes` Service's
 * endpoint, which must not be a loopback address; the real-node harness forwards it to 127.0.0.1),
 * takes a fixed Service range, and serves a certificate that names the `kubernetes` Service's
 * ClusterIP and that address, as in-cluster clients dial them.
 */
export interface PodNetworkAccess {
  readonly advertiseAddress: string;
  readonly serviceCidr: string;
  readonly serviceIp: string;
}

/**
 * kwokctl's own configuration: every component bound to 127.0.0.1 (its default is 0.0.0.0), and
 * kwok-controller managing only the simulated nodes (those with the kwok annotation; kwokctl's
 * default is every node, which would fake the pods of a real kubelet's node).
 */
export function kwokctlConfig(podAccess?: PodNetworkAccess, pkiDir?: string): string {
  const lines = [
    'apiVersion: config.kwok.x-k8s.io/v1alpha1',
    'kind: KwokctlConfiguration',
    'options:',
    '  bindAddress: 127.0.0.1',
  ];
  if (podAccess !== undefined)
    lines.push(`  kubeApiserverCertSANs: ["${podAccess.serviceIp}", "${podAccess.advertiseAddress}"]`);
  lines.push(
    'componentsPatches:',
    '- name: kwok-controller',
    '  extraArgs:',
    '  - {key: manage-all-nodes, value: "false", override: true}',
    `  - {key: manage-nodes-with-annotation-selector, value: "${KWOK_NODE_ANNOTATION}=fake"}`,
  );
  if (podAccess !== undefined) {
    lines.push(
      '- name: kube-apiserver',
      '  extraArgs:',
      `  - {key: advertise-address, value: "${podAccess.advertiseAddress}"}`,
      `  - {key: service-cluster-ip-range, value: "${podAccess.serviceCidr}"}`,
      // A real node's name resolves nowhere (no DNS for nodes here): reach its kubelet by address.
      '  - {key: kubelet-preferred-address-types, value: "InternalIP"}',
    );
    // The API server's client certificate towards a real kubelet (logs, exec): kwokctl's admin one,
    // which the kubelet's x509 authentication accepts.
    if (pkiDir !== undefined) {
      lines.push(
        `  - {key: kubelet-client-certificate, value: "${join(pkiDir, 'admin.crt')}"}`,
        `  - {key: kubelet-client-key, value: "${join(pkiDir, 'admin.key')}"}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Whether a process with this pid exists (EPERM: it does, owned by someone else). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `helm` of the tool cache against a cluster, with its caches and configuration inside the cluster's directory. */
export function clusterHelm(
  cluster: Pick<KwokCluster, 'dir' | 'kubeconfig'>,
): (args: readonly string[], timeoutMs?: number) => Promise<string> {
  const env = {
    HELM_CACHE_HOME: join(cluster.dir, 'helm', 'cache'),
    HELM_CONFIG_HOME: join(cluster.dir, 'helm', 'config'),
    HELM_DATA_HOME: join(cluster.dir, 'helm', 'data'),
    KUBECONFIG: cluster.kubeconfig,
  };
  return async (args, timeoutMs = 180_000) => (await runTool(toolPath('helm'), args, { env, timeoutMs })).stdout;
}

/** Directories of finished clusters kept for their logs (the newest ones). */
const KEEP_FINISHED = 8;

/**
 * Delete clusters left behind by test processes that died (their owner pid is gone), and the
 * directories of finished clusters beyond the newest KEEP_FINISHED (their logs).
 */
async function sweepAbandoned(): Promise<void> {
  if (!existsSync(CLUSTERS_BASE)) return;
  const finished: { dir: string; mtimeMs: number }[] = [];
  for (const name of readdirSync(CLUSTERS_BASE)) {
    const dir = join(CLUSTERS_BASE, name);
    let owner = NaN;
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8').trim());
    } catch {
      // no owner file: a directory we did not finish creating
    }
    if (Number.isInteger(owner) && owner > 0 && pidAlive(owner)) continue;
    if (existsSync(join(dir, 'kwok', 'clusters', name))) {
      await runTool(
        toolPath('kwokctl'),
        ['delete', 'cluster', '--name', name, '--kubeconfig', join(dir, 'kubeconfig')],
        { env: kwokEnv(dir), timeoutMs: DELETE_TIMEOUT_MS },
      ).catch(() => undefined);
      await rm(join(dir, 'kwok'), { recursive: true, force: true });
    }
    finished.push({ dir, mtimeMs: statSync(dir).mtimeMs });
  }
  finished.sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const { dir } of finished.slice(KEEP_FINISHED)) await rm(dir, { recursive: true, force: true });
}

const undeleted = new Map<string, string>();
let exitHookInstalled = false;

/** Last resort when the test process exits without teardown (e.g. a crash): delete synchronously. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    // The one child_process call outside runTool (processes.ts), and it must stay one: an 'exit'
    // listener runs synchronously and the process ends when it returns, so runTool's promise would
    // never settle and kwokctl would not even be waited for. spawnSync blocks until the cluster is gone.
    for (const [name, dir] of undeleted) {
      spawnSync(toolPath('kwokctl'), ['delete', 'cluster', '--name', name, '--kubeconfig', join(dir, 'kubeconfig')], {
        env: { ...process.env, ...kwokEnv(dir) },
        timeout: DELETE_TIMEOUT_MS,
        stdio: 'ignore',
      });
    }
  });
}

/** A simulated node: managed by kwok, schedulable, with room for many pods. */
export function simulatedNode(name: string, labels: Readonly<Record<string, string>>): KubeObject {
  const resources = { cpu: '32', memory: '256Gi', pods: '110', 'ephemeral-storage': '100Gi' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        ...labels,
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
      },
    },
    spec: {},
    // Node status may be set on create; kwok then keeps the conditions and the lease fresh.
    status: {
      allocatable: resources,
      capacity: resources,
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', kubeletVersion: 'fake', kubeProxyVersion: 'fake' },
    },
  };
}

const nodeReady = (n: KubeObject): boolean =>
  ((n['status'] as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
    (c) => c.type === 'Ready' && c.status === 'True',
  );

async function startKwok(
  name: string,
  dir: string,
  podAccess: PodNetworkAccess | undefined,
  audit: boolean,
): Promise<void> {
  const config = join(dir, 'kwokctl.yaml');
  await writeFile(config, kwokctlConfig(podAccess, join(dir, 'kwok', 'clusters', name, 'pki')));
  const auditPolicy = join(dir, 'audit-policy.yaml');
  if (audit) await writeFile(auditPolicy, AUDIT_POLICY);
  await runTool(
    toolPath('kwokctl'),
    [
      'create',
      'cluster',
      '--name',
      name,
      '--config',
      config,
      '--runtime',
      'binary',
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--kube-apiserver-binary',
      toolPath('kube-apiserver'),
      '--kube-controller-manager-binary',
      toolPath('kube-controller-manager'),
      '--kube-scheduler-binary',
      toolPath('kube-scheduler'),
      '--kwok-controller-binary',
      toolPath('kwok'),
      '--etcd-binary',
      toolPath('etcd'),
      '--disable-qps-limits',
      '--wait',
      `${Math.round(CREATE_TIMEOUT_MS / 1000) - 30}s`,
      ...(audit ? ['--kube-audit-policy', auditPolicy] : []),
    ],
    { env: kwokEnv(dir), timeoutMs: CREATE_TIMEOUT_MS },
  );
}

/** Create a cluster with simulated PMEM nodes; deleted again if anything of this fails. */
export async function createCluster(options: ClusterOptions): Promise<KwokCluster> {
  await sweepAbandoned();
  installExitHook();
  const name = `pmem-e2e-${options.suite}-${randomBytes(3).toString('hex')}`;
  const dir = join(CLUSTERS_BASE, name);
  const logDir = join(dir, 'logs');
  await mkdir(logDir, { recursive: true });
  await writeFile(join(dir, 'owner.pid'), `${process.pid}\n`);
  const kubeconfig = join(dir, 'kubeconfig');
  const kwokDir = join(dir, 'kwok', 'clusters', name);
  undeleted.set(name, dir);
  let deleted = false;
  const remove = async (): Promise<void> => {
    if (deleted) return;
    deleted = true;
    // Keep the logs (the control plane's beside ours; kwokctl deletes its own) until a later run
    // sweeps them; etcd data and kwok's copies of the binaries go.
    await cp(join(kwokDir, 'logs'), join(logDir, 'control-plane'), { recursive: true }).catch(() => undefined);
    await runTool(toolPath('kwokctl'), ['delete', 'cluster', '--name', name, '--kubeconfig', kubeconfig], {
      env: kwokEnv(dir),
      timeoutMs: DELETE_TIMEOUT_MS,
    });
    undeleted.delete(name);
    await rm(join(dir, 'kwok'), { recursive: true, force: true });
    await writeFile(join(dir, 'owner.pid'), '0\n');
  };
  const componentLog = (component: string, lines = 40): string => {
    try {
      return readFileSync(join(kwokDir, 'logs', `${component}.log`), 'utf8')
        .trimEnd()
        .split('\n')
        .slice(-lines)
        .join('\n');
    } catch (e) {
      return `(no log: ${(e as Error).message})`;
    }
  };
  try {
    const started = Date.now();
    await startKwok(name, dir, options.podAccess, options.audit === true);
    const kube = Kube.fromFile(kubeconfig);
    const server = kube.config.getCurrentCluster()?.server ?? '';
    await waitFor(
      'the kube-apiserver to list namespaces',
      async () => ((await kube.list('v1', 'Namespace')).length > 0 ? true : undefined),
      { timeoutMs: 60_000 },
    );
    const createMs = Date.now() - started;
    const nodes = options.nodes ?? DEFAULT_NODES;
    for (const node of nodes) await kube.create(simulatedNode(node, options.nodeLabels ?? PMEM_NODE_LABELS));
    await waitFor(
      `nodes ${nodes.join(', ')} to become Ready (kwok-controller)`,
      async () => {
        const ready = (await kube.list('v1', 'Node')).filter(nodeReady).map((n) => n.metadata.name);
        return nodes.every((n) => ready.includes(n)) ? true : undefined;
      },
      { timeoutMs: 60_000, describe: () => componentLog('kwok-controller', 5) },
    );
    // The default ServiceAccount is what namespaced pods need before they may be created.
    await waitFor(
      'the default ServiceAccount in namespace default (kube-controller-manager)',
      async () =>
        (await kube.get({ apiVersion: 'v1', kind: 'ServiceAccount', name: 'default', namespace: 'default' }))
          ? true
          : undefined,
      { timeoutMs: 60_000 },
    );
    const nodesReadyMs = Date.now() - started;
    const kubectl = async (args: readonly string[], o: ToolOptions = {}): Promise<string> =>
      (await runTool(toolPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], { timeoutMs: 60_000, ...o })).stdout;
    const auditEvents = async (): Promise<AuditEvent[]> => {
      if (options.audit !== true) throw new Error(`cluster ${name} was created without audit: true`);
      const text = await readFile(join(kwokDir, 'logs', 'audit.log'), 'utf8');
      return text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as AuditEvent);
    };
    const restartControlPlane = async (downMs: number): Promise<number> => {
      const stopped = Date.now();
      await runTool(toolPath('kwokctl'), ['stop', 'cluster', '--name', name], {
        env: kwokEnv(dir),
        timeoutMs: DELETE_TIMEOUT_MS,
      });
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await runTool(toolPath('kwokctl'), ['start', 'cluster', '--name', name], {
        env: kwokEnv(dir),
        timeoutMs: CREATE_TIMEOUT_MS,
      });
      await waitFor(
        'the kube-apiserver to answer again after the restart',
        async () => ((await kube.list('v1', 'Namespace').catch(() => [])).length > 0 ? true : undefined),
        { timeoutMs: 120_000 },
      );
      return Date.now() - stopped;
    };
    return {
      name,
      dir,
      logDir,
      kubeconfig,
      server,
      kube,
      nodes,
      timings: { createMs, nodesReadyMs },
      kubectl,
      componentLog,
      auditEvents,
      restartControlPlane,
      delete: remove,
    };
  } catch (e) {
    await remove().catch(() => undefined);
    throw e;
  }
}

/** Create a namespace (idempotent). */
export async function ensureNamespace(kube: Kube, name: string): Promise<void> {
  await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await waitFor(
    `the default ServiceAccount in namespace ${name}`,
    async () =>
      (await kube.get({ apiVersion: 'v1', kind: 'ServiceAccount', name: 'default', namespace: name }))
        ? true
        : undefined,
    { timeoutMs: 60_000 },
  );
}

/** Print a suite's measured phases (after its teardown), one line each in seconds. */
export function printTimings(suite: string, timings: Readonly<Record<string, number>>): void {
  process.stdout.write(
    `\ncluster tier timings (${suite}):\n${Object.entries(timings)
      .map(([k, v]) => `  ${k}: ${(v / 1000).toFixed(1)} s`)
      .join('\n')}\n`,
  );
}
