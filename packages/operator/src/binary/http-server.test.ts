import { describe, expect, it } from '@jest/globals';
import type { Server } from 'node:http';
import { ApiHealth } from '../kube/api-health.js';
import { systemClock } from '../clock.js';
import { OperatorMetrics, startHttpServer, type OperatorGauges } from './http-server.js';
import { KubeApiError } from '../kube/kube-errors.js';

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const gauges: OperatorGauges = {
  queueDepth: 2,
  leader: true,
  watchRestarts: { closed: 3, expired: 1, failed: 0, stalled: 0, relist: 0 },
  informersSynced: true,
  apiAccessFailures: 0,
  apiReachable: true,
};

describe('the operator /metrics endpoint (prom-client)', () => {
  it('serves the documented series, and they move with reconciles and API requests', async () => {
    const metrics = new OperatorMetrics({ version: '1.2.3' });
    const health = new ApiHealth({ clock: systemClock, onRequest: metrics.apiRequest });
    let current = gauges;
    const { server, port } = await startHttpServer('127.0.0.1:0', {
      notReady: () => undefined,
      metrics: () => metrics.render({ ...current, apiAccessFailures: health.failuresTotal }),
    });
    const scrape = async (): Promise<{ type: string; text: string }> => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      return { type: res.headers.get('content-type') ?? '', text: await res.text() };
    };
    try {
      const first = await scrape();
      expect(first.type).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(
        sample(
          first.text,
          `pmem_csi_build_info{component="operator",version="1.2.3",node_version="${process.version}"}`,
        ),
      ).toBe(1);
      expect(sample(first.text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      expect(sample(first.text, 'pmem_csi_operator_reconciles_total{result="success"}')).toBe(0);
      expect(sample(first.text, 'pmem_csi_operator_reconciles_total{result="error"}')).toBe(0);
      expect(sample(first.text, 'pmem_csi_operator_queue_depth')).toBe(2);
      expect(sample(first.text, 'pmem_csi_operator_leader')).toBe(1);
      expect(sample(first.text, 'pmem_csi_operator_watch_restarts_total{reason="closed"}')).toBe(3);
      expect(sample(first.text, 'pmem_csi_operator_watch_restarts_total{reason="expired"}')).toBe(1);
      // Every reason is exposed from the start, so that rate() and increase() see the first restart.
      expect(sample(first.text, 'pmem_csi_operator_watch_restarts_total{reason="failed"}')).toBe(0);
      expect(sample(first.text, 'pmem_csi_operator_watch_restarts_total{reason="stalled"}')).toBe(0);
      expect(sample(first.text, 'pmem_csi_operator_watch_restarts_total{reason="relist"}')).toBe(0);
      expect(sample(first.text, 'pmem_csi_operator_api_access_failures_total')).toBe(0);
      expect(sample(first.text, 'pmem_csi_operator_api_reachable')).toBe(1);

      // Two reconciles, one failing; three API requests: one fine, one unanswered, one 409.
      await metrics.timeReconcile(async () => new Promise((r) => setTimeout(r, 20)));
      metrics.reconciled(true);
      await expect(
        metrics.timeReconcile(async () => {
          throw new Error('apply failed');
        }),
      ).rejects.toThrow('apply failed');
      metrics.reconciled(false);
      health.record('list DaemonSet');
      health.record('apply Deployment', new KubeApiError(0, 'connect ECONNREFUSED'));
      health.record('patch PmemCSIDeployment status', new KubeApiError(409, 'conflict'));
      current = {
        ...gauges,
        queueDepth: 0,
        leader: false,
        watchRestarts: { ...gauges.watchRestarts, closed: 4 },
        apiReachable: false,
      };

      const { text } = await scrape();
      expect(sample(text, 'pmem_csi_operator_reconciles_total{result="success"}')).toBe(1);
      expect(sample(text, 'pmem_csi_operator_reconciles_total{result="error"}')).toBe(1);
      expect(sample(text, 'pmem_csi_operator_reconcile_duration_seconds_count{result="success"}')).toBe(1);
      expect(sample(text, 'pmem_csi_operator_reconcile_duration_seconds_count{result="error"}')).toBe(1);
      expect(sample(text, 'pmem_csi_operator_reconcile_duration_seconds_sum{result="success"}')).toBeGreaterThanOrEqual(
        0.015,
      );
      expect(sample(text, 'pmem_csi_operator_api_requests_total{verb="list",kind="DaemonSet",result="success"}')).toBe(
        1,
      );
      expect(
        sample(text, 'pmem_csi_operator_api_requests_total{verb="apply",kind="Deployment",result="access_failure"}'),
      ).toBe(1);
      expect(
        sample(
          text,
          'pmem_csi_operator_api_requests_total{verb="patch",kind="PmemCSIDeployment status",result="error"}',
        ),
      ).toBe(1);
      expect(sample(text, 'pmem_csi_operator_api_access_failures_total')).toBe(1);
      expect(sample(text, 'pmem_csi_operator_queue_depth')).toBe(0);
      expect(sample(text, 'pmem_csi_operator_leader')).toBe(0);
      expect(sample(text, 'pmem_csi_operator_watch_restarts_total{reason="closed"}')).toBe(4);
      expect(sample(text, 'pmem_csi_operator_watch_restarts_total{reason="expired"}')).toBe(1);
      expect(sample(text, 'pmem_csi_operator_api_reachable')).toBe(0);
    } finally {
      await new Promise<void>((r) => (server as Server).close(() => r()));
    }
  });

  it('a failing exposition answers 503 with the reason', async () => {
    const { server, port } = await startHttpServer('127.0.0.1:0', {
      notReady: () => undefined,
      metrics: () => Promise.reject(new Error('collector broke')),
    });
    try {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(503);
      expect(await res.text()).toBe('metrics unavailable: collector broke\n');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('two operators in one process do not share counters', async () => {
    const a = new OperatorMetrics({ processMetrics: false });
    const b = new OperatorMetrics({ processMetrics: false });
    a.reconciled(true);
    expect(sample(await a.render(gauges), 'pmem_csi_operator_reconciles_total{result="success"}')).toBe(1);
    expect(sample(await b.render(gauges), 'pmem_csi_operator_reconciles_total{result="success"}')).toBe(0);
  });
});
