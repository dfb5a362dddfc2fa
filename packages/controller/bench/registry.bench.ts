// Node registry at scale. Two parts:
// 1. In process, no gRPC (the controller's own bookkeeping): register N nodes (with an empty
//    inventory, so no listing), renew each once at the lease cadence with fresh capacity, and
//    report the registry CPU per registration and per renewal, the heap per node, and the share
//    of a core the renewals of N nodes take at the lease the registry grants for N.
// 2. With --grpc: the real registry server over mutual TLS (RSA-3072 certificates, as the
//    operator issues them) in this process, and N fake nodes in a child process, each with its
//    own connection: the registration storm (all nodes register at once, with an inventory, then
//    the time until all are available), then every node renews once, spread over a few seconds.
//    Reports the controller's CPU per renewal (TLS + gRPC + registry), the share of a core at the
//    granted lease, and the controller's heap and RSS per registered node (inbound connection
//    included). The client process is not measured.
// Run: node --expose-gc --conditions=@pmem-csi/source --import tsx packages/controller/bench/registry.bench.ts [--grpc [--insecure|--ecdsa]] [N ...]
//      (defaults: in process 1000 5000 20000; --grpc 1000; --insecure: the same without TLS, to see what TLS costs;
//      --ecdsa: P-256 certificates made with the openssl CLI instead of the operator's RSA-3072)
import * as grpc from '@grpc/grpc-js';
import { fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { NODE_CONTROLLER_SAN, REGISTRY_SAN } from '@pmem-csi/api';
import {
  type CertificateAndKey,
  channelCredentials,
  createCa,
  createLeaf,
  HostRunner,
  loadRegistry,
  nullLogger,
  type RegistryClient,
  serverCredentials,
  type TlsFiles,
  unary,
} from '@pmem-csi/runtime';
import { startController } from '../src/controller.js';
import type { NodePort } from '../src/nodes/node-port.js';
import {
  DEFAULT_LEASE_SECONDS,
  DEFAULT_MAX_LEASE_FACTOR,
  DEFAULT_RENEWALS_PER_SECOND,
  leaseSecondsFor,
} from '../src/registry/lease-policy.js';
import { NodeRegistry } from '../src/registry/node-registry.js';
import { type Capacity, type registry, MiB, GiB } from '@pmem-csi/csi';
import { VolumeReconciler } from '../src/volumes/volume-reconciler.js';
import { VolumeIndex } from '../src/volumes/volume-index.js';

const STORM_IN_FLIGHT = 200;
const INSECURE = process.argv.includes('--insecure');
const ECDSA = process.argv.includes('--ecdsa');
const out = (line: string): void => void process.stdout.write(`${line}\n`);
const args = process.argv.slice(2);
const counts = args.filter((a) => /^\d+$/.test(a)).map(Number);

function fullGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run node with --expose-gc (memory figures need a full GC)');
  gc();
  gc();
}

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};
const capacity = (i: number): Capacity => ({
  maxVolumeSize: (1 + (i % 97)) * GiB,
  available: (1 + (i % 97)) * GiB,
  managed: 100 * GiB,
  total: 100 * GiB,
});

// ---- part 1: in process -------------------------------------------------------------------------

