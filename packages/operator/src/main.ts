// The operator binary: flags, kubeconfig, the control loop (optionally behind leader election),
// the health/metrics endpoint, and a clean stop on SIGTERM (stop reconciling, release the Lease
// so that a standby replica takes over at once). Losing leadership ends the process with exit
// code 1: a reconcile in flight cannot be cancelled, so the process goes and the kubelet restarts
// it as a standby. Drivers do not depend on the operator process: removing it leaves them running.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { pathToFileURL } from 'node:url';
import { createCa, createLeaf, createLogger, verifyByHandshake, type LogSink, type Logger } from '@pmem-csi/runtime';
import { ApiHealth, MonitoredKubeApi, type ApiHealthOptions } from './kube/api-health.js';
import { DEFAULT_CERTIFICATE_POLICY, cachedVerify, type CertDeps } from './certs/certificates.js';
import { systemClock, type Clock } from './clock.js';
import { kubeEventRecorder } from './status/events.js';
import { OperatorFlagError, operatorUsage, parseOperatorFlags, type OperatorConfig } from './binary/flags.js';
import { OperatorMetrics, startHttpServer, type OperatorProbe } from './binary/http-server.js';
import { ClientKubeApi } from './kube/kube-api.js';
import { noWatchRestarts, type Informer, type WatchRestartReason, type WatchRestarts } from './kube/informer.js';
import { loadKubeConfig, operatorUserAgent } from './kube/kube-client.js';
import type { KubeApi } from './kube/kube-port.js';
import { LeaderElector } from './loop/leader.js';
import { OPERATOR_LEASE_NAME } from '@pmem-csi/api';
import { Operator } from './loop/control-loop.js';
import { Reconciler } from './loop/deployment-reconciler.js';

/** What tests (and e2e harnesses) may substitute. */
export interface MainDeps {
  /** When /readyz turns 503 after API access failures (kube/api-health.ts defaults). */
  readonly apiHealth?: Pick<ApiHealthOptions, 'failures' | 'boundMs'>;
  readonly kube?: KubeApi;
  readonly clock?: Clock;
  /** Stops the operator (default: SIGTERM or SIGINT). */
  readonly stop?: AbortSignal;
  readonly logSink?: LogSink;
  readonly identity?: string;
  readonly certs?: CertDeps;
  /** Reports the HTTP port once listening (tests use port 0). */
  readonly onListening?: (port: number) => void;
}

const VERIFY_CACHE_MS = 10 * 60 * 1000;

function signalStop(): AbortSignal {
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  return controller.signal;
}

interface Running {
  readonly operator: Operator;
  readonly elector: LeaderElector | undefined;
  /** Resolves with the exit code when the process should end. */
  readonly ended: Promise<number>;
}

function startControlLoop(
  config: OperatorConfig,
  deps: MainDeps & { kube: KubeApi; clock: Clock; log: Logger; metrics: OperatorMetrics; identity: string },
): Running {
  const { kube, clock, log, metrics } = deps;
  // The reconciler reads the CR list (object-name precedence) and the objects each CR owns from the
  // operator's informer caches: no list per reconcile once they have synced.
  const operator: Operator = new Operator({
    kube,
    namespace: config.namespace,
    reconcile: (name) => metrics.timeReconcile(() => reconciler.reconcile(name)),
    clock,
    log,
    queue: {
      onResult: (key, r) => {
        metrics.reconciled(r.ok);
        if (!r.ok) {
          log.warn('reconcile failed', { deployment: key, error: r.error, retryInMs: r.retryInMs });
        }
      },
    },
  });
  const reconciler = new Reconciler({
    kube,
    namespace: config.namespace,
    operatorVersion: config.version,
    operatorImage: config.driverImage,
    certs: deps.certs ?? {
      policy: DEFAULT_CERTIFICATE_POLICY,
      issuer: { createCa, createLeaf },
      verify: cachedVerify(verifyByHandshake, VERIFY_CACHE_MS),
    },
    events: kubeEventRecorder(kube, { clock, log, instance: deps.identity }),
    log,
    clock,
    deployments: () => operator.deployments(),
    owned: (type, crName) => operator.ownedObjects(type, crName),
    leases: () => operator.leases(),
    nodes: () => operator.nodes(),
  });
  let lostLeadership: () => void = () => undefined;
  const lost = new Promise<number>((resolve) => (lostLeadership = () => resolve(1)));
  let elector: LeaderElector | undefined;
  if (config.leaderElect) {
    elector = new LeaderElector({
      kube,
      namespace: config.namespace,
      name: OPERATOR_LEASE_NAME,
      identity: deps.identity,
      clock,
      log,
    });
    elector.start({ onStartedLeading: () => operator.start(), onStoppedLeading: lostLeadership });
  } else {
    operator.start();
  }
  const stopped = new Promise<number>((resolve) => {
    const stop = deps.stop ?? signalStop();
    if (stop.aborted) resolve(0);
    stop.addEventListener('abort', () => resolve(0), { once: true });
  });
  return { operator, elector, ended: Promise.race([stopped, lost]) };
}

