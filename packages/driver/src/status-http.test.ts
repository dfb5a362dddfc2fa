import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  call,
  createRequest,
  failure,
  startScriptedNode,
  startTestController,
  waitFor,
  type TestController,
} from '@pmem-csi/controller/testing';
import type { ScriptedNode } from '@pmem-csi/controller/testing';
import type { NodeDriver, NodeStatus } from '@pmem-csi/node';
import { type csi, GiB } from '@pmem-csi/csi';
import { type ControllerClient, createLogger, createProcessRegistry, loadCsi, unary } from '@pmem-csi/runtime';
import { controllerStatusSource, nodeStatusSource, serveStatus, type StatusServer } from './status-http.js';

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

/** The value of the sample `series` (name and labels exactly as exposed), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Every sample line belongs to a family declared with # TYPE (the exposition is well formed). */
function expectWellFormed(text: string): void {
  const families = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] ?? '', m[2] ?? ''] as const);
  const names = new Set(
    families.flatMap(([n, t]) => (t === 'histogram' ? [`${n}_bucket`, `${n}_sum`, `${n}_count`] : [n])),
  );
  for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#')))
    expect(names).toContain(line.split(/[{ ]/)[0]);
}

const ops = (driver: string, method: string, code: string, suffix = 'count'): string =>
  `csi_plugin_operations_seconds_${suffix}{driver_name="${driver}",method_name="${method}",grpc_status_code="${code}"}`;

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
    expect(await fetchText(`${server.url}/metrics?x=1`)).toMatchObject({
      code: 200,
      type: 'text/plain; version=0.0.4; charset=utf-8',
    });
    expect(await fetchText(`${server.url}/metrics`, 'POST')).toMatchObject({ code: 405, body: 'only GET\n' });
    expect(await fetchText(`${server.url}/secrets`)).toMatchObject({
      code: 404,
      body: 'endpoints: /healthz /readyz /status /metrics\n',
    });
  });

  it('a status that cannot be read → 503 with the reason, and the server keeps serving', async () => {
    fail = true;
    try {
      expect(await fetchText(`${server.url}/status`)).toEqual({
        code: 503,
        type: 'text/plain',
        body: 'status unavailable: device manager did not answer within 10000 ms\n',
      });
    } finally {
      fail = false;
    }
    expect(await fetchText(`${server.url}/status`)).toMatchObject({ code: 200 });
  });

  it('a port in use → the listen error', async () => {
    const port = new URL(server.url).port;
    await expect(serveStatus(`127.0.0.1:${port}`, { status: () => ({}), metrics: () => '' })).rejects.toMatchObject({
      code: 'EADDRINUSE',
    });
  });
});

