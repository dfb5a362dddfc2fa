// bindServer with a listen backlog of ours (issue 28): grpc-js listens with Node's default of 511,
// which a 5,000-node registration storm overflows. The listener is ours and hands connections to
// grpc-js's connection injector; this checks that the kernel holds our backlog, that mutual TLS,
// the identity check and the refusal log work as on a port grpc-js binds, and that shutdownServer
// closes our listener. The backlog is read back from the kernel with `ss` (iproute2), which
// reports a listening socket's backlog as its Send-Q.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { listenBacklog } from '../testing/listen-backlog.js';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY } from '../certs/names.js';
import { InvalidArgumentError } from '@pmem-csi/csi';
import { createLogger } from '../logger.js';
import {
  PING_SERVICE,
  ping,
  pingClient,
  removeDir,
  testPki,
  tlsFilesIn,
  type TestPki,
} from '../tls/__fixtures__/test-certs.js';
import { serverCredentials } from '../tls/server-credentials.js';
import { bindServer, createServer, shutdownServer } from './server.js';

/** Whether a plain TCP connection to the port is accepted. */
function tcpAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

const echo = PING_SERVICE;

interface Line {
  msg: string;
  peer?: string;
  code?: string;
  reason?: string;
}

describe('bindServer with a backlog of ours, mutual TLS', () => {
  let pki: TestPki;
  let server: grpc.Server;
  let port: number;
  const lines: Line[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    pki = await testPki();
    const files = await tlsFilesIn(pki.ca1.certPem, pki.registryA);
    dirs.push(files.dir);
    const log = createLogger({ format: 'json', sink: (l) => lines.push(JSON.parse(l) as Line) });
    server = createServer();
    server.addService(echo, {
      ping: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => cb(null, call.request),
    });
    const creds = await serverCredentials(files, { allowedClientSan: NODE_CONTROLLER_IDENTITY, logger: log });
    port = await bindServer(server, '127.0.0.1:0', creds, { backlog: 37, log });
  }, 120_000);

  afterAll(async () => {
    await shutdownServer(server, 0);
    for (const d of dirs) await removeDir(d);
  });

  const client = (cert: { certPem: string; keyPem: string }): grpc.Client => pingClient(pki.ca1.certPem, port, cert);

  it('listens with the backlog given (the kernel reports 37, not 511)', () => {
    expect(listenBacklog(port)).toBe(37);
  });

  it('answers a client with the allowed identity over mutual TLS', async () => {
    const c = client(pki.nodeControllerA);
    try {
      expect((await ping(c)).toString()).toBe('hi');
    } finally {
      c.close();
    }
  });

  it('refuses a verified certificate of another identity with PERMISSION_DENIED, logged', async () => {
    const c = client(pki.registryA);
    try {
      await expect(ping(c)).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    } finally {
      c.close();
    }
    expect(lines.filter((l) => l.msg === 'mutual TLS call refused').at(-1)).toMatchObject({
      code: 'PERMISSION_DENIED',
      peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/) as unknown as string,
    });
  });

  it('logs a handshake without a client certificate as refused, with the peer address', async () => {
    const before = lines.length;
    const localPort = await new Promise<number>((resolve) => {
      const s = tlsConnect({ host: '127.0.0.1', port, servername: REGISTRY_IDENTITY, ca: pki.ca1.certPem });
      let local = 0;
      s.once('connect', () => (local = s.localPort ?? 0));
      s.once('error', () => resolve(local));
      s.once('close', () => resolve(local));
    });
    for (let i = 0; i < 50 && !lines.slice(before).some((l) => l.msg === 'TLS handshake refused'); i++)
      await new Promise((r) => setTimeout(r, 20));
    const refused = lines.slice(before).find((l) => l.msg === 'TLS handshake refused');
    expect(refused).toMatchObject({ peer: `127.0.0.1:${localPort}` });
    expect(refused?.reason).toMatch(/certificate/i);
  });

  it('stops accepting connections once shut down', async () => {
    const other = createServer();
    other.addService(echo, { ping: (_c: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, Buffer.alloc(0)) });
    const p = await bindServer(other, '127.0.0.1:0', grpc.ServerCredentials.createInsecure(), { backlog: 8 });
    expect(await tcpAccepts(p)).toBe(true);
    await shutdownServer(other, 0);
    expect(await tcpAccepts(p)).toBe(false);
  });
});

describe('bindServer refuses a backlog listener it cannot make', () => {
  it.each([
    [
      'no port',
      'localhost',
      { backlog: 8 },
      'listen address "localhost" must be host:port ([v6]:port) with a port in 0..65535',
    ],
    [
      'a port out of range',
      '127.0.0.1:70000',
      { backlog: 8 },
      'listen address "127.0.0.1:70000" must be host:port ([v6]:port) with a port in 0..65535',
    ],
    ['a backlog of 0', '127.0.0.1:0', { backlog: 0 }, 'backlog 0 of 127.0.0.1:0 must be a positive integer'],
  ])('%s', async (_name, address, options, message) => {
    const s = createServer();
    const err = await bindServer(s, address, grpc.ServerCredentials.createInsecure(), options).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toBe(message);
    s.forceShutdown();
  });
});
