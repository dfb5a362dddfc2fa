// The controller-at-5,000-nodes candidates (issue 28 item 3), measured in ways a shared machine
// disturbs little: the CPU time of a server process per connection it accepts
// (process.cpuUsage in that process; the clients run in another process), and its resident
// memory per idle connection. Each server runs in a child process of its own:
// - tls:  a node:tls server with the driver's context options (contextOptionsOf: TLS >= 1.2, our
//         cipher list) and a required client certificate — the handshake alone;
// - grpc: a grpc-js server bound with the driver's mutual-TLS server credentials
//         (serverCredentialsFromSource, as the controller's registry), the client an HTTP/2
//         session (what a node's gRPC channel opens before its first call).
// Candidates: the key type of all certificates (CA and leaves), TLS session resumption (the
// client offers the ticket of its previous connection to the same server process), and HTTP/2
// settings that bound what a connection holds.
//
// Run: node --conditions=@pmem-csi/source --import tsx e2e/src/bench/tls-candidates.ts [connections=1000] [--only handshake|memory|resumption]
import * as grpc from '@grpc/grpc-js';
import { fork } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http2 from 'node:http2';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { NODE_CONTROLLER_SAN, REGISTRY_SAN } from '@pmem-csi/api';
import {
  contextOptionsOf,
  createCa,
  createLeaf,
  loadTlsMaterial,
  serverCredentialsFromSource,
  TlsFileSource,
  type KeyType,
  type TlsFiles,
} from '@pmem-csi/runtime';

type Stack = 'tls' | 'grpc';
/** Extra http2 server options per memory candidate (passed like the credentials' constructor options). */
const HTTP2_CANDIDATES: Record<string, http2.SecureServerOptions> = {
  default: {},
  'window 16 KiB': { settings: { initialWindowSize: 16 * 1024 } },
  'header table 0': { settings: { headerTableSize: 0 } },
  'max frame 16 KiB, header list 16 KiB': { settings: { maxFrameSize: 16 * 1024, maxHeaderListSize: 16 * 1024 } },
  'maxSessionMemory 1 MiB': { maxSessionMemory: 1 },
};

interface ServerReady {
  readonly port: number;
}
interface ServerSample {
  readonly cpuMs: number;
  readonly rss: number;
  readonly heap: number;
  readonly external: number;
  readonly arrayBuffers: number;
  readonly sessions: number;
  readonly resumed: number;
}

const out = (line: string): void => void process.stdout.write(`${line}\n`);
const load = (): string => loadavg()[0]?.toFixed(2) ?? '?';

// ---- the server (child) ----------------------------------------------------------------------------

async function serve(stack: Stack, dir: string, candidate: string): Promise<void> {
  const files: TlsFiles = {
    caFile: join(dir, 'ca.crt'),
    certFile: join(dir, 'srv.crt'),
    keyFile: join(dir, 'srv.key'),
  };
  let sessions = 0;
  let resumed = 0;
  let port: number;
  if (stack === 'tls') {
    const material = await loadTlsMaterial(files);
    const srv = tls.createServer({ ...contextOptionsOf(material), requestCert: true, rejectUnauthorized: true });
    srv.on('secureConnection', (s: tls.TLSSocket) => {
      sessions++;
      if (s.isSessionReused()) resumed++;
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    port = (srv.address() as { port: number }).port;
  } else {
    const source = await TlsFileSource.open(files);
    const creds = serverCredentialsFromSource(source, { allowedClientSan: NODE_CONTROLLER_SAN });
    // The candidate's http2 options, merged as grpc-js merges the credentials' constructor options.
    const extra = HTTP2_CANDIDATES[candidate] ?? {};
    const c = creds as unknown as { _getConstructorOptions(): object };
    const base = c._getConstructorOptions.bind(c);
    c._getConstructorOptions = () => ({ ...base(), ...extra });
    const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
    port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', creds, (e, p) => (e ? reject(e) : resolve(p))),
    );
    const servers = (server as unknown as { http2Servers: Map<tls.Server, unknown> }).http2Servers;
    for (const s of servers.keys()) {
      s.on('secureConnection', (sock: tls.TLSSocket) => {
        sessions++;
        if (sock.isSessionReused()) resumed++;
      });
    }
  }
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', (m) => {
    if (m !== 'sample' && m !== 'sample-nogc') return;
    if (m === 'sample') {
      gc?.();
      gc?.();
    }
    const cpu = process.cpuUsage();
    const mem = process.memoryUsage();
    const sample: ServerSample = {
      cpuMs: (cpu.user + cpu.system) / 1000,
      rss: mem.rss,
      heap: mem.heapUsed,
      external: mem.external,
      arrayBuffers: mem.arrayBuffers,
      sessions,
      resumed,
    };
    process.send?.(sample);
  });
  process.send?.({ port } satisfies ServerReady);
}