function inProcess(n: number): string {
  let now = 1_000_000;
  fullGc();
  const heap0 = process.memoryUsage().heapUsed;
  const registry = new NodeRegistry({ now: () => now });
  const index = new VolumeIndex();
  const noDial = {
    connect: () => undefined,
    mutations: () => ({ started: 0, running: 0 }),
    listVolumes: () => Promise.resolve([]),
  };
  const reconciler = new VolumeReconciler({
    registry,
    index,
    nodePort: noDial as Pick<NodePort, 'connect' | 'listVolumes' | 'mutations'>,
    log: nullLogger,
  });
  const ids: string[] = [];
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const nodeId = `node-${i}`;
    const reg = registry.register({
      nodeId,
      endpoint: `10.0.${i >> 8}.${i & 255}:10001`,
      capacity: capacity(i),
      deviceMode: 'lvm',
      version: 'bench',
    });
    reconciler.nodeRegistered(reg, { count: 0, records: [] });
    ids.push(reg.registrationId);
  }
  const registerMs = cpuMs(t0);
  const lease = registry.leaseSeconds;
  // One renewal cycle at the cadence: node i renews at i × (lease/3) / n; every tenth brings a new capacity.
  const t1 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    now += (lease * 1000) / 3 / n;
    registry.renew(`node-${i}`, ids[i] ?? '', i % 10 === 0 ? capacity(i + 1) : capacity(i));
  }
  const renewMs = cpuMs(t1);
  const available = registry.list().filter((v) => v.state === 'available').length;
  fullGc();
  const perNode = (process.memoryUsage().heapUsed - heap0) / n;
  const perRenewal = renewMs / n;
  const share = ((n / (lease / 3)) * perRenewal) / 10; // % of one core
  if (available !== n) throw new Error(`only ${available} of ${n} nodes available`);
  return `${String(n).padStart(6)}  ${String(lease).padStart(5)}  ${((registerMs * 1000) / n).toFixed(1).padStart(8)}  ${(perRenewal * 1000).toFixed(2).padStart(8)}  ${(
    n /
    (lease / 3)
  )
    .toFixed(0)
    .padStart(8)}  ${share.toFixed(3).padStart(9)}  ${(perNode / 1024).toFixed(2).padStart(9)}`;
}

// ---- part 2: over gRPC + mTLS -------------------------------------------------------------------

interface ToParent {
  readonly phase: 'registered' | 'window' | 'failed';
  readonly ms?: number;
  /** Registration attempts that failed and were retried. */
  readonly retries?: number;
  readonly renewals?: number;
  /** Renewals answered NOT_FOUND (the lease had expired; the node registered again). */
  readonly expiries?: number;
  readonly error?: string;
}

/** ECDSA P-256 certificates from the openssl CLI (the runtime issues RSA only), for --ecdsa. */
async function ecdsaCerts(
  dir: string,
): Promise<{ ca: CertificateAndKey; server: CertificateAndKey; client: CertificateAndKey }> {
  // Through the command runner: a timeout, and an error naming openssl when it is not installed.
  const runner = new HostRunner();
  const openssl = async (argv: string[]): Promise<void> =>
    void (await runner.run('openssl', argv, { timeoutMs: 30_000 }));
  const f = (name: string): string => join(dir, name);
  const read = (name: string): CertificateAndKey => ({
    certPem: readFileSync(join(dir, `${name}.pem`), 'utf8'),
    keyPem: readFileSync(join(dir, `${name}-key.pem`), 'utf8'),
  });
  await openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    f('ca-key.pem'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=bench-ca',
  ]);
  for (const [name, san] of [
    ['server', REGISTRY_SAN],
    ['client', NODE_CONTROLLER_SAN],
  ] as const) {
    await openssl([
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      f(`${name}-key.pem`),
      '-out',
      f(`${name}.csr`),
      '-subj',
      `/CN=${san}`,
    ]);
    await openssl([
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      f('ca.pem'),
      '-CAkey',
      f('ca-key.pem'),
      '-CAcreateserial',
      '-out',
      f(`${name}.pem`),
      '-days',
      '2',
      '-extfile',
      writeExt(dir, name, san),
    ]);
  }
  return { ca: read('ca'), server: read('server'), client: read('client') };
}

function writeExt(dir: string, name: string, san: string): string {
  const file = join(dir, `${name}.ext`);
  writeFileSync(file, `subjectAltName=DNS:${san}\nextendedKeyUsage=serverAuth,clientAuth\n`);
  return file;
}

async function writeCerts(dir: string): Promise<{ server: TlsFiles; client: TlsFiles }> {
  let ca: CertificateAndKey;
  let server: CertificateAndKey;
  let client: CertificateAndKey;
  if (ECDSA) {
    ({ ca, server, client } = await ecdsaCerts(dir));
  } else {
    ca = await createCa({ commonName: 'bench-ca', validityDays: 2 });
    server = await createLeaf({ ca, dnsName: REGISTRY_SAN, validityDays: 2 });
    client = await createLeaf({ ca, dnsName: NODE_CONTROLLER_SAN, validityDays: 2 });
  }
  const files = async (name: string, leaf: { certPem: string; keyPem: string }): Promise<TlsFiles> => {
    const f = { caFile: join(dir, 'ca.crt'), certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
    await writeFile(f.certFile, leaf.certPem);
    await writeFile(f.keyFile, leaf.keyPem, { mode: 0o600 });
    return f;
  };
  await writeFile(join(dir, 'ca.crt'), ca.certPem);
  return { server: await files('registry', server), client: await files('node', client) };
}

function memory(): { heap: number; rss: number } {
  fullGc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, rss: m.rss };
}

