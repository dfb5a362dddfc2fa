// Refused mutual-TLS peers are logged by the server (issue 14, R3): a real grpc-js server bound with
// bindServer and serverCredentials, real node:tls and grpc-js clients. Each refusal — no client
// certificate, a foreign CA, an expired certificate, TLS 1.0, a static-RSA or CBC-SHA1 cipher, a
// wrong identity — gives one warn line with the peer, a code and the reason, and no line carries key
// material. Before, the servers logged nothing and accepted TLS 1.2 ciphers without forward secrecy.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { connect, type ConnectionOptions } from 'node:tls';
import { NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY } from '../certs/names.js';
import type { CertificateAndKey } from '../certs/generate.js';
import { bindServer, createServer } from '../grpc/server.js';
import { createLogger } from '../logger.js';
import { PING_SERVICE, removeDir, testPki, tlsFilesIn, type TestPki } from './__fixtures__/test-certs.js';
import { serverCredentials } from './server-credentials.js';
import { TlsRefusalLog } from './refusal-log.js';

interface Line {
  level: string;
  msg: string;
  peer?: string;
  code?: string;
  reason?: string;
  count?: number;
}

/** Connect and wait for the server's verdict: an answer to the HTTP/2 preface, an alert, or a close. */
function handshake(port: number, options: ConnectionOptions): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({
      host: '127.0.0.1',
      port,
      servername: REGISTRY_IDENTITY,
      ALPNProtocols: ['h2'],
      rejectUnauthorized: false,
      ...options,
    });
    socket.once('secureConnect', () =>
      socket.write(
        Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]),
      ),
    );
    socket.once('data', () => {
      socket.destroy();
      resolve('accepted');
    });
    socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    socket.once('close', () => resolve('closed'));
  });
}

