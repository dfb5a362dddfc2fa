// Real grpc-js servers and clients over TCP 127.0.0.1 with the mutual-TLS credentials.
import { jest } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { writeFile } from 'node:fs/promises';
import tls from 'node:tls';
import { NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY } from '../certs/names.js';
import type { CertificateAndKey } from '../certs/generate.js';
import { channelCredentials } from './channel-credentials.js';
import { peerDnsNames, peerIdentityCheck } from './peer.js';
import { serverCredentials, serverCredentialsFromSource } from './server-credentials.js';
import { TlsFileSource } from './source.js';
import { removeDir, testPki, tlsFilesIn, writeTlsFiles, type TlsFileSet } from './__fixtures__/test-certs.js';

jest.setTimeout(60_000);
beforeAll(() => testPki(), 120_000);

const identity = (b: Buffer): Buffer => b;
const method = (name: string): grpc.MethodDefinition<Buffer, Buffer> => ({
  path: `/pmem.test.Echo/${name}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity,
});
const service: grpc.ServiceDefinition = { echo: method('Echo'), whoami: method('WhoAmI') };
const EchoClient = grpc.makeGenericClientConstructor(service, 'Echo');
type Echo = InstanceType<typeof EchoClient>;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function fileSet(caPem: string, pair: CertificateAndKey): Promise<TlsFileSet> {
  const set = await tlsFilesIn(caPem, pair);
  cleanups.push(() => removeDir(set.dir));
  return set;
}

/** An echo server whose handler waits `delayMs`; `whoami` uses peerIdentityCheck the way the gRPC wrapper does. */
async function startServer(creds: grpc.ServerCredentials, delayMs = 0): Promise<number> {
  const server = new grpc.Server();
  const check = peerIdentityCheck(NODE_CONTROLLER_IDENTITY);
  server.addService(service, {
    echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
      setTimeout(() => cb(null, call.request), delayMs);
    },
    whoami: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
      check(call);
      cb(null, Buffer.from(peerDnsNames(call.getAuthContext().sslPeerCertificate).join(',')));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p))),
  );
  cleanups.push(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  return port;
}

function client(port: number, creds: grpc.ChannelCredentials, options: grpc.ChannelOptions = {}): Echo {
  const c = new EchoClient(`127.0.0.1:${port}`, creds, options);
  cleanups.push(() => c.close());
  return c;
}

function call(c: Echo, name: 'echo' | 'whoami' = 'echo', payload = 'ping', timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const fn = c[name] as (
      req: Buffer,
      md: grpc.Metadata,
      opts: grpc.CallOptions,
      cb: (e: grpc.ServiceError | null, r?: Buffer) => void,
    ) => void;
    fn.call(c, Buffer.from(payload), new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) =>
      err ? reject(err) : resolve(res?.toString() ?? ''),
    );
  });
}

async function failureOf(p: Promise<unknown>): Promise<{ code: grpc.status; details: string }> {
  try {
    await p;
  } catch (e) {
    const err = e as grpc.ServiceError;
    return { code: err.code, details: err.details };
  }
  throw new Error('the call succeeded but was expected to fail');
}

/** A registry server (accepts only pmem-node-controller clients) with set A. */
async function registryServerA(pollIntervalMs = 1000): Promise<{ port: number; files: TlsFileSet }> {
  const { ca1, registryA } = await testPki();
  const files = await fileSet(ca1.certPem, registryA);
  const port = await startServer(
    await serverCredentials(files, { allowedClientSan: NODE_CONTROLLER_IDENTITY, pollIntervalMs }),
  );
  return { port, files };
}

/** Proves that a refusal was about the certificate: the same server serves a good client. */
async function expectGoodClientServed(port: number): Promise<void> {
  const { ca1, nodeControllerA } = await testPki();
  await expect(call(await nodeClient(port, ca1.certPem, nodeControllerA))).resolves.toBe('ping');
}

async function nodeClient(port: number, caPem: string, pair: CertificateAndKey): Promise<Echo> {
  return client(port, await channelCredentials(await fileSet(caPem, pair), { expectedServerName: REGISTRY_IDENTITY }));
}

describe('mutual TLS over grpc-js', () => {
  it('lets a node-controller client call the registry server, dialled by IP, and the peer check sees its SAN', async () => {
    const { ca1, nodeControllerA } = await testPki();
    const { port } = await registryServerA();
    const c = await nodeClient(port, ca1.certPem, nodeControllerA);
    await expect(call(c)).resolves.toBe('ping');
    await expect(call(c, 'whoami')).resolves.toBe(NODE_CONTROLLER_IDENTITY);
  });

  it('lets the registry call a node-controller server, which refuses node-controller clients', async () => {
    const { ca1, registryA, nodeControllerA } = await testPki();
    const serverFiles = await fileSet(ca1.certPem, nodeControllerA);
    const port = await startServer(await serverCredentials(serverFiles, { allowedClientSan: REGISTRY_IDENTITY }));
    const asRegistry = client(
      port,
      await channelCredentials(await fileSet(ca1.certPem, registryA), { expectedServerName: NODE_CONTROLLER_IDENTITY }),
    );
    await expect(call(asRegistry)).resolves.toBe('ping');
    const asNode = client(
      port,
      await channelCredentials(await fileSet(ca1.certPem, nodeControllerA), {
        expectedServerName: NODE_CONTROLLER_IDENTITY,
      }),
    );
    await expect(failureOf(call(asNode))).resolves.toEqual({
      code: grpc.status.PERMISSION_DENIED,
      details: 'client certificate DNS SAN must include pmem-registry (has: pmem-node-controller)',
    });
  });

  it('refuses a client certificate signed by another CA: UNAVAILABLE', async () => {
    const { ca1, foreignNodeController } = await testPki();
    const { port } = await registryServerA();
    const c = await nodeClient(port, ca1.certPem, foreignNodeController);
    const f = await failureOf(call(c));
    expect(f.code).toBe(grpc.status.UNAVAILABLE);
    expect(f.details).toMatch(/^No connection established/); // TLS 1.3: the server's alert ends the new connection
    await expectGoodClientServed(port);
  });

  it('refuses an expired client certificate: UNAVAILABLE', async () => {
    const { ca1, expiredNodeController } = await testPki();
    const { port } = await registryServerA();
    const c = await nodeClient(port, ca1.certPem, expiredNodeController);
    const f = await failureOf(call(c));
    expect(f.code).toBe(grpc.status.UNAVAILABLE);
    expect(f.details).toMatch(/^No connection established/);
    await expectGoodClientServed(port);
  });

  it('refuses a client with a valid certificate of the wrong identity: PERMISSION_DENIED', async () => {
    const { ca1, registryA } = await testPki();
    const { port } = await registryServerA();
    const c = await nodeClient(port, ca1.certPem, registryA); // SAN pmem-registry, pmem-node-controller required
    await expect(failureOf(call(c))).resolves.toEqual({
      code: grpc.status.PERMISSION_DENIED,
      details: 'client certificate DNS SAN must include pmem-node-controller (has: pmem-registry)',
    });
    await expect(failureOf(call(c, 'whoami'))).resolves.toEqual({
      code: grpc.status.PERMISSION_DENIED,
      details: 'client certificate DNS SAN must include pmem-node-controller (has: pmem-registry)',
    });
    await expectGoodClientServed(port);
  });

  it('reads the client certificate once per connection, not per call, and keeps refusing the wrong identity', async () => {
    const { ca1, nodeControllerA, registryA } = await testPki();
    const { port } = await registryServerA();
    const reads = jest.spyOn(tls.TLSSocket.prototype, 'getPeerCertificate');
    cleanups.push(() => reads.mockRestore());
    const good = await nodeClient(port, ca1.certPem, nodeControllerA);
    await expect(call(good)).resolves.toBe('ping'); // handshake: client and server each read the other's certificate
    const afterFirst = reads.mock.calls.length;
    for (let i = 0; i < 10; i++) await expect(call(good)).resolves.toBe('ping');
    expect(reads.mock.calls.length).toBe(afterFirst); // ten more calls on the same connection: no certificate read
    const bad = await nodeClient(port, ca1.certPem, registryA);
    for (let i = 0; i < 3; i++) {
      await expect(failureOf(call(bad))).resolves.toEqual({
        code: grpc.status.PERMISSION_DENIED,
        details: 'client certificate DNS SAN must include pmem-node-controller (has: pmem-registry)',
      });
    }
    await expect(call(good)).resolves.toBe('ping');
  });

  it('refuses a client without a certificate (server-auth-only TLS): UNAVAILABLE', async () => {
    const { ca1 } = await testPki();
    const { port } = await registryServerA();
    const creds = grpc.credentials.createSsl(Buffer.from(ca1.certPem));
    const c = client(port, creds, { 'grpc.ssl_target_name_override': REGISTRY_IDENTITY });
    const f = await failureOf(call(c));
    expect(f.code).toBe(grpc.status.UNAVAILABLE);
    expect(f.details).toContain('alert certificate required');
    await expectGoodClientServed(port);
  });

  it('client refuses a server whose certificate has the wrong SAN: UNAVAILABLE naming the SAN', async () => {
    const { ca1, nodeControllerA } = await testPki();
    // A "registry" server presenting the node-controller certificate.
    const serverFiles = await fileSet(ca1.certPem, nodeControllerA);
    const port = await startServer(
      await serverCredentials(serverFiles, { allowedClientSan: NODE_CONTROLLER_IDENTITY }),
    );
    const c = await nodeClient(port, ca1.certPem, nodeControllerA);
    const f = await failureOf(call(c));
    expect(f.code).toBe(grpc.status.UNAVAILABLE);
    expect(f.details).toContain('server certificate DNS SAN must include pmem-registry (has: pmem-node-controller)');
  });

  it('client refuses a server signed by another CA: UNAVAILABLE', async () => {
    const { ca2, nodeControllerB } = await testPki();
    const { port } = await registryServerA();
    const c = await nodeClient(port, ca2.certPem, nodeControllerB);
    const f = await failureOf(call(c));
    expect(f.code).toBe(grpc.status.UNAVAILABLE);
    expect(f.details).toContain('self-signed certificate in certificate chain'); // the server sends its chain up to CA1
  });

  it('never negotiates below TLS 1.2, also after a reload', async () => {
    const { ca1, ca2, registryA } = await testPki();
    const files = await fileSet(ca1.certPem, registryA);
    const source = await TlsFileSource.open(files, { pollIntervalMs: 20 });
    cleanups.push(() => source.close());
    const port = await startServer(serverCredentialsFromSource(source, { allowedClientSan: NODE_CONTROLLER_IDENTITY }));
    const tls11 = (): Promise<string> =>
      new Promise((resolve) => {
        const s = tls.connect(
          {
            host: '127.0.0.1',
            port,
            maxVersion: 'TLSv1.1',
            minVersion: 'TLSv1',
            ciphers: 'DEFAULT@SECLEVEL=0',
            rejectUnauthorized: false,
          },
          () => {
            resolve(`connected with ${s.getProtocol()}`);
            s.destroy();
          },
        );
        s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      });
    expect(await tls11()).toBe('ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    await writeTlsFiles(files.dir, ca1.certPem + ca2.certPem, registryA);
    await waitFor(() => source.generation === 2);
    expect(await tls11()).toBe('ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    // The client certificate is still required after the context swap.
    const noCert = client(port, grpc.credentials.createSsl(Buffer.from(ca1.certPem)), {
      'grpc.ssl_target_name_override': REGISTRY_IDENTITY,
    });
    await expect(failureOf(call(noCert))).resolves.toMatchObject({ code: grpc.status.UNAVAILABLE });
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('certificate rotation', () => {
  it('rotates to a new CA and certificates while calls are in flight, with zero failed calls', async () => {
    const { ca1, ca2, registryA, registryB, nodeControllerA, nodeControllerB } = await testPki();
    const bundle = ca1.certPem + ca2.certPem;
    const serverFiles = await fileSet(ca1.certPem, registryA);
    const source = await TlsFileSource.open(serverFiles, { pollIntervalMs: 50 });
    cleanups.push(() => source.close());
    const port = await startServer(
      serverCredentialsFromSource(source, { allowedClientSan: NODE_CONTROLLER_IDENTITY }),
      5,
    );
    const filesA = await fileSet(ca1.certPem, nodeControllerA);
    const credsA = await channelCredentials(filesA, { expectedServerName: REGISTRY_IDENTITY, pollIntervalMs: 50 });
    const oldClients = [client(port, credsA), client(port, credsA, { 'grpc.use_local_subchannel_pool': 1 })];

    const stats = { ok: 0, failed: [] as string[], okAfterRotation: 0, inFlight: 0, inFlightAtSwaps: [] as number[] };
    source.onChange(() => stats.inFlightAtSwaps.push(stats.inFlight));
    let rotated = false;
    let stop = false;
    const worker = async (c: Echo, id: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        stats.inFlight += 1;
        try {
          await call(c, 'echo', `w${id}-${i}`);
          stats.ok += 1;
          if (rotated) stats.okAfterRotation += 1;
        } catch (e) {
          stats.failed.push(`${(e as grpc.ServiceError).code}: ${(e as grpc.ServiceError).details}`);
        } finally {
          stats.inFlight -= 1;
        }
      }
    };
    const workers = Array.from({ length: 8 }, (_, i) => worker(oldClients[i % 2] as Echo, i));
    await waitFor(() => stats.ok >= 50);

    // 1. Trust overlap: every party trusts CA1 and CA2.
    await writeTlsFiles(filesA.dir, bundle, nodeControllerA);
    await writeTlsFiles(serverFiles.dir, bundle, registryA);
    await waitFor(() => source.generation === 2);
    // 2. New server certificate from CA2 (cert then key: an inconsistent moment the source must ride out).
    await writeFile(serverFiles.certFile, registryB.certPem);
    await new Promise((r) => setTimeout(r, 120));
    await writeFile(serverFiles.keyFile, registryB.keyPem);
    await waitFor(() => source.generation === 3);
    expect(source.current.certificate.fingerprint256).not.toBe('');
    rotated = true;

    // New clients with set B succeed; a new connection with set A (CA1 certificate, bundle) too.
    const b = await nodeClient(port, bundle, nodeControllerB);
    await expect(call(b, 'whoami')).resolves.toBe(NODE_CONTROLLER_IDENTITY);
    const freshA = client(port, await channelCredentials(filesA, { expectedServerName: REGISTRY_IDENTITY }));
    await expect(call(freshA)).resolves.toBe('ping');
    const bOnlyCa2 = await nodeClient(port, ca2.certPem, nodeControllerB);
    await expect(call(bOnlyCa2)).resolves.toBe('ping');

    await waitFor(() => stats.ok >= 200 && stats.okAfterRotation >= 50, 30_000);
    stop = true;
    await Promise.all(workers);
    expect(stats.failed).toEqual([]);
    expect(stats.ok).toBeGreaterThanOrEqual(200);
    expect(stats.inFlightAtSwaps).toHaveLength(2); // CA bundle, then the new certificate and key
    expect(stats.inFlightAtSwaps.every((n) => n > 0)).toBe(true);
  });
});
