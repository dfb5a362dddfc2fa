// A real Kubernetes node on this machine for the real-node tier: containerd + runc, the kubelet,
// kube-proxy and CoreDNS as host processes, joined to a cluster tier control plane (e2e/src/cluster)
// that was created with pod network access (NODE_NETWORK). Images come from archives (no
// registry). Started and torn down by the harness; the teardown leaves no mounts, loop devices,
// containers, network devices, iptables chains or processes behind, even when a test failed, and
// reports anything it could not remove (the tests assert that report is empty).
// One real node per machine at a time (fixed bridge name and ports): a lock file says whose it is,
// and a later run removes what a dead run left behind.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { cp, mkdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileIdentity, listLoopDevices, type LoopDevice } from '@pmem-csi/node';
import { HostRunner } from '@pmem-csi/runtime';
import { pidAlive, type KwokCluster } from '../cluster/harness.js';
import type { KubeObject } from '../cluster/kube.js';
import { runTool, type HostProcess } from '../cluster/processes.js';
import { waitFor } from '../cluster/wait.js';
import { POD_LOGS_SUBDIR, cleanUpKubeProxy, startCoreDns, startKubelet, startKubeProxy } from './components.js';
import { startContainerd, type Containerd, type PullRegistry } from './containerd.js';
import { NODE_NETWORK, setUpNetwork, startForwarder, tearDownNetwork } from './network.js';

/** The nodes' own directories (containerd, configuration, pod logs) and the lock file. */
export const REAL_NODE_BASE = join(tmpdir(), 'pmem-rn');
const LOCK_FILE = join(REAL_NODE_BASE, 'owner.pid');
export const REAL_NODE_NAME = 'pmem-real-0';
/**
 * Where the kubelet keeps its pods, plugins and registration sockets: the kubelet's default, which
 * the chart, the kustomize bases and the CRD assume (spec.kubeletDir), so every install path runs
 * unchanged. The node refuses to start when the directory exists and is not its own.
 */
export const KUBELET_DIR = '/var/lib/kubelet';

export interface RealNodeOptions {
  readonly cluster: KwokCluster;
  /** Image archives to import (docker-archive or oci-archive). */
  readonly imageArchives: readonly string[];
  /** The pod sandbox image (must be among the archives). */
  readonly sandboxImage: string;
  /** Registries containerd may pull from (kubelet's pulls), each with its CA. */
  readonly registries?: readonly PullRegistry[];
  readonly nodeName?: string;
  readonly labels?: Readonly<Record<string, string>>;
}

export interface RealNode {
  readonly name: string;
  readonly dir: string;
  readonly logDir: string;
  /** The kubelet's root directory: the driver's spec.kubeletDir / Helm kubeletDir. */
  readonly kubeletDir: string;
  readonly containerd: Containerd;
  readonly kubelet: HostProcess;
  /** Wall times of the start phases, ms. */
  readonly timings: Readonly<Record<string, number>>;
  /** Stop everything and remove what the node made; resolves to what could not be removed. */
  stop(): Promise<string[]>;
}

interface Mount {
  readonly target: string;
  readonly source: string;
}

/** Mount points (mountinfo field 5, octal escapes decoded), in the order they were mounted. */
function mounts(): Mount[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const fields = line.split(' ');
      const decode = (s: string): string =>
        s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
      const dash = fields.indexOf('-');
      return { target: decode(fields[4] ?? ''), source: decode(fields[dash + 2] ?? '') };
    });
}

const under = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);

/** Processes whose command line mentions `needle` (our node's directory), except this one. */
function processesMentioning(needle: string): Array<{ pid: number; cmd: string }> {
  const found: Array<{ pid: number; cmd: string }> = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      if (cmd.includes(needle)) found.push({ pid, cmd });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Regular files below `dir` (not through symbolic links), for matching loop devices by identity. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const visit = (d: string): void => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) visit(join(d, e.name));
      else if (e.isFile()) out.push(join(d, e.name));
    }
  };
  visit(dir);
  return out;
}

/**
 * Loop devices backed by files below `dir`: by path, and by the file's identity (device, inode) —
 * a device a driver container attached reports its file relative to that container's mount once
 * the container is gone ("/emulated/<id>.img"), so the path alone misses it, and a clean-up that
 * then removed the directory left the device attached to a deleted file.
 */
