// Cluster tier, metrics: Prometheus scrapes of the deployed components while they do real work.
// The driver stack runs as host processes beside the kwok cluster (kwok runs no containers) with
// what the operator's objects give the pods: every process serves /metrics on --metrics-listen
// (the local stack, startLocalStack, gives the node drivers none, hence the small stack below:
// the same binary, certificates and flags otherwise). external-provisioner provisions through the
// controller and the operator reconciles a PmemCSIDeployment; each /metrics is scraped before and
// after, and the series must move with that work: CSI operation counts by method and gRPC code on
// controller and node, capacity and volume series per node, the registry gauges, build_info, and
// the operator's reconcile and API request counters.
// Needs root and loop devices (the node drivers run on emulated PMEM), like the provisioning tier.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { deploymentObjectNames } from '@pmem-csi/api';
import { OPERATOR_VERSION } from '@pmem-csi/operator';
import { fetchStatus, freePort, makeLocalCerts } from '@pmem-csi/driver';
import { releaseHostDir } from '@pmem-csi/node';
import { HostRunner } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';
import { DRIVER_NAMESPACE, startDriver, startOperator, startProvisioner, type OperatorRun } from './components.js';
import { createCluster, ensureNamespace, printTimings, type KwokCluster } from './harness.js';
import { helmTemplate, parseManifests, RELEASE_NAMESPACE } from '../deploy/render.js';
import type { KubeObject } from './kube.js';
import { tail, type HostProcess } from './processes.js';
import { conditionIs, installCrd, pmemDeployment, waitStatus, workloadRefs } from './pmem-deployment.js';
import {
  affinityNodes,
  claim,
  claimRef,
  csiDriver,
  detachLoopsUnder,
  DRIVER,
  pvRef,
  registerNodes,
  storageClass,
  waitBound,
  waitGone,
} from './storage.js';
import { waitFor } from './wait.js';

const NODE_BYTES = 256 * MiB;
const CR = 'pmem-csi.intel.com';
const CREATE = '/csi.v1.Controller/CreateVolume';
const DELETE = '/csi.v1.Controller/DeleteVolume';
const timings: Record<string, number> = {};