// ---- the measuring side (parent) ------------------------------------------------------------------

interface Server {
  readonly port: number;
  sample(gc?: boolean): Promise<ServerSample>;
  stop(): void;
}

async function startServer(stack: Stack, dir: string, candidate = 'default'): Promise<Server> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', stack, dir, candidate], {
    execArgv: [...process.execArgv, '--expose-gc'],
  });
  const next = <T>(): Promise<T> => new Promise((resolve) => child.once('message', (m) => resolve(m as T)));
  const { port } = await next<ServerReady>();
  return {
    port,
    sample: async (gc = true) => {
      const p = next<ServerSample>();
      child.send(gc ? 'sample' : 'sample-nogc');
      return p;
    },
    stop: () => void child.kill(),
  };
}

interface Client {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** One mutual-TLS connection; resolves with the socket and the session ticket, if the server sent one. */
function tlsConnect(port: number, c: Client, session?: Buffer): Promise<{ socket: tls.TLSSocket; ticket?: Buffer }> {
  return new Promise((resolve, reject) => {
    let ticket: Buffer | undefined;
    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      ...c,
      servername: REGISTRY_SAN,
      checkServerIdentity: () => undefined,
      ...(session ? { session } : {}),
    });
    socket.on('session', (s: Buffer) => (ticket = s));
    socket.once('secureConnect', () => {
      // TLS 1.3 tickets arrive after the handshake: give them a moment.
      setTimeout(() => resolve({ socket, ...(ticket ? { ticket } : {}) }), 5);
    });
    socket.once('error', reject);
  });
}

/** One HTTP/2 session over mutual TLS, established (remote SETTINGS received). */
function h2Connect(port: number, c: Client): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, {
      ...c,
      servername: REGISTRY_SAN,
      checkServerIdentity: () => undefined,
    });
    session.once('remoteSettings', () => resolve(session));
    session.once('error', reject);
  });
}

async function inBatches<T>(n: number, width: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const all: T[] = [];
  for (let i = 0; i < n; i += width) {
    all.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, j) => make(i + j)))));
  }
  return all;
}

interface Pki {
  readonly dir: string;
  readonly client: Client;
}

async function makePki(root: string, keyType: KeyType): Promise<Pki> {
  const dir = join(root, keyType);
  const ca = await createCa({ commonName: `bench ${keyType}`, validityDays: 2, keyType });
  const [srv, cli] = await Promise.all([
    createLeaf({ ca, dnsName: REGISTRY_SAN, validityDays: 1, keyType }),
    createLeaf({ ca, dnsName: NODE_CONTROLLER_SAN, validityDays: 1, keyType }),
  ]);
  await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
  await writeFile(join(dir, 'ca.crt'), ca.certPem);
  await writeFile(join(dir, 'srv.crt'), srv.certPem);
  await writeFile(join(dir, 'srv.key'), srv.keyPem, { mode: 0o600 });
  return {
    dir,
    client: { ca: Buffer.from(ca.certPem), cert: Buffer.from(cli.certPem), key: Buffer.from(cli.keyPem) },
  };
}

/** Server CPU per accepted connection, per key type and stack (connections closed after each batch). */
async function handshakes(pkis: Map<KeyType, Pki>, n: number): Promise<void> {
  out(`\nserver CPU per accepted connection (${n} connections, 20 at a time, closed after each batch)`);
  out('stack  key type     ms CPU/conn  load');
  for (const stack of ['tls', 'grpc'] as const) {
    for (const [keyType, pki] of pkis) {
      const srv = await startServer(stack, pki.dir);
      try {
        // Warm-up (JIT, first context use), not measured.
        await inBatches(50, 10, async () =>
          stack === 'tls'
            ? (await tlsConnect(srv.port, pki.client)).socket.destroy()
            : (await h2Connect(srv.port, pki.client)).destroy(),
        );
        const l0 = load();
        const before = await srv.sample(false);
        for (let i = 0; i < n; i += 20) {
          const batch = await inBatches(Math.min(20, n - i), 20, async () =>
            stack === 'tls' ? (await tlsConnect(srv.port, pki.client)).socket : await h2Connect(srv.port, pki.client),
          );
          for (const c of batch) c.destroy();
        }
        await new Promise((r) => setTimeout(r, 200)); // the server's side of the closes
        const after = await srv.sample(false);
        const per = (after.cpuMs - before.cpuMs) / (after.sessions - before.sessions);
        out(`${stack.padEnd(6)} ${keyType.padEnd(12)} ${per.toFixed(3).padStart(11)}  ${l0} → ${load()}`);
      } finally {
        srv.stop();
      }
    }
  }
}

