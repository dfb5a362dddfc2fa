// The real node's host network: one Linux bridge that is the pods' network (CNI "bridge" plugin,
// host-local addresses) and whose gateway address is the node's own address. Nothing of the
// real-node tier listens on 0.0.0.0: the kubelet, CoreDNS and the API server forwarder bind the
// gateway address (reachable from this machine and its pods only), everything else 127.0.0.1.
// The API server itself stays on 127.0.0.1; pods reach it through the `kubernetes` Service, whose
// endpoint is the gateway address, and a TCP forwarder from there to 127.0.0.1 (the endpoint may
// not be a loopback address, and a DNAT to 127.0.0.1 would need route_localnet on the bridge).
import { readFile, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { PodNetworkAccess } from '../cluster/harness.js';
import { runTool } from '../cluster/processes.js';

export interface NodeNetwork extends PodNetworkAccess {
  readonly bridge: string;
  /** The pods' subnet (CIDR) on the bridge. */
  readonly podCidr: string;
  /** The first address handed to a pod. */
  readonly podRangeStart: string;
  /** The node's address = the bridge's gateway = cluster DNS address. */
  readonly nodeIp: string;
}

/** One real node per machine at a time: fixed names and a private range no host route uses here. */
export const NODE_NETWORK: NodeNetwork = {
  bridge: 'pmemcsi0',
  podCidr: '10.89.0.0/24',
  podRangeStart: '10.89.0.10',
  nodeIp: '10.89.0.1',
  advertiseAddress: '10.89.0.1',
  serviceCidr: '10.96.0.0/24',
  serviceIp: '10.96.0.1',
};

const IP = 'ip';
const SYSCTLS: Readonly<Record<string, string>> = {
  // Pods' packets leave the bridge for Service addresses (kube-proxy's DNAT) and the gateway.
  'net/ipv4/ip_forward': '1',
  // kube-proxy's iptables rules must see bridged traffic (a pod calling a Service on this node).
  'net/bridge/bridge-nf-call-iptables': '1',
};

async function linkExists(name: string): Promise<boolean> {
  const { code } = await runTool(IP, ['link', 'show', 'dev', name], { okCodes: [0, 1], timeoutMs: 10_000 });
  return code === 0;
}

/** The bridge with the gateway address, up; fails naming what is missing. Returns sysctls to restore. */
export async function setUpNetwork(net: NodeNetwork = NODE_NETWORK): Promise<Record<string, string>> {
  if (!(await linkExists(net.bridge)))
    await runTool(IP, ['link', 'add', net.bridge, 'type', 'bridge'], { timeoutMs: 10_000 });
  const prefix = net.podCidr.split('/')[1] ?? '24';
  const { stdout } = await runTool(IP, ['-4', '-o', 'addr', 'show', 'dev', net.bridge], { timeoutMs: 10_000 });
  if (!stdout.includes(` ${net.nodeIp}/`))
    await runTool(IP, ['addr', 'add', `${net.nodeIp}/${prefix}`, 'dev', net.bridge], { timeoutMs: 10_000 });
  await runTool(IP, ['link', 'set', net.bridge, 'up'], { timeoutMs: 10_000 });
  const previous: Record<string, string> = {};
  for (const [key, value] of Object.entries(SYSCTLS)) {
    const file = `/proc/sys/${key}`;
    try {
      previous[key] = (await readFile(file, 'utf8')).trim();
    } catch (e) {
      throw new Error(
        `the real node needs ${file} (${(e as Error).message})${key.startsWith('net/bridge') ? '; load the br_netfilter kernel module' : ''}`,
      );
    }
    if (previous[key] !== value) await writeFile(file, value);
  }
  return previous;
}

/** Remove the bridge and restore the sysctls; idempotent. */
export async function tearDownNetwork(
  previous: Readonly<Record<string, string>>,
  net: NodeNetwork = NODE_NETWORK,
): Promise<void> {
  if (await linkExists(net.bridge)) await runTool(IP, ['link', 'del', net.bridge], { timeoutMs: 10_000 });
  for (const [key, value] of Object.entries(previous))
    await writeFile(`/proc/sys/${key}`, value).catch(() => undefined);
}

/** A plain TCP forwarder (TLS passes through untouched) from `listen` to `target`. */
export async function startForwarder(
  listen: { host: string; port: number },
  target: { host: string; port: number },
): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
    }
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(new Error(`forwarder ${listen.host}:${listen.port} -> ${target.host}:${target.port}: ${e.message}`)),
    );
    server.listen(listen.port, listen.host, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
