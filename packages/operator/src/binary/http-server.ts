// The operator's small HTTP endpoint: /healthz (the process serves), /readyz (200 "ok" when ready,
// else 503 with the reason as text: informers not synced yet, or the Kubernetes API unreachable or
// refusing the operator's credentials, kube/api-health.ts; a standby replica waiting for leadership
// counts as ready as long as it reaches the API, or a rolling update of a two-replica operator
// would never finish) and /metrics in the Prometheus text format (prom-client: OperatorMetrics).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { createProcessRegistry, METRICS_CONTENT_TYPE, metricsText } from '@pmem-csi/runtime';
import { isAccessFailure } from '../kube/api-health.js';
import { WATCH_RESTART_REASONS, type WatchRestarts } from '../kube/informer.js';

export interface OperatorProbe {
  /** Why the operator is not ready; undefined when it is. */
  notReady(): string | undefined;
  /** Prometheus text exposition (version 0.0.4). */
  metrics(): string | Promise<string>;
}

/** Gauges of the control loop, read when /metrics is scraped. */
export interface OperatorGauges {
  readonly queueDepth: number;
  readonly leader: boolean;
  /** Watch restarts of all informers by reason. */
  readonly watchRestarts: WatchRestarts;
  readonly informersSynced: boolean;
  readonly apiAccessFailures: number;
  readonly apiReachable: boolean;
}

export interface OperatorMetricsOptions {
  /** The operator's version (pmem_csi_build_info); default "unknown". */
  readonly version?: string;
  /** Default process metrics (default true). */
  readonly processMetrics?: boolean;
}

/** Buckets of a reconcile: from a no-op (a few list calls) to a slow apply of every object. */
export const RECONCILE_BUCKETS: readonly number[] = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The operator's series on its own prom-client registry (one per operator, so tests running
 * several do not share counters). Names kept from the hand-written exposition before prom-client:
 *   pmem_csi_operator_reconciles_total{result}            reconciles of PmemCSIDeployments: success, error
 *   pmem_csi_operator_reconcile_duration_seconds{result}  how long they took
 *   pmem_csi_operator_queue_depth, _leader, _informers_synced,
 *   pmem_csi_operator_watch_restarts_total{reason}       closed and expired: the apiserver ended the watch (routine);
 *                                                         failed, stalled, relist (kube/informer.ts)
 *   pmem_csi_operator_api_access_failures_total, _api_reachable (see README "Operator status"): requests
 *                                                         that failed; a watch's routine end is none
 *   pmem_csi_operator_api_requests_total{verb,kind,result}  every API request: success,
 *                                                         access_failure (no answer, 401, 403), error (any other refusal)
 * plus pmem_csi_build_info{component="operator"} and the default process metrics.
 */
export class OperatorMetrics {
  readonly registry: Registry;
  readonly #reconciles: Counter<'result'>;
  readonly #reconcileSeconds: Histogram<'result'>;
  readonly #apiRequests: Counter<'verb' | 'kind' | 'result'>;
  readonly #queueDepth: Gauge;
  readonly #leader: Gauge;
  readonly #watchRestarts: Counter<'reason'>;
  readonly #informersSynced: Gauge;
  readonly #apiAccessFailures: Counter;
  readonly #apiReachable: Gauge;