/** Full vs resumed TLS handshakes against one server process (tls stack). */
async function resumption(pki: Pki, keyType: KeyType, n: number): Promise<void> {
  out(`\nTLS session resumption, ${keyType}, tls stack, ${n} connections each`);
  const srv = await startServer('tls', pki.dir);
  try {
    const first = await tlsConnect(srv.port, pki.client);
    first.socket.destroy();
    const ticket = first.ticket;
    for (const mode of ['full', 'resumed'] as const) {
      const l0 = load();
      const before = await srv.sample();
      for (let i = 0; i < n; i += 20) {
        const batch = await inBatches(Math.min(20, n - i), 20, () =>
          tlsConnect(srv.port, pki.client, mode === 'resumed' ? ticket : undefined),
        );
        for (const c of batch) c.socket.destroy();
      }
      await new Promise((r) => setTimeout(r, 200));
      const after = await srv.sample();
      const conns = after.sessions - before.sessions;
      out(
        `  ${mode.padEnd(8)} ${((after.cpuMs - before.cpuMs) / conns).toFixed(3)} ms CPU/conn, ${after.resumed - before.resumed} of ${conns} resumed (ticket ${ticket ? 'received' : 'none'}); load ${l0} → ${load()}`,
      );
    }
  } finally {
    srv.stop();
  }
}

/** Server RSS and heap per idle connection (held open), per http2 candidate, grpc stack. */
async function memory(pki: Pki, keyType: KeyType, n: number, candidates: string[]): Promise<void> {
  out(`\nserver memory per idle connection (${n} connections held open; ${keyType}; after a full GC)`);
  out('stack candidate                               RSS KiB  heap KiB  external KiB  load');
  for (const [stack, candidate] of [['tls', 'default'] as const, ...candidates.map((c) => ['grpc', c] as const)]) {
    const srv = await startServer(stack, pki.dir, candidate);
    try {
      const l0 = load();
      const before = await srv.sample();
      const conns = await inBatches(n, 20, async () =>
        stack === 'tls' ? (await tlsConnect(srv.port, pki.client)).socket : await h2Connect(srv.port, pki.client),
      );
      await new Promise((r) => setTimeout(r, 1000));
      const after = await srv.sample();
      const k = (b: number, a: number): string => ((a - b) / n / 1024).toFixed(1);
      out(
        `${stack.padEnd(5)} ${candidate.padEnd(38)} ${k(before.rss, after.rss).padStart(8)}  ${k(before.heap, after.heap).padStart(8)}  ${k(before.external, after.external).padStart(12)}  ${l0} → ${load()}`,
      );
      for (const c of conns) c.destroy();
    } finally {
      srv.stop();
    }
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const n = Number(args.find((a) => /^\d+$/.test(a)) ?? 1000);
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  const root = await mkdtemp(join(tmpdir(), 'pmem-tls-candidates-'));
  try {
    const types: KeyType[] = ['ecdsa-p256', 'rsa-2048', 'rsa-3072'];
    const pkis = new Map<KeyType, Pki>();
    for (const t of types) pkis.set(t, await makePki(root, t));
    out(`Node ${process.version}, OpenSSL ${process.versions.openssl}; load (1 min) at start ${load()}`);
    if (only === undefined || only === 'handshake') await handshakes(pkis, n);
    if (only === undefined || only === 'resumption') {
      for (const t of ['ecdsa-p256', 'rsa-3072'] as const) await resumption(pkis.get(t) as Pki, t, n);
    }
    if (only === undefined || only === 'memory') {
      await memory(pkis.get('ecdsa-p256') as Pki, 'ecdsa-p256', n, Object.keys(HTTP2_CANDIDATES));
      await memory(pkis.get('rsa-3072') as Pki, 'rsa-3072', n, ['default']);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--serve') {
  await serve(process.argv[3] as Stack, process.argv[4] as string, process.argv[5] ?? 'default');
} else {
  await main();
}
