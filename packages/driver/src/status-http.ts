// A small HTTP endpoint of the controller or of a node: /healthz and /readyz for probes, /status
// (JSON; the controller: nodes, capacity, volumes, for the `status` command; a node: registration,
// capacity, volumes) and /metrics in the Prometheus text format (the process's prom-client
// registry: runtime/metrics, controller/src/metrics.ts, node/src/metrics.ts). It exposes no secrets
// and accepts only GET.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { METRICS_CONTENT_TYPE, metricsText } from '@pmem-csi/runtime';
import type { ControllerStatus } from '@pmem-csi/controller';
import type { NodeStatus } from '@pmem-csi/node';

// Not `import ... from 'node:http'`: an ES module import of node:http builds its ES module facade,
// which reads every export, and the WebSocket/CloseEvent/MessageEvent getters among them load
// Node.js's fetch implementation (undici): a measurable part of every driver's start
// (e2e/bench/README.md, "Start-up: what each change did") for a server that never touches them.
// getBuiltinModule hands over the CommonJS exports as they are.
const { createServer } = process.getBuiltinModule('node:http');

/** A process's prom-client registry (runtime createProcessRegistry). */
type Registry = Parameters<typeof metricsText>[0];

export interface StatusServer {
  readonly url: string;
  close(): Promise<void>;
}

/** What one process serves: JSON for /status, Prometheus text for /metrics. */
export interface StatusSource {
  status(): unknown;
  metrics(): string | Promise<string>;
}

/** The controller's endpoints: its status, and its process registry (series of controller/src/metrics.ts). */
export function controllerStatusSource(controller: {
  status(): ControllerStatus;
  readonly metrics: Registry;
}): StatusSource {
  return { status: () => controller.status(), metrics: () => metricsText(controller.metrics) };
}

/** A node's endpoints (the status reads the device manager, so it is asynchronous; series of node/src/metrics.ts). */
export function nodeStatusSource(node: { status(): Promise<NodeStatus>; readonly metrics: Registry }): StatusSource {
  return { status: () => node.status(), metrics: () => metricsText(node.metrics) };
}

/** Serve the endpoints on host:port (port 0 = any free port). */
export function serveStatus(listen: string, source: StatusSource): Promise<StatusServer> {
  const i = listen.lastIndexOf(':');
  const host = listen.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(listen.slice(i + 1));
  const handle = async (method: string | undefined, path: string | undefined): Promise<[number, string, string]> => {
    if (method !== 'GET') return [405, 'text/plain', 'only GET\n'];
    if (path === '/healthz' || path === '/readyz') return [200, 'text/plain', 'ok\n'];
    if (path === '/status') return [200, 'application/json', `${JSON.stringify(await source.status(), null, 2)}\n`];
    if (path === '/metrics') return [200, METRICS_CONTENT_TYPE, await source.metrics()];
    return [404, 'text/plain', 'endpoints: /healthz /readyz /status /metrics\n'];
  };
  const server: Server = createServer((req, res) => {
    const send = ([code, type, body]: [number, string, string]): void => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    handle(req.method, (req.url ?? '/').split('?')[0]).then(send, (e: unknown) => {
      send([503, 'text/plain', `status unavailable: ${e instanceof Error ? e.message : String(e)}\n`]);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const a = server.address() as AddressInfo;
      const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
      resolve({
        url: `http://${h}:${a.port}`,
        close: () => new Promise((r) => server.close(() => r())),
      });
    });
  });
}