export async function loopDevicesUnder(dir: string): Promise<LoopDevice[]> {
  const loops = await listLoopDevices(new HostRunner());
  const ids = new Set<string>();
  for (const f of filesUnder(dir)) {
    const id = await fileIdentity(f);
    if (id !== undefined) ids.add(id);
  }
  return loops.filter((l) => under(l.backFile, dir) || (!l.deleted && l.backId !== undefined && ids.has(l.backId)));
}

/** Unmount everything mounted below `dir` and the network namespaces created since `netnsBefore`, deepest first. */
async function unmountAll(dir: string, netnsBefore: ReadonlySet<string>): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const targets = mounts()
      .map((m) => m.target)
      .filter((t) => under(t, dir) || (t.startsWith('/run/netns/cni-') && !netnsBefore.has(t)));
    if (targets.length === 0) return;
    for (const t of [...new Set(targets)].reverse()) {
      await runTool('umount', [t], { timeoutMs: 30_000 }).catch(() =>
        runTool('umount', ['--lazy', t], { timeoutMs: 30_000 }).catch(() => undefined),
      );
    }
  }
}

/** Remove the kubelet's pod cgroups (empty once every container is gone), deepest first. */
async function removePodCgroups(): Promise<void> {
  const base = '/sys/fs/cgroup';
  if (!existsSync(base)) return;
  const walk = (d: string): string[] => {
    let out: string[] = [];
    try {
      for (const e of readdirSync(d, { withFileTypes: true }))
        if (e.isDirectory()) out = out.concat(walk(join(d, e.name)), [join(d, e.name)]);
    } catch {
      // not readable
    }
    return out;
  };
  for (const controller of readdirSync(base)) {
    const root = join(base, controller, 'kubepods');
    if (!existsSync(root)) continue;
    for (const d of [...walk(root), root]) await rmdir(d).catch(() => undefined);
  }
}

/** What a (possibly dead) run left: processes, containers' shims, mounts, loop devices, bridge, rules. */
function processesAndMounts(dirs: readonly string[]): string[] {
  return [
    ...dirs.flatMap((dir) => processesMentioning(dir).map((p) => `process ${p.pid}: ${p.cmd.slice(0, 160)}`)),
    ...podProcesses().map((pid) => `process ${pid} in a pod cgroup`),
    ...mounts()
      .filter((m) => dirs.some((dir) => under(m.target, dir)))
      .map((m) => `mount ${m.target} (${m.source})`),
  ];
}

export async function leftovers(dirs: readonly string[]): Promise<string[]> {
  const found = processesAndMounts(dirs);
  for (const dir of dirs)
    for (const d of await loopDevicesUnder(dir))
      found.push(`loop device ${d.name} -> ${d.backFile}${d.deleted ? ' (deleted)' : ''}`);
  const link = await runTool('ip', ['link', 'show', 'dev', NODE_NETWORK.bridge], {
    okCodes: [0, 1],
    timeoutMs: 10_000,
  });
  if (link.code === 0) found.push(`network device ${NODE_NETWORK.bridge}`);
  for (const { tool, table, rules, chains } of await kubeRules())
    found.push(`${tool} ${table}: chains ${chains.join(', ') || '-'}; rules ${rules.join('; ') || '-'}`);
  return found;
}

const IPTABLES = ['iptables', 'ip6tables'] as const;
const TABLES = ['filter', 'nat', 'mangle'] as const;

/** Rules and chains named KUBE-* (the kubelet's and kube-proxy's), per tool and table. */
async function kubeRules(): Promise<Array<{ tool: string; table: string; rules: string[]; chains: string[] }>> {
  const out = [];
  for (const tool of IPTABLES) {
    for (const table of TABLES) {
      const { stdout } = await runTool(tool, ['-w', '5', '-t', table, '-S'], { timeoutMs: 20_000 }).catch(() => ({
        stdout: '',
      }));
      const lines = stdout.split('\n');
      const chains = lines.filter((l) => l.startsWith('-N KUBE-')).map((l) => l.slice(3));
      const rules = lines.filter((l) => l.startsWith('-A ') && !l.startsWith('-A KUBE-') && / -j KUBE-/.test(l));
      if (chains.length > 0 || rules.length > 0) out.push({ tool, table, rules, chains });
    }
  }
  return out;
}