describe('refused mutual-TLS peers are logged by the server', () => {
  let pki: TestPki;
  let port: number;
  let server: grpc.Server;
  const lines: Line[] = [];
  const raw: string[] = [];
  const dirs: string[] = [];
  const pair = (p: CertificateAndKey): ConnectionOptions => ({ cert: p.certPem, key: p.keyPem, ca: pki.ca1.certPem });

  beforeAll(async () => {
    pki = await testPki();
    const files = await tlsFilesIn(pki.ca1.certPem, pki.registryA);
    dirs.push(files.dir);
    const log = createLogger({
      format: 'json',
      sink: (l) => {
        raw.push(l);
        lines.push(JSON.parse(l) as Line);
      },
    });
    server = createServer();
    server.addService(PING_SERVICE, {
      ping: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => cb(null, call.request),
    });
    port = await bindServer(
      server,
      '127.0.0.1:0',
      await serverCredentials(files, { allowedClientSan: NODE_CONTROLLER_IDENTITY, logger: log }),
    );
  }, 120_000);

  afterAll(async () => {
    server.forceShutdown();
    for (const d of dirs) await removeDir(d);
  });

  const refusals = (): Line[] =>
    lines.filter((l) => l.msg === 'TLS handshake refused' || l.msg === 'mutual TLS call refused');
  async function lastRefusalAfter(before: number): Promise<Line | undefined> {
    for (let i = 0; i < 50 && refusals().length <= before; i++) await new Promise((r) => setTimeout(r, 20));
    return refusals().at(-1);
  }

  it('accepts the right client over TLS 1.3 and with a forward-secret TLS 1.2 cipher, logging nothing', async () => {
    expect(await handshake(port, pair(pki.nodeControllerA))).toBe('accepted');
    expect(
      await handshake(port, {
        ...pair(pki.nodeControllerA),
        maxVersion: 'TLSv1.2',
        ciphers: 'ECDHE-RSA-AES128-GCM-SHA256',
      }),
    ).toBe('accepted');
    expect(refusals()).toEqual([]);
  });

  it.each<[string, () => ConnectionOptions, string, string]>([
    [
      'no client certificate',
      () => ({ ca: pki.ca1.certPem }),
      'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE',
      'peer did not return a certificate',
    ],
    [
      'a certificate of a foreign CA',
      () => pair(pki.foreignNodeController),
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'the client certificate is not signed by a trusted CA',
    ],
    [
      'an expired certificate',
      () => pair(pki.expiredNodeController),
      'CERT_HAS_EXPIRED',
      'the client certificate has expired',
    ],
    [
      'TLS 1.0',
      () => ({ ...pair(pki.nodeControllerA), minVersion: 'TLSv1', maxVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' }),
      'ERR_SSL_UNSUPPORTED_PROTOCOL',
      'unsupported protocol',
    ],
    [
      'static RSA key exchange (no forward secrecy)',
      () => ({ ...pair(pki.nodeControllerA), maxVersion: 'TLSv1.2', ciphers: 'AES128-GCM-SHA256' }),
      'ERR_SSL_NO_SHARED_CIPHER',
      'no shared cipher',
    ],
    [
      'CBC with SHA-1',
      () => ({ ...pair(pki.nodeControllerA), maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA' }),
      'ERR_SSL_NO_SHARED_CIPHER',
      'no shared cipher',
    ],
  ])('%s: refused and logged with the peer, the code and the reason', async (_what, options, code, reason) => {
    const before = refusals().length;
    expect(await handshake(port, options())).not.toBe('accepted');
    expect(await lastRefusalAfter(before)).toMatchObject({
      level: 'warn',
      msg: 'TLS handshake refused',
      code,
      reason,
      peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    });
  });

  it('a verified certificate of the wrong identity: PERMISSION_DENIED, logged as a refused call', async () => {
    const before = refusals().length;
    const creds = grpc.credentials.createSsl(
      Buffer.from(pki.ca1.certPem),
      Buffer.from(pki.registryA.keyPem),
      Buffer.from(pki.registryA.certPem),
    );
    const client = new grpc.Client(`127.0.0.1:${port}`, creds, { 'grpc.ssl_target_name_override': REGISTRY_IDENTITY });
    const err = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        '/t.T/Ping',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from('x'),
        { deadline: Date.now() + 5000 },
        (e) => resolve(e),
      ),
    );
    client.close();
    expect(err?.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(await lastRefusalAfter(before)).toMatchObject({
      msg: 'mutual TLS call refused',
      code: 'PERMISSION_DENIED',
      reason: 'client certificate DNS SAN must include pmem-node-controller (has: pmem-registry)',
    });
  });

  it('no log line carries key material', () => {
    const keyLines = [pki.registryA, pki.nodeControllerA, pki.foreignNodeController, pki.expiredNodeController].flatMap(
      (p) => p.keyPem.split('\n').filter((l) => l !== '' && !l.startsWith('-----')),
    );
    expect(raw.length).toBeGreaterThan(6);
    for (const line of raw) {
      expect(line).not.toContain('PRIVATE KEY');
      for (const k of keyLines) expect(line).not.toContain(k);
    }
  });

  it('at most `limit` lines per window; the rest are counted when the next window opens', async () => {
    const out: Line[] = [];
    const log = new TlsRefusalLog(createLogger({ format: 'json', sink: (l) => out.push(JSON.parse(l) as Line) }), {
      limit: 2,
      windowMs: 50,
    });
    for (let i = 0; i < 5; i++) log.callRefused(`10.0.0.1:${i}`, 'PERMISSION_DENIED', 'wrong identity');
    expect(out.map((l) => l.peer)).toEqual(['10.0.0.1:0', '10.0.0.1:1']);
    await new Promise((r) => setTimeout(r, 60));
    log.callRefused('10.0.0.1:9', 'PERMISSION_DENIED', 'wrong identity');
    expect(out.slice(2)).toMatchObject([
      { msg: 'mutual TLS refusals not logged (too many)', count: 3 },
      { peer: '10.0.0.1:9' },
    ]);
  });
});