/** Flags, or the exit code when there is nothing to run (usage error: 2, --help/--version: 0). */
function configOrExit(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  sink: LogSink,
): OperatorConfig | number {
  try {
    const command = parseOperatorFlags(argv, env);
    if (!('output' in command)) return command;
    sink(command.output);
    return 0;
  } catch (e) {
    if (!(e instanceof OperatorFlagError)) throw e;
    sink(`${e.message}\n${operatorUsage()}`);
    return 2;
  }
}

/** The restarts of all informers, by reason. */
function watchRestarts(informers: readonly Informer[]): WatchRestarts {
  const total = noWatchRestarts();
  for (const informer of informers)
    for (const [reason, n] of Object.entries(informer.restartsByReason) as [WatchRestartReason, number][])
      total[reason] += n;
  return total;
}

/** /readyz and /metrics of a running control loop; a standby replica counts as ready while it reaches the API. */
function probeOf(running: Running, metrics: OperatorMetrics, health: ApiHealth): OperatorProbe {
  const leader = (): boolean => running.elector?.isLeader ?? true;
  return {
    notReady: () => health.problem() ?? (!leader() || running.operator.synced ? undefined : 'informers not synced'),
    metrics: () =>
      metrics.render({
        queueDepth: running.operator.queue.pendingCount,
        leader: leader(),
        watchRestarts: watchRestarts(running.operator.informers),
        informersSynced: running.operator.synced,
        apiAccessFailures: health.failuresTotal,
        apiReachable: health.problem() === undefined,
      }),
  };
}

/** The health/metrics server, or nothing when the address is empty. */
async function serveProbes(
  address: string,
  probe: OperatorProbe,
  onListening: ((port: number) => void) | undefined,
): Promise<{ close(): Promise<void> }> {
  if (address === '') return { close: async () => undefined };
  const { server, port } = await startHttpServer(address, probe);
  onListening?.(port);
  return { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function kubeFromConfig(config: OperatorConfig): KubeApi {
  const userAgent = operatorUserAgent(config.version);
  return new ClientKubeApi(
    loadKubeConfig(config.kubeconfig === undefined ? { userAgent } : { file: config.kubeconfig, userAgent }),
  );
}

/** Unique per replica: the pod name (or host name) and a random suffix, as client-go does. */
function replicaIdentity(env: Readonly<Record<string, string | undefined>>): string {
  return `${env['POD_NAME'] ?? hostname()}_${randomUUID().slice(0, 8)}`;
}

/** Run the operator until stopped; resolves with the process exit code. */
export async function runOperator(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  deps: MainDeps = {},
): Promise<number> {
  const sink = deps.logSink ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const config = configOrExit(argv, env, sink);
  if (typeof config === 'number') return config;
  const log = createLogger({
    format: config.logFormat,
    level: config.logLevel,
    sink,
    fields: { component: 'pmem-csi-operator' },
  });
  const clock = deps.clock ?? systemClock;
  const metrics = new OperatorMetrics({ version: config.version });
  const health = new ApiHealth({ clock, ...deps.apiHealth, onRequest: metrics.apiRequest });
  const kube = new MonitoredKubeApi(deps.kube ?? kubeFromConfig(config), health);
  const identity = deps.identity ?? replicaIdentity(env);
  log.info('starting', {
    version: config.version,
    namespace: config.namespace,
    driverImage: config.driverImage,
    leaderElect: config.leaderElect,
    identity,
  });
  const running = startControlLoop(config, { ...deps, kube, clock, log, metrics, identity });
  const http = await serveProbes(config.metricsAddress, probeOf(running, metrics, health), deps.onListening);
  const code = await running.ended;
  log.info(code === 0 ? 'stopping' : 'stopping after losing leadership', { code });
  await running.operator.stop();
  await running.elector?.stop();
  await http.close();
  return code;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  runOperator(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`pmem-csi-operator: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