async function overGrpc(n: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'pmem-registry-bench-'));
  try {
    const certs = await writeCerts(dir);
    const controller = await startController({
      csiEndpoint: join(dir, 'csi.sock'),
      registryAddress: '127.0.0.1:0',
      registryCredentials: INSECURE
        ? grpc.ServerCredentials.createInsecure()
        : await serverCredentials(certs.server, { allowedClientSan: NODE_CONTROLLER_SAN }),
      nodeCredentials: () => grpc.credentials.createInsecure(),
      log: nullLogger,
      settleMs: 0,
    });
    const before = memory();
    const child = fork(
      fileURLToPath(import.meta.url),
      ['--clients', String(n), String(controller.registryPort), dir, ...(INSECURE ? ['--insecure'] : [])],
      {
        execArgv: process.execArgv.filter((a) => a !== '--expose-gc'),
      },
    );
    const next = (): Promise<ToParent> =>
      new Promise((resolve) => child.once('message', (m) => resolve(m as ToParent)));
    const cpu0 = process.cpuUsage();
    const registered = await next();
    if (registered.phase === 'failed') throw new Error(`clients failed: ${registered.error}`);
    const stormCpu = cpuMs(cpu0);
    const available = controller.status().nodes.filter((s) => s.state === 'available').length;
    const after = memory();
    // Steady state: every node renews at a third of the lease it was granted; measure one full cadence.
    const lease = leaseOf(n);
    const windowMs = Math.max(5000, (lease * 1000) / 3);
    child.send('window');
    const cpu1 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, windowMs));
    const windowCpu = cpuMs(cpu1);
    child.send('report');
    const steady = await next();
    const renewals = steady.renewals ?? 0;
    const tls = INSECURE
      ? 'plain TCP (--insecure: gRPC without TLS, for comparison)'
      : `mTLS (${ECDSA ? 'ECDSA P-256, --ecdsa' : 'RSA-3072'})`;
    out(
      `${n} nodes over ${tls}, one connection each, renewing at a third of their lease throughout (nodes in a child process; only this process measured)`,
    );
    out(
      `  registration storm (${STORM_IN_FLIGHT} at once): all registered in ${registered.ms?.toFixed(0)} ms (${registered.retries} attempts retried), ` +
        `${available} of ${n} available after the last reply; controller CPU ${stormCpu.toFixed(0)} ms = ${(stormCpu / n).toFixed(2)} ms per node (TLS handshake included)`,
    );
    out(
      `  steady state over ${(windowMs / 1000).toFixed(0)} s at the granted lease of ${lease} s: ${renewals} renewals (${(renewals / (windowMs / 1000)).toFixed(0)}/s), ` +
        `controller CPU ${(windowCpu / Math.max(1, renewals)).toFixed(3)} ms per renewal, ${((windowCpu / windowMs) * 100).toFixed(1)}% of a core; ` +
        `lease expiries during the whole run: ${steady.expiries}`,
    );
    out(
      `  controller memory per registered node: heap ${((after.heap - before.heap) / n / 1024).toFixed(1)} KiB, RSS ${((after.rss - before.rss) / n / 1024).toFixed(1)} KiB ` +
        `(RSS ${(after.rss / MiB).toFixed(0)} MiB with ${n} nodes)`,
    );
    child.kill();
    await controller.stop();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The lease the controller grants with its defaults to a cluster of n nodes. */
function leaseOf(n: number): number {
  const o = {
    leaseSeconds: DEFAULT_LEASE_SECONDS,
    maxLeaseSeconds: DEFAULT_MAX_LEASE_FACTOR * DEFAULT_LEASE_SECONDS,
    renewalsPerSecond: DEFAULT_RENEWALS_PER_SECOND,
  };
  return leaseSecondsFor(n, o);
}

interface FakeNodeClient {
  readonly client: RegistryClient;
  readonly id: string;
  readonly i: number;
  reg: string;
  leaseMs: number;
}

