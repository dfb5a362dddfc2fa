// A small HTTP endpoint of the controller or of a node: /healthz and /readyz for probes, /status
// (JSON; the controller: nodes, capacity, volumes, for the `status` command; a node: registration,
// capacity, volumes) and /metrics in the Prometheus text format. It exposes no secrets and accepts
// only GET.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ControllerStatus } from '@pmem-csi/controller';
import type { NodeStatus } from '@pmem-csi/node';

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

/** What one process serves: JSON for /status, Prometheus text for /metrics. */
export interface StatusSource {
  status(): unknown;
  metrics(): string | Promise<string>;
}

/** The controller's endpoints. */
export function controllerStatusSource(status: () => ControllerStatus): StatusSource {
  return { status, metrics: () => renderMetrics(status()) };
}

/** A node's endpoints (the status reads the device manager, so it is asynchronous). */
export function nodeStatusSource(status: () => Promise<NodeStatus>): StatusSource {
  return { status, metrics: async () => renderNodeMetrics(await status()) };
}

/** Prometheus text exposition of a node status. */
export function renderNodeMetrics(s: NodeStatus): string {
  const node = `node="${s.nodeId}"`;
  const reg = s.registration;
  const lines = [
    '# HELP pmem_csi_node_registered Whether this node is registered with the controller (1) or not (0); absent without a registry.',
    '# TYPE pmem_csi_node_registered gauge',
    ...(reg ? [`pmem_csi_node_registered{${node}} ${reg.registered ? 1 : 0}`] : []),
    '# HELP pmem_csi_node_registrations_total Successful registrations with the controller (re-registrations included).',
    '# TYPE pmem_csi_node_registrations_total counter',
    ...(reg ? [`pmem_csi_node_registrations_total{${node}} ${reg.registrations}`] : []),
    '# HELP pmem_csi_node_capacity_bytes PMEM of this node, by kind.',
    '# TYPE pmem_csi_node_capacity_bytes gauge',
    ...(['available', 'maxVolumeSize', 'managed', 'total'] as const).map((k) => `pmem_csi_node_capacity_bytes{${node},kind="${k}"} ${s.capacity[k]}`),
    '# HELP pmem_csi_node_volumes Volumes on this node, by kind.',
    '# TYPE pmem_csi_node_volumes gauge',
    `pmem_csi_node_volumes{${node},kind="persistent"} ${s.volumes.persistent}`,
    `pmem_csi_node_volumes{${node},kind="ephemeral"} ${s.volumes.ephemeral}`,
  ];
  return `${lines.join('\n')}\n`;
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
    if (path === '/metrics') return [200, 'text/plain; version=0.0.4', await source.metrics()];
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