describe('the controller on its status endpoint', () => {
  let tc: TestController;
  let node: ScriptedNode;
  let server: StatusServer;
  const scrape = async (): Promise<string> => (await fetchText(`${server.url}/metrics`)).body;

  beforeAll(async () => {
    const metrics = createProcessRegistry({ component: 'controller', version: '9.9.9' });
    tc = await startTestController({ metrics });
    server = await serveStatus('127.0.0.1:0', controllerStatusSource(tc.controller));
  });

  afterAll(async () => {
    await server?.close();
    await node?.stop();
    await tc?.stop();
  });

  it('registry gauges, volumes and CSI operations move with the work done', async () => {
    const before = await scrape();
    expect(
      sample(before, `pmem_csi_build_info{component="controller",version="9.9.9",node_version="${process.version}"}`),
    ).toBe(1);
    expect(sample(before, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sample(before, 'pmem_csi_controller_nodes{state="available"}')).toBe(0);
    expect(sample(before, 'pmem_csi_controller_volumes')).toBe(0);
    expect(sample(before, 'pmem_csi_controller_lease_expiries_total')).toBe(0);

    node = await startScriptedNode(tc, { nodeId: 'n1', freeBytes: 4 * GiB });
    const registered = await scrape();
    expect(sample(registered, 'pmem_csi_controller_nodes{state="available"}')).toBe(1);
    expect(sample(registered, 'pmem_csi_controller_node_available{node="n1"}')).toBe(1);
    expect(sample(registered, 'pmem_csi_controller_node_capacity_bytes{node="n1",kind="available"}')).toBe(4 * GiB);
    expect(
      sample(registered, ops('pmem-csi.intel.com', '/pmemcsi.registry.v1.Registry/RegisterController', 'OK')),
    ).toBe(1);

    const created = await call.create(
      tc.csi,
      createRequest('pvc-metrics', { capacity_range: { required_bytes: String(GiB) } }),
    );
    expect((await failure(call.create(tc.csi, { name: '' }))).code).toBe('INVALID_ARGUMENT');
    const after = await scrape();
    expect(sample(after, 'pmem_csi_controller_volumes')).toBe(1);
    expect(sample(after, 'pmem_csi_controller_node_volumes{node="n1"}')).toBe(1);
    expect(sample(after, ops('pmem-csi.intel.com', '/csi.v1.Controller/CreateVolume', 'OK'))).toBe(1);
    expect(sample(after, ops('pmem-csi.intel.com', '/csi.v1.Controller/CreateVolume', 'InvalidArgument'))).toBe(1);
    expect(sample(after, ops('pmem-csi.intel.com', '/csi.v1.Controller/CreateVolume', 'OK', 'sum'))).toBeGreaterThan(0);
    expectWellFormed(after);

    await call.delete(tc.csi, created.volume?.volume_id ?? '');
    expect(sample(await scrape(), 'pmem_csi_controller_volumes')).toBe(0);
  });

  it('a lease that runs out counts once, and the node shows unavailable until it registers again', async () => {
    tc.clock.advance(31_000); // past the 30 s lease: the node never renewed
    const expired = await scrape();
    expect(sample(expired, 'pmem_csi_controller_nodes{state="unavailable"}')).toBe(1);
    expect(sample(expired, 'pmem_csi_controller_node_available{node="n1"}')).toBe(0);
    await node.renew(); // NOT_FOUND for the expired registration, then a new registration
    await waitFor(() => tc.controller.status().nodes[0]?.state === 'available', 'n1 to become available again');
    const again = await scrape();
    expect(sample(again, 'pmem_csi_controller_lease_expiries_total')).toBe(1);
    expect(sample(again, ops('pmem-csi.intel.com', '/pmemcsi.registry.v1.Registry/RenewController', 'NotFound'))).toBe(
      1,
    );
    expect(sample(again, 'pmem_csi_controller_nodes{state="available"}')).toBe(1);
  });
});

describe('a node driver (fake devices, no registry) on its status endpoint', () => {
  let dir: string;
  let node: NodeDriver;
  let server: StatusServer;
  let client: ControllerClient;
  const scrape = async (): Promise<string> => (await fetchText(`${server.url}/metrics`)).body;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-node-status-'));
    // Imported the way modes.ts does (the driver loads a mode's package only when it runs that mode).
    const { startNodeDriver } = await import('@pmem-csi/node');
    node = await startNodeDriver({
      driverName: 'pmem-csi.intel.com',
      nodeId: 'n1',
      deviceMode: 'fake',
      deviceOptions: { fakeSize: 4 * GiB },
      stateDir: join(dir, 'state'),
      csiEndpoint: `unix://${join(dir, 'csi.sock')}`,
      nodeControllerAddress: '127.0.0.1:0',
      serverCredentials: grpc.ServerCredentials.createInsecure(),
      channelCredentials: grpc.credentials.createInsecure(),
      log: createLogger({ sink: () => undefined }),
      metrics: createProcessRegistry({ component: 'node', version: '9.9.9' }),
    });
    server = await serveStatus('127.0.0.1:0', nodeStatusSource(node));
    client = new (loadCsi().csi.v1.Controller)(
      `127.0.0.1:${node.nodeControllerPort}`,
      grpc.credentials.createInsecure(),
    );
  });

  afterAll(async () => {
    client?.close();
    await server?.close();
    await node?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('/status and /metrics report its capacity and volumes', async () => {
    const status = JSON.parse((await fetchText(`${server.url}/status`)).body) as NodeStatus;
    expect(status).toEqual({
      nodeId: 'n1',
      deviceMode: 'fake',
      version: '0.1.0',
      capacity: await node.deviceManager.getCapacity(),
      volumes: { persistent: 0, ephemeral: 0 },
    });
    expect(status.capacity.total).toBe(4 * GiB);
    const metrics = await scrape();
    expect(sample(metrics, 'pmem_csi_node_capacity_bytes{node="n1",kind="total"}')).toBe(4 * GiB);
    expect(sample(metrics, 'pmem_csi_node_capacity_bytes{node="n1",kind="used"}')).toBe(0);
    expect(sample(metrics, 'pmem_csi_node_volumes{node="n1",kind="persistent"}')).toBe(0);
    expect(sample(metrics, 'pmem_csi_node_orphaned_devices{node="n1"}')).toBe(0);
    expect(
      sample(metrics, `pmem_csi_build_info{component="node",version="9.9.9",node_version="${process.version}"}`),
    ).toBe(1);
    expect(metrics).not.toMatch(/^pmem_csi_node_registered\{/m); // no registry configured
    expectWellFormed(metrics);
  });

  it('device operations and CSI calls are timed; capacity and volumes follow', async () => {
    const create = (req: csi.CreateVolumeRequest): Promise<csi.CreateVolumeResponse__Output> =>
      unary<csi.CreateVolumeRequest, csi.CreateVolumeResponse__Output>(client, client.CreateVolume, req, {
        timeoutMs: 10_000,
      });
    const req = (name: string, erase: boolean): csi.CreateVolumeRequest => ({
      name,
      capacity_range: { required_bytes: String(GiB) },
      parameters: { eraseafter: String(erase) },
      volume_capabilities: [{ mount: { fs_type: 'ext4' }, access_mode: { mode: 'SINGLE_NODE_WRITER' } }],
    });
    const a = await create(req('pvc-a', true));
    const b = await create(req('pvc-b', false));
    await expect(
      create({ ...req('pvc-huge', false), capacity_range: { required_bytes: String(64 * GiB) } }),
    ).rejects.toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    const mid = await scrape();
    expect(sample(mid, 'pmem_csi_node_volumes{node="n1",kind="persistent"}')).toBe(2);
    expect(sample(mid, 'pmem_csi_node_capacity_bytes{node="n1",kind="used"}')).toBe(2 * GiB);
    expect(sample(mid, 'pmem_csi_node_device_operation_seconds_count{node="n1",operation="create",result="ok"}')).toBe(
      2,
    );
    expect(sample(mid, ops('pmem-csi.intel.com', '/csi.v1.Controller/CreateVolume', 'OK'))).toBe(2);
    expect(sample(mid, ops('pmem-csi.intel.com', '/csi.v1.Controller/CreateVolume', 'ResourceExhausted'))).toBe(1);

    const del = (id: string): Promise<unknown> =>
      unary(client, client.DeleteVolume, { volume_id: id }, { timeoutMs: 10_000 });
    await del(a.volume?.volume_id ?? '');
    await del(b.volume?.volume_id ?? '');
    const after = await scrape();
    expect(sample(after, 'pmem_csi_node_device_operation_seconds_count{node="n1",operation="erase",result="ok"}')).toBe(
      1,
    );
    expect(
      sample(after, 'pmem_csi_node_device_operation_seconds_count{node="n1",operation="delete",result="ok"}'),
    ).toBe(1);
    expect(sample(after, 'pmem_csi_node_volumes{node="n1",kind="persistent"}')).toBe(0);
    expect(sample(after, 'pmem_csi_node_capacity_bytes{node="n1",kind="used"}')).toBe(0);
    expect(sample(after, ops('pmem-csi.intel.com', '/csi.v1.Controller/DeleteVolume', 'OK'))).toBe(2);
  });
});