/** The child: n nodes, each with its own channel (local subchannel pool = its own connection). */
async function clients(n: number, port: number, dir: string): Promise<void> {
  const send = (m: ToParent): void => void process.send?.(m);
  const files = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'node.crt'), keyFile: join(dir, 'node.key') };
  const creds = INSECURE
    ? grpc.credentials.createInsecure()
    : await channelCredentials(files, { expectedServerName: REGISTRY_SAN });
  const Registry = loadRegistry().pmemcsi.registry.v1.Registry;
  const nodes: FakeNodeClient[] = [];
  for (let i = 0; i < n; i++) {
    nodes.push({
      client: new Registry(`127.0.0.1:${port}`, creds, { 'grpc.use_local_subchannel_pool': 1 }),
      id: `node-${i}`,
      i,
      reg: '',
      leaseMs: 30_000,
    });
  }
  const wire = (i: number): registry.Capacity => {
    const c = capacity(i);
    return {
      max_volume_size: String(c.maxVolumeSize),
      available: String(c.available),
      managed: String(c.managed),
      total: String(c.total),
    };
  };
  const counters = { retries: 0, renewals: 0, expiries: 0 };
  const register = async (node: FakeNodeClient): Promise<void> => {
    const req = {
      node_id: node.id,
      endpoint: `10.0.${node.i >> 8}.${node.i & 255}:10001`,
      capacity: wire(node.i),
      device_mode: 'lvm',
      version: 'bench',
      inventory: { count: '0' },
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const reply = await unary<registry.RegisterControllerRequest, registry.RegisterControllerReply__Output>(
          node.client,
          node.client.RegisterController,
          req,
          { timeoutMs: 60_000 },
        );
        node.reg = reply.registration_id;
        node.leaseMs = Number(reply.lease_seconds) * 1000;
        return;
      } catch (e) {
        if (attempt >= 10) throw e;
        counters.retries++; // like the node's registrar: back off and try again
        await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
    }
  };
  // Like the registrar: renew at a third of the lease; NOT_FOUND (expired) → register again.
  const renewLoop = (node: FakeNodeClient): void => {
    const timer = setTimeout(() => {
      unary<registry.RenewControllerRequest, registry.RenewControllerReply__Output>(
        node.client,
        node.client.RenewController,
        { node_id: node.id, registration_id: node.reg, capacity: wire(node.i) },
        { timeoutMs: 30_000 },
      )
        .then(
          (reply) => {
            counters.renewals++;
            node.leaseMs = Number(reply.lease_seconds) * 1000;
          },
          (e: { code?: number }) => {
            if (e.code !== grpc.status.NOT_FOUND) return undefined;
            counters.expiries++;
            return register(node);
          },
        )
        .finally(() => renewLoop(node))
        .catch(() => undefined);
    }, node.leaseMs / 3);
    timer.unref();
  };
  try {
    const t0 = performance.now();
    let next = 0;
    // Nodes come up together but not in the same millisecond: at most STORM_IN_FLIGHT handshakes at once.
    await Promise.all(
      Array.from({ length: Math.min(n, STORM_IN_FLIGHT) }, async () => {
        while (next < n) {
          const node = nodes[next++] as FakeNodeClient;
          await register(node);
          renewLoop(node);
        }
      }),
    );
    send({ phase: 'registered', ms: performance.now() - t0, retries: counters.retries });
  } catch (e) {
    send({ phase: 'failed', error: String(e) });
    return;
  }
  process.on('message', (m) => {
    if (m === 'window') counters.renewals = 0;
    else send({ phase: 'window', renewals: counters.renewals, expiries: counters.expiries });
  });
  await new Promise(() => undefined); // until the parent ends this process
}

async function main(): Promise<void> {
  if (args[0] === '--clients') return clients(Number(args[1]), Number(args[2]), String(args[3]));
  if (args.includes('--grpc')) {
    for (const n of counts.length > 0 ? counts : [1000]) await overGrpc(n);
    return;
  }
  out(
    `registry in process, no gRPC (Node.js ${process.version}): register with an empty inventory, one renewal per node at the lease cadence`,
  );
  out('                       µs CPU per              renewals  % of a core     heap');
  out(' nodes  lease  register   renewal     per s   renewing  KiB/node');
  for (const n of counts.length > 0 ? counts : [1000, 5000, 20000]) out(inProcess(n));
}

await main();
