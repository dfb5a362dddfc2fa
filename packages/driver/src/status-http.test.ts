import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeDriver, NodeStatus } from '@pmem-csi/node';
import { createLogger } from '@pmem-csi/runtime';
import { nodeStatusSource, renderNodeMetrics, serveStatus, type StatusServer } from './status-http.js';

const GiB = 1024 ** 3;

/** One HTTP request; resolves with status code and body. */
function fetchText(url: string, method = 'GET'): Promise<{ code: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body, type: String(res.headers['content-type']) }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within 5 s`)));
    req.on('error', reject);
    req.end();
  });
}

describe('renderNodeMetrics', () => {
  const base: NodeStatus = {
    nodeId: 'n1', deviceMode: 'lvm', version: '0.1.0',
    capacity: { total: 4 * GiB, managed: 3 * GiB, available: 2 * GiB, maxVolumeSize: GiB },
    volumes: { persistent: 2, ephemeral: 1 },
  };

  it('capacity by kind and volumes by kind; registration when there is a registry', () => {
    const m = renderNodeMetrics({ ...base, registration: { registered: true, registrationId: 'r1', registrations: 3 } });
    expect(m).toContain(`pmem_csi_node_capacity_bytes{node="n1",kind="available"} ${2 * GiB}\n`);
    expect(m).toContain(`pmem_csi_node_capacity_bytes{node="n1",kind="maxVolumeSize"} ${GiB}\n`);
    expect(m).toContain('pmem_csi_node_volumes{node="n1",kind="persistent"} 2\n');
    expect(m).toContain('pmem_csi_node_volumes{node="n1",kind="ephemeral"} 1\n');
    expect(m).toContain('pmem_csi_node_registered{node="n1"} 1\n');
    expect(m).toContain('pmem_csi_node_registrations_total{node="n1"} 3\n');
    // Every sample line belongs to a declared family.
    const families = new Set([...m.matchAll(/^# TYPE (\S+) /gm)].map((x) => x[1]));
    for (const line of m.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) expect(families).toContain(line.split('{')[0]);
  });

  it('an unregistered node says 0; without a registry there is no registration sample', () => {
    const failure = { reason: 'connection-refused' as const, code: 'UNAVAILABLE', detail: 'connect ECONNREFUSED', hint: 'is the controller running?' };
    expect(renderNodeMetrics({ ...base, registration: { registered: false, registrations: 0, lastFailure: failure } }))
      .toContain('pmem_csi_node_registered{node="n1"} 0\n');
    expect(renderNodeMetrics(base)).not.toMatch(/^pmem_csi_node_registered\{/m);
  });
});

describe('serveStatus', () => {
  let server: StatusServer;
  let fail = false;

  beforeAll(async () => {
    server = await serveStatus('127.0.0.1:0', {
      status: () => {
        if (fail) throw new Error('device manager did not answer within 10000 ms');
        return { nodeId: 'n1' };
      },
      metrics: () => Promise.resolve('pmem_csi_node_volumes{node="n1",kind="persistent"} 0\n'),
    });
  });

  afterAll(async () => {
    await server.close();
  });

  it('serves /healthz, /readyz, /status and /metrics; refuses other methods and paths', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await fetchText(`${server.url}/healthz`)).toMatchObject({ code: 200, body: 'ok\n' });
    expect(await fetchText(`${server.url}/readyz`)).toMatchObject({ code: 200, body: 'ok\n' });
    expect(await fetchText(`${server.url}/status`)).toMatchObject({ code: 200, type: 'application/json' });
    expect(JSON.parse((await fetchText(`${server.url}/status`)).body)).toEqual({ nodeId: 'n1' });
    expect(await fetchText(`${server.url}/metrics?x=1`)).toMatchObject({ code: 200, type: 'text/plain; version=0.0.4' });
    expect(await fetchText(`${server.url}/metrics`, 'POST')).toMatchObject({ code: 405, body: 'only GET\n' });
    expect(await fetchText(`${server.url}/secrets`)).toMatchObject({ code: 404, body: 'endpoints: /healthz /readyz /status /metrics\n' });
  });

  it('a status that cannot be read → 503 with the reason, and the server keeps serving', async () => {
    fail = true;
    try {
      expect(await fetchText(`${server.url}/status`)).toEqual({ code: 503, type: 'text/plain', body: 'status unavailable: device manager did not answer within 10000 ms\n' });
    } finally {
      fail = false;
    }
    expect(await fetchText(`${server.url}/status`)).toMatchObject({ code: 200 });
  });

  it('a port in use → the listen error', async () => {
    const port = new URL(server.url).port;
    await expect(serveStatus(`127.0.0.1:${port}`, { status: () => ({}), metrics: () => '' })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});

describe('a node driver (fake devices, no registry) on its status endpoint', () => {
  let dir: string;
  let node: NodeDriver;
  let server: StatusServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-node-status-'));
    // Imported the way modes.ts does (the driver loads a mode's package only when it runs that mode).
    const { startNodeDriver } = await import('@pmem-csi/node');
    node = await startNodeDriver({
      driverName: 'pmem-csi.intel.com', nodeId: 'n1', deviceMode: 'fake', deviceOptions: { fakeSize: 4 * GiB }, stateDir: join(dir, 'state'),
      csiEndpoint: `unix://${join(dir, 'csi.sock')}`, nodeControllerAddress: '127.0.0.1:0',
      serverCredentials: grpc.ServerCredentials.createInsecure(), channelCredentials: grpc.credentials.createInsecure(),
      log: createLogger({ sink: () => undefined }),
    });
    server = await serveStatus('127.0.0.1:0', nodeStatusSource(() => node.status()));
  });

  afterAll(async () => {
    await server?.close();
    await node?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('/status and /metrics report its capacity and volumes', async () => {
    const status = JSON.parse((await fetchText(`${server.url}/status`)).body) as NodeStatus;
    expect(status).toEqual({ nodeId: 'n1', deviceMode: 'fake', version: '0.1.0', capacity: await node.deviceManager.getCapacity(), volumes: { persistent: 0, ephemeral: 0 } });
    expect(status.capacity.total).toBe(4 * GiB);
    const metrics = (await fetchText(`${server.url}/metrics`)).body;
    expect(metrics).toContain(`pmem_csi_node_capacity_bytes{node="n1",kind="total"} ${4 * GiB}\n`);
    expect(metrics).toContain('pmem_csi_node_volumes{node="n1",kind="persistent"} 0\n');
  });
});
