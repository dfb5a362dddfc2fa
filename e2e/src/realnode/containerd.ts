// containerd (Debian's 1.6) for the real node, with its own root, state, socket and CNI
// configuration under the node's directory, so it shares nothing with any other containerd on the
// machine. runc without systemd cgroups (cgroup v1 here; crun refuses the hybrid hierarchy), the
// sandbox image is our pause image. Images come from archives we import, or are pulled from the
// registries a test names (a local registry on 127.0.0.1 with its own CA: certs.d/<host>/hosts.toml,
// the CRI plugin's config_path); nothing else is reachable.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTool, startHostProcess, tail, type HostProcess } from '../cluster/processes.js';
import { waitFor } from '../cluster/wait.js';
import type { NodeNetwork } from './network.js';

/** The namespace of the CRI plugin: what the kubelet sees. */
export const CRI_NAMESPACE = 'k8s.io';
const CNI_BIN_DIR = '/usr/lib/cni';
/** The CNI plugins the pods' network uses (cniConfig, and containerd's own loopback). */
const CNI_PLUGINS = ['bridge', 'host-local', 'loopback'] as const;

export interface ContainerdPaths {
  readonly dir: string;
  readonly socket: string;
  readonly config: string;
  readonly cniConfDir: string;
  /** The CRI plugin's registry host directory (config_path): <host:port>/hosts.toml each. */
  readonly hostsDir: string;
}

/** A registry the node pulls from: host:port, over TLS with the certificate authority in caFile. */
export interface PullRegistry {
  readonly host: string;
  readonly caFile: string;
}

export function containerdPaths(nodeDir: string): ContainerdPaths {
  const dir = join(nodeDir, 'containerd');
  return {
    dir,
    socket: join(dir, 'containerd.sock'),
    config: join(dir, 'config.toml'),
    cniConfDir: join(dir, 'cni', 'net.d'),
    hostsDir: join(dir, 'certs.d'),
  };
}

export function containerdConfig(paths: ContainerdPaths, sandboxImage: string): string {
  return `version = 2
root = "${join(paths.dir, 'root')}"
state = "${join(paths.dir, 'state')}"
# Only what a CRI node needs (the other snapshotters probe for tools and filesystems we lack).
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "${paths.socket}"
[ttrpc]
  address = "${paths.socket}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${sandboxImage}"
  enable_selinux = false
  # Containers may not lower their oom_score_adj below containerd's own: this machine refuses any
  # lowering ("failed to update /proc/self/oom_score_adj: Permission denied" in runc), and the
  # kubelet asks for -998 for every pod sandbox.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${paths.cniConfDir}"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${paths.hostsDir}"
`;
}

/** hosts.toml of a registry: pull and resolve from it over TLS, trusting its CA only (no fall-back). */
export function registryHostsToml(r: PullRegistry): string {
  return `server = "https://${r.host}"

[host."https://${r.host}"]
  capabilities = ["pull", "resolve"]
  ca = ${JSON.stringify(r.caFile)}
`;
}

