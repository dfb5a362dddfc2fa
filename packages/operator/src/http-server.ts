// The operator's small HTTP endpoint: /healthz (the process serves), /readyz (200 "ok" when ready,
// else 503 with the reason as text: informers not synced yet, or the Kubernetes API unreachable or
// refusing the operator's credentials, api-health.ts; a standby replica waiting for leadership
// counts as ready as long as it reaches the API, or a rolling update of a two-replica operator
// would never finish) and /metrics in the Prometheus text format.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OperatorProbe {
  /** Why the operator is not ready; undefined when it is. */
  notReady(): string | undefined;
  /** Prometheus text exposition (version 0.0.4). */
  metrics(): string;
}

/** Counters of the control loop, rendered for /metrics. */
export class OperatorMetrics {
  reconcileSuccess = 0;
  reconcileErrors = 0;

  render(gauges: { queueDepth: number; leader: boolean; watchRestarts: number; informersSynced: boolean; apiAccessFailures: number; apiReachable: boolean }): string {
    const lines = [
      '# HELP pmem_csi_operator_reconciles_total Reconciles of PmemCSIDeployments by result.',
      '# TYPE pmem_csi_operator_reconciles_total counter',
      `pmem_csi_operator_reconciles_total{result="success"} ${this.reconcileSuccess}`,
      `pmem_csi_operator_reconciles_total{result="error"} ${this.reconcileErrors}`,
      '# HELP pmem_csi_operator_queue_depth PmemCSIDeployments waiting for a reconcile.',
      '# TYPE pmem_csi_operator_queue_depth gauge',
      `pmem_csi_operator_queue_depth ${gauges.queueDepth}`,
      '# HELP pmem_csi_operator_leader 1 when this replica is the leader.',
      '# TYPE pmem_csi_operator_leader gauge',
      `pmem_csi_operator_leader ${gauges.leader ? 1 : 0}`,
      '# HELP pmem_csi_operator_watch_restarts_total Watches restarted after an error, a stall or a relist.',
      '# TYPE pmem_csi_operator_watch_restarts_total counter',
      `pmem_csi_operator_watch_restarts_total ${gauges.watchRestarts}`,
      '# HELP pmem_csi_operator_informers_synced 1 when every informer has listed.',
      '# TYPE pmem_csi_operator_informers_synced gauge',
      `pmem_csi_operator_informers_synced ${gauges.informersSynced ? 1 : 0}`,
      '# HELP pmem_csi_operator_api_access_failures_total API requests that got no answer or were refused with 401/403.',
      '# TYPE pmem_csi_operator_api_access_failures_total counter',
      `pmem_csi_operator_api_access_failures_total ${gauges.apiAccessFailures}`,
      '# HELP pmem_csi_operator_api_reachable 0 while the operator reports not ready because it cannot reach or act on the API.',
      '# TYPE pmem_csi_operator_api_reachable gauge',
      `pmem_csi_operator_api_reachable ${gauges.apiReachable ? 1 : 0}`,
    ];
    return `${lines.join('\n')}\n`;
  }
}

/** Split "host:port" / ":port" into listen arguments (empty host = all interfaces). */
export function listenAddress(address: string): { host: string | undefined; port: number } {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? undefined : host, port: Number(address.slice(i + 1)) };
}

export async function startHttpServer(address: string, probe: OperatorProbe): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405).end();
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const problem = probe.notReady();
      res.writeHead(problem === undefined ? 200 : 503, { 'content-type': 'text/plain' }).end(problem === undefined ? 'ok\n' : `${problem}\n`);
    } else if (path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(probe.metrics());
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
