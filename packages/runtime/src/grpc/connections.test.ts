// ConnectionTracker on a real mutual-TLS server bound by bindServer (a backlog of ours): the peer a
// handler sees (call.getPeer()) is the peer the tracker knows while the client's connection is open,
// close listeners run when the client closes its channel, and the kernel keeps the accepted
// connection under TCP keepalive (read back from /proc/net/tcp: timer 2 is the keepalive timer).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { InvalidArgumentError } from '@pmem-csi/csi';
import { NODE_CONTROLLER_IDENTITY } from '../certs/names.js';
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
import { ConnectionTracker, peerOf } from './connections.js';
import { bindServer, createServer, shutdownServer } from './server.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/** The timer of the IPv4 TCP socket local:port ↔ remote:port from /proc/net/tcp ("02" = keepalive), or undefined. */
function tcpTimer(localPort: number, remotePort: number): string | undefined {
  const hex = (p: number): string => p.toString(16).toUpperCase().padStart(4, '0');
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 6) continue;
    if (f[1]?.endsWith(`:${hex(localPort)}`) && f[2]?.endsWith(`:${hex(remotePort)}`)) return f[5]?.split(':')[0];
  }
  return undefined;
}

describe('ConnectionTracker behind bindServer (mutual TLS)', () => {
  let pki: TestPki;
  let server: grpc.Server;
  let port: number;
  const tracker = new ConnectionTracker({ keepAliveMs: 7000 });
  const peers: string[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    pki = await testPki();
    const files = await tlsFilesIn(pki.ca1.certPem, pki.registryA);
    dirs.push(files.dir);
    server = createServer();
    server.addService(PING_SERVICE, {
      ping: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
        peers.push(call.getPeer());
        cb(null, call.request);
      },
    });
    const creds = await serverCredentials(files, { allowedClientSan: NODE_CONTROLLER_IDENTITY });
    port = await bindServer(server, '127.0.0.1:0', creds, { backlog: 64, connections: tracker });
  }, 120_000);

  afterAll(async () => {
    await shutdownServer(server, 0);
    for (const d of dirs) await removeDir(d);
  });

  const client = (): grpc.Client => pingClient(pki.ca1.certPem, port, pki.nodeControllerA);

  it('knows the peer of a call while its connection is open, and tells listeners when it closes', async () => {
    const c = client();
    await ping(c);
    const peer = peers.at(-1) as string;
    expect(peer).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(tracker.isOpen(peer)).toBe(true);
    const closed: string[] = [];
    const cancel = tracker.onClose(peer, () => closed.push('kept'));
    const cancelled = tracker.onClose(peer, () => closed.push('cancelled'));
    expect(cancel).toBeInstanceOf(Function);
    cancelled?.();
    await ping(c); // the same connection: the same peer
    expect(peers.at(-1)).toBe(peer);
    expect(closed).toEqual([]);
    c.close();
    await until('the close of the client connection', () => !tracker.isOpen(peer));
    expect(closed).toEqual(['kept']);
    expect(tracker.onClose(peer, () => closed.push('late'))).toBeUndefined();
  });

  it('gives each client connection its own peer, and the kernel probes it with TCP keepalive', async () => {
    const a = client();
    const b = client();
    try {
      await ping(a);
      const peerA = peers.at(-1) as string;
      await ping(b);
      const peerB = peers.at(-1) as string;
      expect(peerB).not.toBe(peerA);
      expect(tracker.isOpen(peerA) && tracker.isOpen(peerB)).toBe(true);
      expect(tracker.size).toBeGreaterThanOrEqual(2);
      const remotePort = Number(peerA.split(':').at(-1));
      expect(tcpTimer(port, remotePort)).toBe('02');
    } finally {
      a.close();
      b.close();
    }
  });

  it('reports a peer it never saw as not open', () => {
    expect(tracker.isOpen('127.0.0.1:1')).toBe(false);
    expect(tracker.onClose('127.0.0.1:1', () => undefined)).toBeUndefined();
  });
});

describe('ConnectionTracker refusals', () => {
  it('refuses tracking where bindServer does not accept the connections itself', async () => {
    const server = createServer();
    const tracker = new ConnectionTracker();
    const insecure = grpc.ServerCredentials.createInsecure();
    await expect(bindServer(server, '127.0.0.1:0', insecure, { connections: tracker })).rejects.toThrow(
      new InvalidArgumentError(
        'connection tracking of 127.0.0.1:0 needs a TCP address and a backlog: only connections accepted by our own listener can be tracked',
      ),
    );
    await expect(
      bindServer(server, 'unix:///tmp/pmem-csi-conn-test.sock', insecure, { backlog: 8, connections: tracker }),
    ).rejects.toThrow(/needs a TCP address and a backlog/);
  });

  it('refuses a keepalive shorter than a second, naming the option', () => {
    expect(() => new ConnectionTracker({ keepAliveMs: 10 })).toThrow(
      'keepAliveMs must be an integer of at least 1000, got 10',
    );
  });

  it('ignores a socket without a remote address', () => {
    const tracker = new ConnectionTracker();
    const s = new Socket();
    expect(peerOf(s)).toBeUndefined();
    tracker.attach(s);
    expect(tracker.size).toBe(0);
    s.destroy();
  });
});