// --- the text exposition, read back ---------------------------------------------------------

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** One label set `{a="x",b="y"}` (escapes \\, \" and \n as the format defines them). */
function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0 || text[eq + 1] !== '"') throw new Error(`bad label set in exposition line: ${line}`);
    const name = text.slice(i, eq).trim();
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        j++;
        value += text[j] === 'n' ? '\n' : (text[j] ?? '');
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`unterminated label value in exposition line: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
  }
  return labels;
}

/** Every sample of a Prometheus text exposition; a line that is not one fails, naming it. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const open = line.indexOf('{');
    const close = line.lastIndexOf('}');
    const name = open < 0 ? (line.split(' ')[0] ?? '') : line.slice(0, open);
    const rest = (open < 0 ? line.slice(name.length) : line.slice(close + 1)).trim().split(/\s+/);
    const value = rest[0] === '+Inf' ? Infinity : rest[0] === '-Inf' ? -Infinity : Number(rest[0]);
    if (name === '' || rest[0] === undefined || (Number.isNaN(value) && rest[0] !== 'NaN'))
      throw new Error(`not an exposition sample: ${line}`);
    samples.push({ name, labels: open < 0 ? {} : parseLabels(line.slice(open + 1, close), line), value });
  }
  return samples;
}

class Scrape {
  constructor(
    readonly url: string,
    readonly samples: readonly Sample[],
  ) {}

  /** Samples of `name` whose labels include `match`. */
  find(name: string, match: Readonly<Record<string, string>> = {}): Sample[] {
    return this.samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
  }

  /** The value of exactly one sample, or 0 when there is none (a counter that never moved has no child). */
  value(name: string, match: Readonly<Record<string, string>> = {}): number {
    const found = this.find(name, match);
    if (found.length > 1)
      throw new Error(`${this.url}: ${found.length} samples of ${name}${JSON.stringify(match)}, expected at most one`);
    return found[0]?.value ?? 0;
  }

  /** The value of exactly one sample that must be there. */
  must(name: string, match: Readonly<Record<string, string>> = {}): number {
    const found = this.find(name, match);
    if (found.length !== 1)
      throw new Error(
        `${this.url}: ${found.length} samples of ${name}${JSON.stringify(match)}, expected one; series of that name: ${JSON.stringify(this.find(name))}`,
      );
    return found[0]?.value ?? NaN;
  }
}

async function scrape(base: string): Promise<Scrape> {
  const url = `${base}/metrics`;
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  if (!(res.headers.get('content-type') ?? '').startsWith('text/plain'))
    throw new Error(`GET ${url}: content-type ${res.headers.get('content-type')}, expected the text exposition`);
  return new Scrape(url, parseExposition(text));
}

// --- the driver stack, each process with its /metrics -----------------------------------------

interface DriverRun {
  readonly name: string;
  readonly process: HostProcess;
  /** http://127.0.0.1:PORT of --metrics-listen (/metrics, /status). */
  readonly metricsUrl: string;
}

interface MetricsStack {
  readonly dir: string;
  readonly controllerSocket: string;
  readonly controller: DriverRun;
  readonly nodes: readonly DriverRun[];
}

async function startMetricsStack(cluster: KwokCluster, dir: string): Promise<MetricsStack> {
  const certs = await makeLocalCerts(join(dir, 'certs'));
  const registryPort = await freePort();
  const controllerSocket = join(dir, 'controller', 'csi.sock');
  await mkdir(join(dir, 'controller'), { recursive: true });
  const controllerMetrics = await freePort();
  const controller: DriverRun = {
    name: 'controller',
    metricsUrl: `http://127.0.0.1:${controllerMetrics}`,
    process: startDriver(cluster, 'driver-controller', {
      mode: 'controller',
      csiEndpoint: controllerSocket,
      caFile: certs.registry.caFile,
      certFile: certs.registry.certFile,
      keyFile: certs.registry.keyFile,
      registryListen: `127.0.0.1:${registryPort}`,
      metricsListen: `127.0.0.1:${controllerMetrics}`,
      leaseSeconds: 6,
    }),
  };
  const nodes: DriverRun[] = [];
  for (const id of cluster.nodes) {
    const nodeDir = join(dir, 'nodes', id);
    await mkdir(nodeDir, { recursive: true });
    const [port, metrics] = [await freePort(), await freePort()];
    nodes.push({
      name: id,
      metricsUrl: `http://127.0.0.1:${metrics}`,
      process: startDriver(cluster, `driver-${id}`, {
        mode: 'node',
        nodeId: id,
        deviceMode: 'emulated',
        csiEndpoint: join(nodeDir, 'csi.sock'),
        caFile: certs.nodeController.caFile,
        certFile: certs.nodeController.certFile,
        keyFile: certs.nodeController.keyFile,
        stateDir: join(nodeDir, 'state'),
        emulatedSize: NODE_BYTES,
        nodeControllerListen: `127.0.0.1:${port}`,
        advertisedEndpoint: `127.0.0.1:${port}`,
        registryEndpoint: `127.0.0.1:${registryPort}`,
        metricsListen: `127.0.0.1:${metrics}`,
      }),
    });
  }
  const stack = { dir, controllerSocket, controller, nodes };
  await waitFor(
    `${nodes.length} node drivers to register and the controller to settle (logs in ${cluster.logDir})`,
    async () => {
      const dead = [controller, ...nodes].find((r) => r.process.exited() !== undefined);
      if (dead !== undefined)
        throw new Error(`${dead.name} exited (${dead.process.exited() ?? ''}):\n${tail(dead.process.log(), 10)}`);
      const s = await fetchStatus(controller.metricsUrl, 2000).catch(() => undefined);
      return s !== undefined && s.settled && s.nodes.filter((n) => n.state === 'available').length === nodes.length
        ? true
        : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  return stack;
}

async function stopMetricsStack(stack: MetricsStack | undefined): Promise<void> {
  if (stack === undefined) return;
  await Promise.all(stack.nodes.map((n) => n.process.stop().catch(() => undefined)));
  await stack.controller.process.stop().catch(() => undefined);
  const released = await releaseHostDir(new HostRunner(), stack.dir);
  const leaked = await detachLoopsUnder(stack.dir);
  if (released.left.length > 0 || leaked.length > 0)
    process.stdout.write(`metrics stack: left ${released.left.join(', ')}; detached ${leaked.join(', ')}\n`);
}

// --- the chart's scrape targets ------------------------------------------------------------

interface Endpoint {
  port: string;
  path: string;
}
interface Monitor extends KubeObject {
  spec: {
    namespaceSelector: { matchNames: string[] };
    selector: { matchLabels: Record<string, string> };
    endpoints?: Endpoint[];
    podMetricsEndpoints?: Endpoint[];
  };
}
interface PodTemplateOwner extends KubeObject {
  spec: {
    template: {
      metadata: { labels?: Record<string, string> };
      spec: {
        containers: Array<{ name: string; args?: string[]; ports?: Array<{ name?: string; containerPort: number }> }>;
      };
    };
  };
}
interface ServiceObject extends KubeObject {
  spec: { ports?: Array<{ name?: string; port: number; targetPort?: string | number }> };
}

const selects = (
  labels: Readonly<Record<string, string>> | undefined,
  selector: Readonly<Record<string, string>>,
): boolean => Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** The containers' port named `name`, with the --metrics-listen port of that container. */
function metricsPort(
  owner: PodTemplateOwner,
  name: string,
): { containerPort: number; listens: number | undefined } | undefined {
  for (const c of owner.spec.template.spec.containers) {
    const port = (c.ports ?? []).find((p) => p.name === name);
    if (port === undefined) continue;
    const listen = (c.args ?? [])
      .map((a) => /^--(?:metrics-listen|metrics-address)[= ].*:(\d+)$/.exec(a)?.[1])
      .find((p) => p !== undefined);
    return { containerPort: port.containerPort, listens: listen === undefined ? undefined : Number(listen) };
  }
  return undefined;
}

// --- the tests ------------------------------------------------------------------------------

describe('cluster: /metrics of the deployed components move with the work done', () => {
  let cluster: KwokCluster;
  let stack: MetricsStack | undefined;
  let provisioner: HostProcess | undefined;
  let operator: OperatorRun | undefined;
  const why = (): string => `provisioner: ${tail(provisioner?.log() ?? '', 3)}`;
  const nodeRun = (id: string): DriverRun => {
    const n = stack?.nodes.find((r) => r.name === id);
    if (n === undefined)
      throw new Error(
        `no node driver ${id} in the metrics stack (nodes: ${stack?.nodes.map((r) => r.name).join(', ')})`,
      );
    return n;
  };

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error(
        'the metrics scenario runs our node drivers on emulated PMEM: needs root and loop devices (CI runs as root)',
      );
    const started = Date.now();
    cluster = await createCluster({ suite: 'metrics' });
    timings['cluster create (kwokctl until API)'] = cluster.timings.createMs;
    const { kube } = cluster;
    await installCrd(kube);
    await ensureNamespace(kube, DRIVER_NAMESPACE);
    stack = await startMetricsStack(cluster, join(cluster.dir, 'stack'));
    await registerNodes(kube, cluster.nodes);
    await kube.apply(csiDriver());
    await kube.apply(storageClass('pmem-immediate', 'Immediate'));
    provisioner = startProvisioner(cluster, { csiSocket: stack.controllerSocket });
    timings['set-up total'] = Date.now() - started;
  }, 300_000);

  afterAll(async () => {
    await provisioner?.stop().catch(() => undefined);
    await operator?.stop().catch(() => undefined);
    await stopMetricsStack(stack);
    await cluster?.delete();
    printTimings('metrics', timings);
  }, 120_000);

  it('controller and node drivers: build_info, registry gauges and capacity per node at rest', async () => {
    if (stack === undefined) throw new Error('the stack did not start');
    const ctl = await scrape(stack.controller.metricsUrl);
    expect(ctl.must('pmem_csi_build_info', { component: 'controller' })).toBe(1);
    expect(ctl.find('pmem_csi_build_info')[0]?.labels['version']).toMatch(/^\d+\.\d+\.\d+/);
    expect(ctl.must('pmem_csi_controller_nodes', { state: 'available' })).toBe(cluster.nodes.length);
    for (const state of ['syncing', 'unavailable', 'unregistered'])
      expect({ state, n: ctl.value('pmem_csi_controller_nodes', { state }) }).toEqual({ state, n: 0 });
    expect(ctl.must('pmem_csi_controller_volumes')).toBe(0);
    expect(ctl.must('process_resident_memory_bytes')).toBeGreaterThan(0);
    // The registry's own RPCs are counted: every node registered once and renews its lease.
    expect(
      ctl
        .find('csi_plugin_operations_seconds_count', { driver_name: DRIVER, grpc_status_code: 'OK' })
        .map((s) => s.labels['method_name']),
    ).toEqual(expect.arrayContaining(['/pmemcsi.registry.v1.Registry/RegisterController']));
    for (const node of cluster.nodes) {
      expect({ node, available: ctl.must('pmem_csi_controller_node_available', { node }) }).toEqual({
        node,
        available: 1,
      });
      expect({ node, total: ctl.must('pmem_csi_controller_node_capacity_bytes', { node, kind: 'total' }) }).toEqual({
        node,
        total: NODE_BYTES,
      });
      const n = await scrape(nodeRun(node).metricsUrl);
      expect(n.must('pmem_csi_build_info', { component: 'node' })).toBe(1);
      expect({ node, registered: n.must('pmem_csi_node_registered', { node }) }).toEqual({ node, registered: 1 });
      expect(n.must('pmem_csi_node_registrations_total', { node })).toBeGreaterThanOrEqual(1);
      expect({ node, total: n.must('pmem_csi_node_capacity_bytes', { node, kind: 'total' }) }).toEqual({
        node,
        total: NODE_BYTES,
      });
      expect(n.must('pmem_csi_node_capacity_bytes', { node, kind: 'available' })).toBeGreaterThan(0);
      expect(n.must('pmem_csi_node_orphaned_devices', { node })).toBe(0);
      // Certificates of the process: its own and the CA it trusts, with a notAfter in the future.
      const expiry = n.find('pmem_csi_certificate_expiry_timestamp_seconds');
      expect(expiry.map((s) => s.labels['role']).sort()).toEqual(['ca', 'certificate']);
      for (const s of expiry) expect(s.value).toBeGreaterThan(Date.now() / 1000);
    }
  }, 60_000);

  it('a provisioned and deleted volume moves CreateVolume/DeleteVolume counts, volumes and used capacity', async () => {
    if (stack === undefined) throw new Error('the stack did not start');
    const started = Date.now();
    const { kube } = cluster;
    const ctl0 = await scrape(stack.controller.metricsUrl);
    const nodes0 = new Map(
      await Promise.all(cluster.nodes.map(async (n) => [n, await scrape(nodeRun(n).metricsUrl)] as const)),
    );
    const ops = (s: Scrape, method: string, code = 'OK'): number =>
      s.value('csi_plugin_operations_seconds_count', {
        driver_name: DRIVER,
        method_name: method,
        grpc_status_code: code,
      });

    await kube.apply(claim('metrics-1', 'pmem-immediate', '64Mi'));
    const pv = await waitBound(kube, 'metrics-1', 90_000, why);
    const [node, ...others] = affinityNodes(pv);
    expect(others).toEqual([]);
    if (node === undefined) throw new Error(`PV ${pv.metadata.name} names no node`);

    const ctl1 = await scrape(stack.controller.metricsUrl);
    expect(ops(ctl1, CREATE)).toBeGreaterThanOrEqual(ops(ctl0, CREATE) + 1);
    // The histogram: one observation per call, in the sidecars' buckets (le="+Inf" = count).
    expect(
      ctl1.must('csi_plugin_operations_seconds_bucket', { method_name: CREATE, grpc_status_code: 'OK', le: '+Inf' }),
    ).toBe(ops(ctl1, CREATE));
    expect(
      ctl1.must('csi_plugin_operations_seconds_sum', { method_name: CREATE, grpc_status_code: 'OK' }),
    ).toBeGreaterThan(0);
    expect(ctl1.must('pmem_csi_controller_volumes')).toBe(1);
    expect(ctl1.must('pmem_csi_controller_node_volumes', { node })).toBe(1);
    const n0 = nodes0.get(node);
    if (n0 === undefined) throw new Error(`no baseline scrape of ${node}`);
    const n1 = await scrape(nodeRun(node).metricsUrl);
    // The controller called the node's node-controller service: the same method, counted there too.
    expect(ops(n1, CREATE)).toBe(ops(n0, CREATE) + 1);
    expect(n1.must('pmem_csi_node_volumes', { node, kind: 'persistent' })).toBe(1);
    expect(n1.must('pmem_csi_node_capacity_bytes', { node, kind: 'used' })).toBeGreaterThanOrEqual(64 * MiB);
    expect(n1.must('pmem_csi_node_capacity_bytes', { node, kind: 'available' })).toBeLessThanOrEqual(
      n0.must('pmem_csi_node_capacity_bytes', { node, kind: 'available' }) - 64 * MiB,
    );
    const created = (s: Scrape): number =>
      s.value('pmem_csi_node_device_operation_seconds_count', { node, operation: 'create', result: 'ok' });
    expect(created(n1)).toBe(created(n0) + 1);
    // The controller reads the node's capacity through the registry; it agrees once it has.
    await waitFor(
      `the controller's used capacity of ${node} to reach the node's`,
      async () => {
        const c = await scrape(stack?.controller.metricsUrl ?? '');
        return c.must('pmem_csi_controller_node_capacity_bytes', { node, kind: 'used' }) ===
          n1.must('pmem_csi_node_capacity_bytes', { node, kind: 'used' })
          ? true
          : undefined;
      },
      { timeoutMs: 30_000 },
    );
    for (const other of cluster.nodes.filter((n) => n !== node)) {
      const o = await scrape(nodeRun(other).metricsUrl);
      expect({ other, volumes: o.must('pmem_csi_node_volumes', { node: other, kind: 'persistent' }) }).toEqual({
        other,
        volumes: 0,
      });
      expect({ other, creates: ops(o, CREATE) }).toEqual({ other, creates: ops(nodes0.get(other) ?? o, CREATE) });
    }

    await kube.delete(claimRef('metrics-1'));
    await waitGone(kube, pvRef(pv.metadata.name), 90_000, why);
    const ctl2 = await scrape(stack.controller.metricsUrl);
    expect(ops(ctl2, DELETE)).toBeGreaterThanOrEqual(ops(ctl1, DELETE) + 1);
    expect(ctl2.must('pmem_csi_controller_volumes')).toBe(0);
    const n2 = await scrape(nodeRun(node).metricsUrl);
    expect(ops(n2, DELETE)).toBeGreaterThanOrEqual(ops(n1, DELETE) + 1);
    expect(n2.must('pmem_csi_node_volumes', { node, kind: 'persistent' })).toBe(0);
    expect(n2.must('pmem_csi_node_capacity_bytes', { node, kind: 'used' })).toBe(0);
    const deleted = (s: Scrape): number =>
      s.value('pmem_csi_node_device_operation_seconds_count', { node, operation: 'delete', result: 'ok' });
    expect(deleted(n2)).toBe(deleted(n1) + 1);
    // No call failed on the way (the provisioner retries nothing it did not have to).
    const failed = [ctl2, n2].flatMap((s) =>
      s
        .find('csi_plugin_operations_seconds_count')
        .filter((x) => x.labels['grpc_status_code'] !== 'OK' && x.value > 0)
        .map((x) => `${s.url} ${JSON.stringify(x.labels)} ${x.value}`),
    );
    expect(failed).toEqual([]);
    timings['volume create, bind, delete with scrapes'] = Date.now() - started;
  }, 240_000);

  it('operator: reconciles, their durations and API requests count up with a PmemCSIDeployment', async () => {
    const started = Date.now();
    const { kube } = cluster;
    operator = await startOperator(cluster, {
      version: OPERATOR_VERSION,
      driverImage: `registry.example.org/pmem-csi-driver:v${OPERATOR_VERSION}`,
      logName: 'operator-metrics.log',
    });
    const op0 = await scrape(operator.metricsUrl);
    expect(op0.must('pmem_csi_build_info', { component: 'operator' })).toBe(1);
    expect(op0.must('pmem_csi_operator_informers_synced')).toBe(1);
    expect(op0.must('pmem_csi_operator_api_reachable')).toBe(1);
    await kube.apply(pmemDeployment(CR, { deviceMode: 'lvm', nodeSelector: { storage: 'pmem' } }));
    await waitStatus(kube, CR, {
      what: 'DriverDeployed=True',
      ok: (c) => conditionIs(c, 'DriverDeployed', 'True'),
      timeoutMs: 120_000,
    });
    const reconciles = (s: Scrape, result: string): number => s.must('pmem_csi_operator_reconciles_total', { result });
    // The status is written inside the reconcile; the reconcile is counted when it has returned.
    const url = operator.metricsUrl;
    let last: Scrape | undefined;
    const op1 = await waitFor(
      'pmem_csi_operator_reconciles_total{result="success"} to count the reconcile that deployed the driver',
      async () => {
        last = await scrape(url);
        return reconciles(last, 'success') >= reconciles(op0, 'success') + 1 ? last : undefined;
      },
      {
        timeoutMs: 30_000,
        describe: () => `reconciles: ${JSON.stringify(last?.find('pmem_csi_operator_reconciles_total'))}`,
      },
    );
    expect(reconciles(op1, 'error')).toBe(reconciles(op0, 'error'));
    expect(op1.must('pmem_csi_operator_reconcile_duration_seconds_count', { result: 'success' })).toBe(
      reconciles(op1, 'success'),
    );
    // Deploying wrote objects: server-side applies of the driver's kinds.
    const writes = op1
      .find('pmem_csi_operator_api_requests_total', { result: 'success' })
      .filter((s) => s.labels['verb'] === 'apply' && s.value > 0);
    expect(writes.reduce((a, s) => a + s.value, 0)).toBeGreaterThan(0);
    expect([...new Set(writes.map((s) => s.labels['kind']))]).toEqual(
      expect.arrayContaining(['Deployment', 'DaemonSet', 'Secret']),
    );
    // No write failed and nothing was refused. (A list may meet "storage is (re)initializing" from
    // the apiserver of a just-installed CRD: counted as an error, truthfully, and retried.)
    const failed = op1
      .find('pmem_csi_operator_api_requests_total')
      .filter((s) => s.labels['result'] !== 'success' && s.value > 0);
    expect(
      failed
        .filter(
          (s) =>
            s.labels['result'] === 'access_failure' || ['apply', 'patch', 'delete'].includes(s.labels['verb'] ?? ''),
        )
        .map((s) => s.labels),
    ).toEqual([]);
    timings['operator: deploy with scrapes'] = Date.now() - started;
  }, 240_000);

  it("the chart's ServiceMonitor and PodMonitors select what the operator deployed, on the ports that serve /metrics", async () => {
    const { kube } = cluster;
    // The rendered YAML as plain objects of this tier's wire type (render.ts types them as the operator's).
    const rendered = parseManifests(
      helmTemplate({ set: { 'monitoring.serviceMonitor.enabled': 'true', 'monitoring.podMonitor.enabled': 'true' } }),
    );
    const chart = JSON.parse(JSON.stringify(rendered)) as KubeObject[];
    const monitors = chart.filter((o): o is Monitor => o.kind === 'ServiceMonitor' || o.kind === 'PodMonitor');
    expect(monitors.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      'PodMonitor/pmem-csi-operator',
      'PodMonitor/pmem-csi-operator-node',
      'ServiceMonitor/pmem-csi-operator-controller',
    ]);
    const monitor = (kind: string, name: string): Monitor => {
      const m = monitors.find((o) => o.kind === kind && o.metadata.name === name);
      if (m === undefined) throw new Error(`the chart rendered no ${kind} ${name}`);
      return m;
    };
    const names = deploymentObjectNames(CR);

    // The controller: the Services its selector picks in the driver namespace that have the
    // endpoint's port: exactly the metrics Service, pointing at the container port that serves /metrics.
    const sm = monitor('ServiceMonitor', 'pmem-csi-operator-controller');
    const smPort = sm.spec.endpoints?.[0]?.port ?? '';
    expect(sm.spec.namespaceSelector.matchNames).toEqual([DRIVER_NAMESPACE]);
    expect(sm.spec.endpoints?.map((e) => e.path)).toEqual(['/metrics']);
    const services = await kube.list<ServiceObject>('v1', 'Service', { namespace: DRIVER_NAMESPACE });
    const scraped = services.filter(
      (s) =>
        selects(s.metadata.labels, sm.spec.selector.matchLabels) && (s.spec.ports ?? []).some((p) => p.name === smPort),
    );
    expect(scraped.map((s) => s.metadata.name)).toEqual([names.metricsService]);
    const controller = await kube.must<PodTemplateOwner>(workloadRefs(CR).deployment);
    const targetPort = scraped[0]?.spec.ports?.find((p) => p.name === smPort)?.targetPort;
    const ctlPort = metricsPort(controller, String(targetPort));
    expect(ctlPort).toBeDefined();
    expect(ctlPort?.listens).toBe(ctlPort?.containerPort);

    // The node drivers: the DaemonSet's pods and only those (not the controller's), on the port of --metrics-listen.
    const pmNode = monitor('PodMonitor', 'pmem-csi-operator-node');
    expect(pmNode.spec.namespaceSelector.matchNames).toEqual([DRIVER_NAMESPACE]);
    const daemonSet = await kube.must<PodTemplateOwner>(workloadRefs(CR).daemonSet);
    expect(selects(daemonSet.spec.template.metadata.labels, pmNode.spec.selector.matchLabels)).toBe(true);
    expect(selects(controller.spec.template.metadata.labels, pmNode.spec.selector.matchLabels)).toBe(false);
    const nodePort = metricsPort(daemonSet, pmNode.spec.podMetricsEndpoints?.[0]?.port ?? '');
    expect(nodePort).toBeDefined();
    expect(nodePort?.listens).toBe(nodePort?.containerPort);

    // The operator: the chart's own Deployment, in the release namespace, on its http port (--metrics-address).
    const pmOp = monitor('PodMonitor', 'pmem-csi-operator');
    expect(pmOp.spec.namespaceSelector.matchNames).toEqual([RELEASE_NAMESPACE]);
    const operatorDeployment = chart.find(
      (o): o is PodTemplateOwner => o.kind === 'Deployment' && o.metadata.name === 'pmem-csi-operator',
    );
    if (operatorDeployment === undefined) throw new Error('the chart rendered no operator Deployment');
    expect(selects(operatorDeployment.spec.template.metadata.labels, pmOp.spec.selector.matchLabels)).toBe(true);
    const opPort = metricsPort(operatorDeployment, pmOp.spec.podMetricsEndpoints?.[0]?.port ?? '');
    expect(opPort).toBeDefined();
    expect(opPort?.listens).toBe(opPort?.containerPort);
  }, 60_000);
});
