// Our components and external-provisioner as host processes beside the simulated cluster:
// kwok runs no containers, so the operator's pods become "Running" without running our code. The
// operator binary therefore runs on the host against the cluster (exactly its production main(),
// with --kubeconfig), and for data-path scenarios so do external-provisioner and our driver stack.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderDriverArgs, type DriverArgs } from '@pmem-csi/csi';
import { freePort } from '@pmem-csi/driver';
import { toolPath } from '../tools.js';
import type { KwokCluster } from './harness.js';
import type { Kube } from './kube.js';
import { startHostProcess, tail, type HostProcess } from './processes.js';
import { waitFor } from './wait.js';

/** The repository root (the operator runs from its sources through tsx, as `npm run` does). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export const DRIVER_NAMESPACE = 'pmem-csi';

export interface OperatorOptions {
  /** --version: the operator version recorded on every object it builds. */
  readonly version: string;
  /** --driver-image: the default driver image (the operator's own, in production). */
  readonly driverImage: string;
  readonly namespace?: string;
  /** Another kubeconfig than the admin's (e.g. the operator ServiceAccount's token). */
  readonly kubeconfig?: string;
  /** Log file name inside the cluster's log directory. */
  readonly logName?: string;
  /** More flags after ours (a repeated flag takes the last value). */
  readonly extraArgs?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

export interface OperatorRun {
  readonly process: HostProcess;
  readonly version: string;
  readonly metricsUrl: string;
  /** SIGTERM (the operator stops reconciling and exits 0). */
  stop(): Promise<void>;
}

/** Start `pmem-csi-operator` (packages/operator/src/main.ts) and wait until its informers synced. */
export async function startOperator(cluster: KwokCluster, options: OperatorOptions): Promise<OperatorRun> {
  const port = await freePort();
  const logFile = join(cluster.logDir, options.logName ?? `operator-${options.version}.log`);
  const args = [
    '--conditions=@pmem-csi/source',
    '--import',
    'tsx',
    join(REPO_ROOT, 'packages/operator/src/main.ts'),
    '--kubeconfig',
    options.kubeconfig ?? cluster.kubeconfig,
    '--namespace',
    options.namespace ?? DRIVER_NAMESPACE,
    '--operator-version',
    options.version,
    '--driver-image',
    options.driverImage,
    '--metrics-address',
    `127.0.0.1:${port}`,
    '--log-level',
    'debug',
    ...(options.extraArgs ?? []),
  ];
  const proc = startHostProcess(`operator ${options.version}`, process.execPath, args, {
    logFile,
    cwd: REPO_ROOT,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const metricsUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    `operator ${options.version} to report ready on ${metricsUrl}/readyz (log: ${logFile})`,
    async () => {
      const exited = proc.exited();
      if (exited !== undefined) throw new Error(`operator exited (${exited}):\n${tail(proc.log())}`);
      const res = await fetch(`${metricsUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
      return res.ok ? true : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
  return { process: proc, version: options.version, metricsUrl, stop: () => proc.stop() };
}

export interface ProvisionerOptions {
  readonly csiSocket: string;
  /**
   * Run it under this host name, in its own UTS namespace (`unshare --uts`, root): its leader
   * election identity is the host name, so two of them on one host need two names.
   */
  readonly hostname?: string;
  /** Extra or replacing flags (after ours; the provisioner takes the last value of a flag). */
  readonly args?: readonly string[];
  readonly kubeconfig?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly logName?: string;
}

/** The flags the cluster tier runs external-provisioner with (beside the CSI socket and kubeconfig). */
export const PROVISIONER_FLAGS: readonly string[] = [
  '--feature-gates=Topology=true',
  '--leader-election=false',
  '--v=3',
  '--timeout=60s',
  '--retry-interval-max=5s',
];

/** Start the real external-provisioner (csi-provisioner) against our controller's socket. */
export function startProvisioner(cluster: KwokCluster, options: ProvisionerOptions): HostProcess {
  const logFile = join(cluster.logDir, options.logName ?? 'csi-provisioner.log');
  const args = [
    `--csi-address=${options.csiSocket}`,
    `--kubeconfig=${options.kubeconfig ?? cluster.kubeconfig}`,
    ...(options.args ?? PROVISIONER_FLAGS),
  ];
  const env = options.env === undefined ? {} : { env: options.env };
  if (options.hostname === undefined)
    return startHostProcess('csi-provisioner', toolPath('csi-provisioner'), args, { logFile, ...env });
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(options.hostname))
    throw new Error(
      `hostname ${JSON.stringify(options.hostname)} must be a DNS label (lower-case letters, digits, '-')`,
    );
  // sh sets the name and execs the provisioner: the process started here IS the provisioner (same pid).
  const wrapped = ['--uts', 'sh', '-c', 'hostname "$1" && shift && exec "$@"', 'sh', options.hostname];
  return startHostProcess(
    `csi-provisioner ${options.hostname}`,
    'unshare',
    [...wrapped, toolPath('csi-provisioner'), ...args],
    {
      logFile,
      ...env,
    },
  );
}

/**
 * Run pmem-csi-driver from its sources (as `npm start` does) with `flags` (rendered from the flag
 * schema, DRIVER_FLAGS), logging to `<logDir>/<name>.log`.
 */
export function startDriver(cluster: KwokCluster, name: string, flags: DriverArgs): HostProcess {
  const main = join(REPO_ROOT, 'packages/driver/src/main.ts');
  return startHostProcess(
    name,
    process.execPath,
    ['--conditions=@pmem-csi/source', '--import', 'tsx', main, ...renderDriverArgs(flags)],
    { logFile: join(cluster.logDir, `${name}.log`), cwd: REPO_ROOT },
  );
}

/**
 * A kubeconfig that authenticates as a ServiceAccount (a bound token from the TokenRequest API),
 * so that a host process runs with exactly the permissions RBAC gives that account.
 */
export async function serviceAccountKubeconfig(
  cluster: KwokCluster,
  kube: Kube,
  namespace: string,
  name: string,
): Promise<string> {
  const token = await kube.core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: [], expirationSeconds: 3600 },
    },
  });
  if (!token.status?.token) throw new Error(`no token for ServiceAccount ${namespace}/${name}`);
  const current = kube.config.getCurrentCluster();
  if (current === null) throw new Error('the admin kubeconfig has no current cluster');
  const ca = current.caData ?? (current.caFile === undefined ? '' : readFileSync(current.caFile).toString('base64'));
  const file = join(cluster.dir, `kubeconfig-${namespace}-${name}`);
  mkdirSync(cluster.dir, { recursive: true });
  const cfg = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'kwok',
        cluster: {
          server: current.server,
          ...(ca === '' ? { 'insecure-skip-tls-verify': true } : { 'certificate-authority-data': ca }),
        },
      },
    ],
    users: [{ name: `${namespace}-${name}`, user: { token: token.status?.token ?? '' } }],
    contexts: [{ name: 'sa', context: { cluster: 'kwok', user: `${namespace}-${name}` } }],
    'current-context': 'sa',
  };
  writeFileSync(file, JSON.stringify(cfg, null, 2), { mode: 0o600 });
  return file;
}