/** The pods' network: the node bridge, addresses from the pod range, routed through the gateway. */
export function cniConfig(net: NodeNetwork, ipamDir: string): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'pmem-csi-e2e',
      plugins: [
        {
          type: 'bridge',
          bridge: net.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: net.podCidr, rangeStart: net.podRangeStart, gateway: net.nodeIp }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: ipamDir,
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

export interface Containerd {
  readonly paths: ContainerdPaths;
  readonly process: HostProcess;
  ctr(args: readonly string[], timeoutMs?: number): Promise<string>;
  /** Import image archives (docker-archive or oci-archive) into the CRI namespace. */
  importImages(archives: readonly string[]): Promise<void>;
  /**
   * SIGKILL the running container `container` of pod `pod` (found by the labels the kubelet gives
   * it), as a crash would end it; the kubelet then restarts it. Returns the container's id and when
   * the signal was sent (finding the container takes a ctr call per task: up to a second or two).
   */
  killContainer(pod: string, container: string): Promise<{ id: string; killedAt: number }>;
  /** Kill and remove every task and container of the CRI namespace (teardown after the kubelet stopped). */
  removeAll(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startContainerd(
  nodeDir: string,
  net: NodeNetwork,
  o: { sandboxImage: string; logFile: string; registries?: readonly PullRegistry[] },
): Promise<Containerd> {
  const { sandboxImage, logFile, registries = [] } = o;
  const missing = CNI_PLUGINS.filter((p) => !existsSync(join(CNI_BIN_DIR, p)));
  if (missing.length > 0)
    throw new Error(
      `the real node's pod network needs the CNI plugins ${missing.join(', ')} in ${CNI_BIN_DIR} (Debian package containernetworking-plugins; e2e/tools/images.sh installs it as root)`,
    );
  const paths = containerdPaths(nodeDir);
  await mkdir(paths.cniConfDir, { recursive: true });
  await mkdir(paths.hostsDir, { recursive: true });
  for (const r of registries) {
    if (!/^[A-Za-z0-9.-]+:\d{1,5}$/.test(r.host))
      throw new Error(
        `registry host ${JSON.stringify(r.host)}: expected HOST:PORT (the hosts directory is named after it)`,
      );
    await mkdir(join(paths.hostsDir, r.host), { recursive: true });
    await writeFile(join(paths.hostsDir, r.host, 'hosts.toml'), registryHostsToml(r));
  }
  await writeFile(paths.config, containerdConfig(paths, sandboxImage));
  await writeFile(join(paths.cniConfDir, '10-pmem-csi-e2e.conflist'), cniConfig(net, join(paths.dir, 'cni', 'ipam')));
  const proc = startHostProcess('containerd', 'containerd', ['--config', paths.config], { logFile });
  const ctr = async (args: readonly string[], timeoutMs = 60_000): Promise<string> =>
    (await runTool('ctr', ['--address', paths.socket, '--namespace', CRI_NAMESPACE, ...args], { timeoutMs })).stdout;
  await waitFor(
    `containerd to answer on ${paths.socket} (log: ${logFile})`,
    async () => {
      const exited = proc.exited();
      if (exited !== undefined) throw new Error(`containerd exited (${exited}):\n${tail(proc.log())}`);
      await ctr(['version'], 5000);
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );
  return {
    paths,
    process: proc,
    ctr,
    importImages: async (archives) => {
      for (const archive of archives) await ctr(['images', 'import', archive], 300_000);
    },
    killContainer: async (pod, container) => {
      const running = (await ctr(['tasks', 'list', '--quiet'])).split('\n').filter((l) => l.trim() !== '');
      const found: string[] = [];
      for (const id of running) {
        const info = JSON.parse(await ctr(['containers', 'info', id])) as { Labels?: Record<string, string> };
        if (
          info.Labels?.['io.kubernetes.container.name'] === container &&
          info.Labels['io.kubernetes.pod.name'] === pod
        )
          found.push(id);
      }
      if (found.length !== 1 || found[0] === undefined)
        throw new Error(
          `expected one running container ${container} of pod ${pod}, found ${found.length} among ${running.length} tasks`,
        );
      const killedAt = Date.now();
      await ctr(['tasks', 'kill', '--signal', 'SIGKILL', found[0]]);
      return { id: found[0], killedAt };
    },
    removeAll: async () => {
      const removed: string[] = [];
      const tasks = (await ctr(['tasks', 'list', '--quiet'])).split('\n').filter((l) => l.trim() !== '');
      for (const id of tasks) {
        await ctr(['tasks', 'kill', '--signal', 'SIGKILL', id]).catch(() => undefined);
        await waitFor(
          `task ${id} to stop after SIGKILL`,
          async () =>
            await ctr(['tasks', 'delete', id]).then(
              () => true,
              () => undefined,
            ),
          { timeoutMs: 20_000, intervalMs: 300 },
        ).catch(() => undefined);
      }
      for (const id of (await ctr(['containers', 'list', '--quiet'])).split('\n').filter((l) => l.trim() !== '')) {
        await ctr(['containers', 'delete', id]);
        removed.push(id);
      }
      return removed;
    },
    stop: () => proc.stop(),
  };
}