  constructor(options: OperatorMetricsOptions = {}) {
    this.registry = createProcessRegistry({
      component: 'operator',
      version: options.version ?? 'unknown',
      processMetrics: options.processMetrics ?? true,
    });
    const registers = [this.registry];
    this.#reconciles = new Counter({
      name: 'pmem_csi_operator_reconciles_total',
      help: 'Reconciles of PmemCSIDeployments by result.',
      labelNames: ['result'] as const,
      registers,
    });
    this.#reconcileSeconds = new Histogram({
      name: 'pmem_csi_operator_reconcile_duration_seconds',
      help: 'Duration of reconciles of PmemCSIDeployments by result.',
      labelNames: ['result'] as const,
      buckets: [...RECONCILE_BUCKETS],
      registers,
    });
    for (const result of ['success', 'error']) {
      this.#reconciles.inc({ result }, 0);
      this.#reconcileSeconds.zero({ result });
    }
    this.#apiRequests = new Counter({
      name: 'pmem_csi_operator_api_requests_total',
      help: 'Kubernetes API requests of the operator by verb, kind and result (success, access_failure = no answer/401/403, error = any other refusal).',
      labelNames: ['verb', 'kind', 'result'] as const,
      registers,
    });
    this.#queueDepth = new Gauge({
      name: 'pmem_csi_operator_queue_depth',
      help: 'PmemCSIDeployments waiting for a reconcile.',
      registers,
    });
    this.#leader = new Gauge({
      name: 'pmem_csi_operator_leader',
      help: '1 when this replica is the leader.',
      registers,
    });
    this.#watchRestarts = new Counter({
      name: 'pmem_csi_operator_watch_restarts_total',
      help: 'Watches restarted, by reason: closed (the apiserver ended it at its timeout) and expired (410 Gone) are routine; failed (an error), stalled (no event or bookmark for too long), relist (periodic).',
      labelNames: ['reason'] as const,
      registers,
    });
    for (const reason of WATCH_RESTART_REASONS) this.#watchRestarts.inc({ reason }, 0);
    this.#informersSynced = new Gauge({
      name: 'pmem_csi_operator_informers_synced',
      help: '1 when every informer has listed.',
      registers,
    });
    this.#apiAccessFailures = new Counter({
      name: 'pmem_csi_operator_api_access_failures_total',
      help: 'API requests that got no answer or were refused with 401/403 (a watch that the apiserver ends at its timeout or with 410 Gone is not one).',
      registers,
    });
    this.#apiReachable = new Gauge({
      name: 'pmem_csi_operator_api_reachable',
      help: '0 while the operator reports not ready because it cannot reach or act on the API.',
      registers,
    });
  }

  /** Count one reconcile result (the queue's onResult). */
  reconciled(ok: boolean): void {
    this.#reconciles.inc({ result: ok ? 'success' : 'error' });
  }

  /** Run one reconcile and record how long it took. */
  async timeReconcile<T>(reconcile: () => Promise<T>): Promise<T> {
    const end = this.#reconcileSeconds.startTimer();
    try {
      const result = await reconcile();
      end({ result: 'success' });
      return result;
    } catch (e) {
      end({ result: 'error' });
      throw e;
    }
  }

  /** Count one API request ("list DaemonSet", "patch PmemCSIDeployment status"); for ApiHealthOptions.onRequest. */
  readonly apiRequest = (request: string, error?: unknown): void => {
    const space = request.indexOf(' ');
    const verb = space < 0 ? request : request.slice(0, space);
    const kind = space < 0 ? '' : request.slice(space + 1);
    const result = error === undefined ? 'success' : isAccessFailure(error) ? 'access_failure' : 'error';
    this.#apiRequests.inc({ verb, kind, result });
  };

  /** The exposition with the control loop's gauges as they are now. */
  render(gauges: OperatorGauges): Promise<string> {
    this.#queueDepth.set(gauges.queueDepth);
    this.#leader.set(gauges.leader ? 1 : 0);
    this.#informersSynced.set(gauges.informersSynced ? 1 : 0);
    this.#apiReachable.set(gauges.apiReachable ? 1 : 0);
    // Totals kept by the informers and ApiHealth: the counters follow them.
    this.#watchRestarts.reset();
    for (const reason of WATCH_RESTART_REASONS) this.#watchRestarts.inc({ reason }, gauges.watchRestarts[reason]);
    this.#apiAccessFailures.reset();
    this.#apiAccessFailures.inc(gauges.apiAccessFailures);
    return metricsText(this.registry);
  }
}

/** Split "host:port" / ":port" into listen arguments (empty host = all interfaces). */
export function listenAddress(address: string): { host: string | undefined; port: number } {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? undefined : host, port: Number(address.slice(i + 1)) };
}

export async function startHttpServer(
  address: string,
  probe: OperatorProbe,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405).end();
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const problem = probe.notReady();
      res
        .writeHead(problem === undefined ? 200 : 503, { 'content-type': 'text/plain' })
        .end(problem === undefined ? 'ok\n' : `${problem}\n`);
    } else if (path === '/metrics') {
      Promise.resolve(probe.metrics()).then(
        (text) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(text),
        (e: unknown) =>
          res
            .writeHead(503, { 'content-type': 'text/plain' })
            .end(`metrics unavailable: ${e instanceof Error ? e.message : String(e)}\n`),
      );
    } else {
      res.writeHead(404).end();
    }
  });
  const { host, port } = listenAddress(address);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return { server, port: (server.address() as AddressInfo).port };
}
