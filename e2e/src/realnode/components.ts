// The node agents of the real node, as host processes built by e2e/tools/bootstrap.sh: the kubelet
// (same release as the control plane), kube-proxy (iptables mode, for Service addresses) and
// CoreDNS (cluster DNS: the node driver finds the registry by its Service name). Their
// configuration files are written here, in full, so that every setting this tier depends on is
// visible in one place.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KwokCluster } from '../cluster/harness.js';
import { runTool, startHostProcess, tail, type HostProcess } from '../cluster/processes.js';
import { waitFor } from '../cluster/wait.js';
import { toolPath } from '../tools.js';
import type { NodeNetwork } from './network.js';

export const CLUSTER_DOMAIN = 'cluster.local';
/** The pods' container logs, in the node's directory (copied to the log directory at the end, removed with the node). */
export const POD_LOGS_SUBDIR = 'pod-logs';
export const KUBELET_HEALTHZ = { host: '127.0.0.1', port: 10248 };
const KUBE_PROXY_HEALTHZ = { host: '127.0.0.1', port: 10256 };

export interface KubeletOptions {
  readonly nodeName: string;
  readonly rootDir: string;
  /** The node's directory: the pods' container logs go to <nodeDir>/pod-logs. */
  readonly nodeDir: string;
  readonly containerdSocket: string;
  readonly labels: Readonly<Record<string, string>>;
}

export function kubeletConfig(cluster: KwokCluster, net: NodeNetwork, o: KubeletOptions): string {
  const caFile = join(cluster.dir, 'kwok', 'clusters', cluster.name, 'pki', 'ca.crt');
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The API server reaches the kubelet (logs, exec) on the node's address; health on loopback only.
address: ${net.nodeIp}
port: 10250
readOnlyPort: 0
healthzBindAddress: ${KUBELET_HEALTHZ.host}
healthzPort: ${KUBELET_HEALTHZ.port}
# cgroup v1 ("hybrid") without systemd managing the node's cgroups.
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://${o.containerdSocket}
clusterDNS: ["${net.nodeIp}"]
clusterDomain: ${CLUSTER_DOMAIN}
resolvConf: /etc/resolv.conf
failSwapOn: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: ${caFile}}
authorization: {mode: AlwaysAllow}
# A test machine's disk is shared with everything else: never evict our pods or delete our images
# (they cannot be pulled again; no registry is reachable).
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 50
podPidsLimit: 4096
# Container logs with the node, not in the machine's /var/log/pods.
podLogsDir: ${join(o.nodeDir, POD_LOGS_SUBDIR)}
# Faster reactions than a production node's defaults (the scenarios wait on them).
syncFrequency: 10s
fileCheckFrequency: 10s
nodeStatusUpdateFrequency: 5s
`;
}

export function kubeProxyConfig(kubeconfig: string, net: NodeNetwork, nodeName: string): string {
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: ${kubeconfig}}
hostnameOverride: ${nodeName}
bindAddress: 127.0.0.1
healthzBindAddress: ${KUBE_PROXY_HEALTHZ.host}:${KUBE_PROXY_HEALTHZ.port}
metricsBindAddress: 127.0.0.1:10249
mode: iptables
clusterCIDR: ${net.podCidr}
# Leave the machine's conntrack limits and timeouts alone (0 = do not change them).
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
# NodePorts only on the node's own address, never on the machine's other interfaces.
nodePortAddresses: ["${net.podCidr}"]
`;
}

export function corefile(kubeconfig: string, net: NodeNetwork): string {
  return `.:53 {
    bind ${net.nodeIp}
    errors
    health 127.0.0.1:18080
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig}
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 5
}
`;
}

async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

/** Where the node's agents write their configuration and logs, and what they join. */
export interface AgentContext {
  readonly cluster: KwokCluster;
  readonly net: NodeNetwork;
  /** The node's directory (configuration files). */
  readonly dir: string;
  readonly logDir: string;
}

interface Agent {
  readonly name: string;
  readonly bin: string;
  readonly args: readonly string[];
  readonly healthUrl: string;
  readonly timeoutMs: number;
}

async function startAndWait(ctx: AgentContext, { name, bin, args, healthUrl, timeoutMs }: Agent): Promise<HostProcess> {
  const logFile = join(ctx.logDir, `${name}.log`);
  const proc = startHostProcess(name, bin, args, { logFile });
  await waitFor(
    `${name} to answer ${healthUrl} (log: ${logFile})`,
    async () => {
      const exited = proc.exited();
      if (exited !== undefined) throw new Error(`${name} exited (${exited}):\n${tail(proc.log())}`);
      return (await healthy(healthUrl)) ? true : undefined;
    },
    { timeoutMs, intervalMs: 300 },
  );
  return proc;
}

export async function startCoreDns(ctx: AgentContext): Promise<HostProcess> {
  const file = join(ctx.dir, 'Corefile');
  await writeFile(file, corefile(ctx.cluster.kubeconfig, ctx.net));
  return startAndWait(ctx, {
    name: 'coredns',
    bin: toolPath('coredns'),
    args: ['-conf', file],
    healthUrl: 'http://127.0.0.1:18080/health',
    timeoutMs: 60_000,
  });
}

export async function startKubeProxy(ctx: AgentContext, nodeName: string): Promise<HostProcess> {
  const file = join(ctx.dir, 'kube-proxy.yaml');
  await writeFile(file, kubeProxyConfig(ctx.cluster.kubeconfig, ctx.net, nodeName));
  const healthUrl = `http://${KUBE_PROXY_HEALTHZ.host}:${KUBE_PROXY_HEALTHZ.port}/healthz`;
  return startAndWait(ctx, {
    name: 'kube-proxy',
    bin: toolPath('kube-proxy'),
    args: ['--config', file],
    healthUrl,
    timeoutMs: 60_000,
  });
}

/** Remove kube-proxy's iptables rules (after it stopped). */
export async function cleanUpKubeProxy(): Promise<void> {
  await runTool(toolPath('kube-proxy'), ['--cleanup'], { timeoutMs: 60_000 });
}

export async function startKubelet(ctx: AgentContext, o: KubeletOptions): Promise<HostProcess> {
  const file = join(ctx.dir, 'kubelet.yaml');
  await writeFile(file, kubeletConfig(ctx.cluster, ctx.net, o));
  const labels = Object.entries(o.labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const args = [
    '--config',
    file,
    '--kubeconfig',
    ctx.cluster.kubeconfig,
    '--hostname-override',
    o.nodeName,
    '--node-ip',
    ctx.net.nodeIp,
    '--root-dir',
    o.rootDir,
    ...(labels === '' ? [] : ['--node-labels', labels]),
  ];
  const healthUrl = `http://${KUBELET_HEALTHZ.host}:${KUBELET_HEALTHZ.port}/healthz`;
  return startAndWait(ctx, { name: 'kubelet', bin: toolPath('kubelet'), args, healthUrl, timeoutMs: 90_000 });
}
