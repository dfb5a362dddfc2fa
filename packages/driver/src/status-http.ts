// A small HTTP endpoint of the controller: /healthz and /readyz for probes, /status (JSON: nodes,
// capacity, volumes) for the `status` command, /metrics in the Prometheus text format. It exposes
// no secrets and accepts only GET.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ControllerStatus } from '@pmem-csi/controller';

/** Prometheus text exposition of a controller status. */
export function renderMetrics(s: ControllerStatus): string {
  const lines = [
    '# HELP pmem_csi_controller_volumes Volumes known to the controller.',
    '# TYPE pmem_csi_controller_volumes gauge',
    `pmem_csi_controller_volumes ${s.volumes}`,
    '# HELP pmem_csi_controller_node_available Whether a registered node is available (1) or not (0).',
    '# TYPE pmem_csi_controller_node_available gauge',
    ...s.nodes.map((n) => `pmem_csi_controller_node_available{node="${n.nodeId}"} ${n.state === 'available' ? 1 : 0}`),
    '# HELP pmem_csi_controller_node_capacity_bytes Capacity a node reported, by kind.',
    '# TYPE pmem_csi_controller_node_capacity_bytes gauge',
    ...s.nodes.flatMap((n) => (['available', 'maxVolumeSize', 'managed', 'total'] as const)
      .map((k) => `pmem_csi_controller_node_capacity_bytes{node="${n.nodeId}",kind="${k}"} ${n.capacity[k]}`)),
    '# HELP pmem_csi_controller_node_volumes Volumes per node.',
    '# TYPE pmem_csi_controller_node_volumes gauge',
    ...s.nodes.map((n) => `pmem_csi_controller_node_volumes{node="${n.nodeId}"} ${n.volumes}`),
  ];
  return `${lines.join('\n')}\n`;
}

export interface StatusServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Serve the endpoints on host:port (port 0 = any free port). */
export function serveStatus(listen: string, status: () => ControllerStatus): Promise<StatusServer> {
  const i = listen.lastIndexOf(':');
  const host = listen.slice(0, i).replace(/^\[|\]$/g, '');
  const port = Number(listen.slice(i + 1));
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (code: number, type: string, body: string): void => {
      res.writeHead(code, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET') return send(405, 'text/plain', 'only GET\n');
    if (path === '/healthz' || path === '/readyz') return send(200, 'text/plain', 'ok\n');
    if (path === '/status') return send(200, 'application/json', `${JSON.stringify(status(), null, 2)}\n`);
    if (path === '/metrics') return send(200, 'text/plain; version=0.0.4', renderMetrics(status()));
    return send(404, 'text/plain', 'endpoints: /healthz /readyz /status /metrics\n');
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