/** Remove the KUBE-* chains and the jumps to them that the kubelet and kube-proxy installed. */
async function removeKubeRules(): Promise<void> {
  for (const { tool, table, rules, chains } of await kubeRules()) {
    const run = (args: string[]): Promise<unknown> =>
      runTool(tool, ['-w', '5', '-t', table, ...args], { timeoutMs: 20_000 }).catch(() => undefined);
    for (const rule of rules)
      await run(
        [
          '-D',
          ...rule
            .slice(3)
            .split(' ')
            .filter((w) => w !== ''),
        ].map((w) => w.replace(/^"(.*)"$/, '$1')),
      );
    for (const chain of chains) await run(['-F', chain]);
    for (const chain of chains) await run(['-X', chain]);
  }
}

/** Processes in the kubelet's pod cgroups (containers whose shim may already be gone). */
function podProcesses(): number[] {
  const root = '/sys/fs/cgroup/pids/kubepods';
  const pids: number[] = [];
  const walk = (d: string): void => {
    try {
      for (const p of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n'))
        if (p.trim() !== '') pids.push(Number(p));
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    } catch {
      // gone meanwhile, or no such hierarchy
    }
  };
  walk(root);
  return pids;
}

/** Best-effort removal of everything under `dir` and of the node's host state; returns what is left. */
async function cleanUp(
  dirs: readonly string[],
  netnsBefore: ReadonlySet<string>,
  sysctls: Readonly<Record<string, string>>,
): Promise<string[]> {
  const [dir = ''] = dirs;
  for (const pid of [...podProcesses(), ...processesMentioning(dir).map((p) => p.pid)]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await waitFor(
    `processes of ${dir} to exit after SIGKILL`,
    () => (processesMentioning(dir).length === 0 ? true : undefined),
    { timeoutMs: 15_000 },
  ).catch(() => undefined);
  // kube-proxy's own clean-up first (its iptables mode; it fails on the nftables mode without `nft`,
  // which this node never used), then whatever the kubelet and it left.
  await cleanUpKubeProxy().catch(() => undefined);
  await removeKubeRules();
  for (const d of dirs) await unmountAll(d, netnsBefore);
  for (const d of dirs)
    for (const loop of await loopDevicesUnder(d))
      await runTool('losetup', ['--detach', loop.name], { timeoutMs: 20_000 }).catch(() => undefined);
  await tearDownNetwork(sysctls).catch(() => undefined);
  await removePodCgroups();
  const left = await leftovers(dirs);
  // Never rm -r through a mount that is still there (it would delete a volume's contents).
  for (const d of dirs) if (!mounts().some((m) => under(m.target, d))) await rm(d, { recursive: true, force: true });
  return left;
}

/** Take the machine's real-node lock; clean up after a previous run whose process died. */
async function takeLock(): Promise<void> {
  await mkdir(REAL_NODE_BASE, { recursive: true });
  if (existsSync(LOCK_FILE)) {
    const [pidText, ...oldDirs] = (await readFile(LOCK_FILE, 'utf8')).trim().split('\n');
    const pid = Number(pidText);
    if (Number.isInteger(pid) && pid > 0 && pidAlive(pid))
      throw new Error(
        `a real node of process ${pid} runs on this machine (${LOCK_FILE}); one at a time (fixed bridge ${NODE_NETWORK.bridge} and ports)`,
      );
    const dirs = oldDirs.filter((d) => d !== '');
    if (dirs.length > 0) {
      const left = await cleanUp(dirs, new Set(), {});
      if (left.length > 0)
        throw new Error(
          `could not clean up the real node left by dead process ${pid} in ${dirs.join(', ')}:\n  ${left.join('\n  ')}`,
        );
    }
    await rm(LOCK_FILE, { force: true });
  }
  if (existsSync(KUBELET_DIR) && readdirSync(KUBELET_DIR).length > 0) {
    throw new Error(
      `${KUBELET_DIR} exists and is not this tier's (no dead run of ours recorded it in ${LOCK_FILE}): is a kubelet installed on this machine? The real node would take over its directory; remove it or run elsewhere`,
    );
  }
}

const nodeReady = (n: KubeObject | undefined): boolean =>
  ((n?.['status'] as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
    (c) => c.type === 'Ready' && c.status === 'True',
  );

export async function startRealNode(o: RealNodeOptions): Promise<RealNode> {
  await takeLock();
  const name = o.nodeName ?? REAL_NODE_NAME;
  const dir = join(REAL_NODE_BASE, randomBytes(3).toString('hex'));
  const logDir = join(o.cluster.logDir, 'real-node');
  const kubeletDir = KUBELET_DIR;
  // Recorded before anything is created, so that a run killed at any point is cleaned up by the next.
  await writeFile(LOCK_FILE, `${process.pid}\n${dir}\n${kubeletDir}\n`);
  await mkdir(logDir, { recursive: true });
  await mkdir(kubeletDir, { recursive: true });
  const netnsBefore = new Set(
    mounts()
      .map((m) => m.target)
      .filter((t) => t.startsWith('/run/netns/')),
  );
  const timings: Record<string, number> = {};
  let sysctls: Record<string, string> = {};
  let stopped: Promise<string[]> | undefined;
  const stops: Array<() => Promise<void>> = [];
  const stop = (): Promise<string[]> => {
    stopped ??= (async () => {
      for (const s of stops.reverse()) await s().catch(() => undefined);
      await cp(join(dir, POD_LOGS_SUBDIR), join(logDir, POD_LOGS_SUBDIR), { recursive: true }).catch(() => undefined);
      const left = await cleanUp([dir, kubeletDir], netnsBefore, sysctls);
      await rm(LOCK_FILE, { force: true });
      return left;
    })();
    return stopped;
  };
  const phase = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    const value = await fn();
    timings[label] = Date.now() - started;
    return value;
  };
  try {
    sysctls = await phase('network', () => setUpNetwork());
    const server = new URL(o.cluster.server);
    const forwarder = await startForwarder(
      { host: NODE_NETWORK.advertiseAddress, port: Number(server.port) },
      { host: server.hostname, port: Number(server.port) },
    );
    stops.push(() => forwarder.close());
    const containerd = await phase('containerd', () =>
      startContainerd(dir, NODE_NETWORK, {
        sandboxImage: o.sandboxImage,
        logFile: join(logDir, 'containerd.log'),
        ...(o.registries === undefined ? {} : { registries: o.registries }),
      }),
    );
    stops.push(async () => {
      await containerd.removeAll();
      await containerd.stop();
    });
    await phase('image import', () => containerd.importImages(o.imageArchives));
    const agents = { cluster: o.cluster, net: NODE_NETWORK, dir, logDir };
    const coredns = await phase('coredns', () => startCoreDns(agents));
    stops.push(() => coredns.stop());
    const kubelet = await phase('kubelet', () =>
      startKubelet(agents, {
        nodeName: name,
        rootDir: kubeletDir,
        nodeDir: dir,
        containerdSocket: containerd.paths.socket,
        labels: o.labels ?? {},
      }),
    );
    stops.push(() => kubelet.stop());
    await phase('node Ready', () =>
      waitFor(
        `node ${name} to register and become Ready (kubelet log: ${kubelet.logFile})`,
        async () => (nodeReady(await o.cluster.kube.get({ apiVersion: 'v1', kind: 'Node', name })) ? true : undefined),
        { timeoutMs: 120_000, intervalMs: 500 },
      ),
    );
    // After the Node exists: kube-proxy waits for its Node object (up to ~30 s) before it is healthy.
    const proxy = await phase('kube-proxy', () => startKubeProxy(agents, name));
    // Stopped after the kubelet (stops run in reverse): nothing restarts containers while they are removed.
    stops.splice(stops.length - 1, 0, () => proxy.stop());
    return { name, dir, logDir, kubeletDir, containerd, kubelet, timings, stop };
  } catch (e) {
    const left = await stop();
    if (left.length > 0) (e as Error).message += `\nand the clean-up left:\n  ${left.join('\n  ')}`;
    throw e;
  }
}
