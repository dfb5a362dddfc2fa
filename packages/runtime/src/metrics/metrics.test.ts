import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import * as http2 from 'node:http2';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError } from '@pmem-csi/csi';
import { nullLogger } from '../logger.js';
import type { IdentityClient, IdentityHandlers } from '../generated/csi/v1/Identity.js';
import { unary } from '../grpc/client.js';
import { loadCsi } from '../grpc/protos.js';
import { adaptService, bindServer, grpcAddress, shutdownServer } from '../grpc/server.js';
import { TlsFileSource } from '../tls/source.js';
import { removeDir, testPki, tlsFilesIn, writeTlsFiles } from '../tls/__fixtures__/test-certs.js';
import { registerCertificateExpiry } from './certificates.js';
import { CSI_OPERATION_BUCKETS, CsiOperationMetrics, grpcCodeLabel } from './grpc.js';
import { Gauge } from 'prom-client';
import { createProcessRegistry, metricsText, registeredNames } from './registry.js';

/** The value of one sample line `name{labels} value` (labels in the order prom-client writes them). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('createProcessRegistry', () => {
  it('has build_info and the default process metrics, and nothing of another registry', async () => {
    const a = createProcessRegistry({ component: 'node', version: '1.2.3' });
    const b = createProcessRegistry({ component: 'controller', version: '1.2.3', processMetrics: false });
    const text = await metricsText(a);
    expect(
      sample(text, `pmem_csi_build_info{component="node",version="1.2.3",node_version="${process.version}"}`),
    ).toBe(1);
    expect(registeredNames(a)).toEqual(
      expect.arrayContaining([
        'process_cpu_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
        'nodejs_heap_size_used_bytes',
      ]),
    );
    expect(registeredNames(b)).toEqual(['pmem_csi_build_info']);
    expect(await metricsText(b)).not.toContain('component="node"');
  });

  it('writes a NaN value as the format spells it ("NaN"; prom-client says "Nan"), with labels or without', async () => {
    const registry = createProcessRegistry({ component: 'node', version: '1', processMetrics: false });
    new Gauge({ name: 'test_nan', help: 'h', registers: [registry] }).set(Number.NaN);
    new Gauge({ name: 'test_nan_labelled', help: 'h', labelNames: ['x'] as const, registers: [registry] }).set(
      { x: 'Nan' },
      Number.NaN,
    );
    const lines = (await metricsText(registry)).split('\n');
    expect(lines).toEqual(expect.arrayContaining(['test_nan NaN', 'test_nan_labelled{x="Nan"} NaN']));
    expect(lines.filter((l) => l.endsWith(' Nan'))).toEqual([]);
  });

  it('refuses an empty component or version', () => {
    expect(() => createProcessRegistry({ component: '', version: '1' })).toThrow('component must not be empty');
    expect(() => createProcessRegistry({ component: 'node', version: '' })).toThrow('version must not be empty');
  });
});

describe('grpcCodeLabel', () => {
  it('spells codes as grpc-go does', () => {
    expect([0, 1, 3, 4, 5, 14, 16].map(grpcCodeLabel)).toEqual([
      'OK',
      'Canceled',
      'InvalidArgument',
      'DeadlineExceeded',
      'NotFound',
      'Unavailable',
      'Unauthenticated',
    ]);
    expect(grpcCodeLabel(42)).toBe('Code(42)');
  });
});

describe('CsiOperationMetrics on a real server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metrics-grpc-'));
  const address = grpcAddress(join(dir, 'csi.sock'));
  const registry = createProcessRegistry({ component: 'test', version: '0', processMetrics: false });
  const ops = new CsiOperationMetrics(registry);
  let server: grpc.Server;
  let client: IdentityClient;

  beforeAll(async () => {
    const csi = loadCsi();
    server = ops.createServer('pmem-csi.intel.com');
    server.addService(
      csi.csi.v1.Identity.service,
      adaptService<IdentityHandlers>(
        'Identity',
        csi.csi.v1.Identity.service,
        {
          GetPluginInfo: async () => ({ name: 'pmem-csi.intel.com', vendor_version: '1' }),
          GetPluginCapabilities: async () => {
            throw new NotFoundError('nothing here');
          },
          Probe: async () => {
            await new Promise((r) => setTimeout(r, 150));
            return { ready: { value: true } };
          },
        },
        { log: nullLogger },
      ),
    );
    await bindServer(server, address, grpc.ServerCredentials.createInsecure());
    client = new csi.csi.v1.Identity(address, grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    client.close();
    await shutdownServer(server, 1000);
    rmSync(dir, { recursive: true, force: true });
  });

  const series = (method: string, code: string, suffix: string, le?: string): string =>
    `csi_plugin_operations_seconds_${suffix}{${le === undefined ? '' : `le="${le}",`}driver_name="pmem-csi.intel.com",method_name="/csi.v1.Identity/${method}",grpc_status_code="${code}"}`;

  it('times every call by full method and status code name', async () => {
    for (let i = 0; i < 3; i++) await unary(client, client.GetPluginInfo, {}, { timeoutMs: 5000 });
    await expect(unary(client, client.GetPluginCapabilities, {}, { timeoutMs: 5000 })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
    await unary(client, client.Probe, {}, { timeoutMs: 5000 });
    const text = await metricsText(registry);
    expect(text).toContain('# TYPE csi_plugin_operations_seconds histogram');
    expect(sample(text, series('GetPluginInfo', 'OK', 'count'))).toBe(3);
    expect(sample(text, series('GetPluginCapabilities', 'NotFound', 'count'))).toBe(1);
    expect(sample(text, series('Probe', 'OK', 'count'))).toBe(1);
    // Probe took >= 150 ms (its sum says how long exactly; on a loaded machine it may exceed
    // 250 ms): not in the 0.1 s bucket, and each cumulative bucket holds it exactly when its bound
    // is at least that duration.
    const probeSeconds = sample(text, series('Probe', 'OK', 'sum')) ?? Number.NaN;
    expect(probeSeconds).toBeGreaterThanOrEqual(0.14);
    expect(sample(text, series('Probe', 'OK', 'bucket', '0.1'))).toBe(0);
    for (const le of CSI_OPERATION_BUCKETS)
      expect([le, sample(text, series('Probe', 'OK', 'bucket', String(le)))]).toEqual([le, probeSeconds <= le ? 1 : 0]);
    expect(sample(text, series('Probe', 'OK', 'bucket', '+Inf'))).toBe(1);
    expect(sample(text, series('GetPluginInfo', 'OK', 'bucket', '600'))).toBe(3);
  });

  /** The count of Probe calls with one status code (0 when that series does not exist yet). */
  const probeCount = async (code: string): Promise<number> =>
    sample(await metricsText(registry), series('Probe', code, 'count')) ?? 0;

  /** Waits (bounded) until the Probe counts of DeadlineExceeded and Canceled together exceed `total`. */
  async function countedBeyond(total: number): Promise<void> {
    const until = Date.now() + 8_000;
    while ((await probeCount('DeadlineExceeded')) + (await probeCount('Canceled')) <= total) {
      if (Date.now() > until) throw new Error(`the server did not count the Probe call within 8 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 200)); // a second count, if any, would come by the handler's end
  }

  it("counts a call that the server's deadline ended as DeadlineExceeded", async () => {
    // A raw HTTP/2 client that sends grpc-timeout and never resets the stream: only the server's
    // own deadline can end the call (grpc-js's client would reset it when its own timer fires,
    // and that reset can reach a loaded server before the server's copy of the deadline passes).
    const [deadline, canceled] = [await probeCount('DeadlineExceeded'), await probeCount('Canceled')];
    const session = http2.connect('http://localhost', { createConnection: () => connect(join(dir, 'csi.sock')) });
    try {
      const stream = session.request({
        ':method': 'POST',
        ':path': '/csi.v1.Identity/Probe',
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-timeout': '50m',
      });
      stream.end(Buffer.alloc(5)); // one uncompressed frame holding an empty ProbeRequest
      const status = await new Promise<string | undefined>((resolve, reject) => {
        stream.on('trailers', (t) => resolve(String(t['grpc-status'])));
        stream.on('response', (h) => {
          if (h['grpc-status'] !== undefined) resolve(String(h['grpc-status'])); // trailers-only answer
        });
        stream.on('error', reject);
        stream.resume();
      });
      expect(status).toBe(String(grpc.status.DEADLINE_EXCEEDED));
    } finally {
      session.close();
    }
    await countedBeyond(deadline + canceled);
    expect({ deadline: await probeCount('DeadlineExceeded'), canceled: await probeCount('Canceled') }).toEqual({
      deadline: deadline + 1,
      canceled,
    });
  }, 15_000);

  it("counts a call that the client's deadline ended once, as DeadlineExceeded when the reset comes within the slack", async () => {
    const [deadline, canceled] = [await probeCount('DeadlineExceeded'), await probeCount('Canceled')];
    await expect(unary(client, client.Probe, {}, { timeoutMs: 50 })).rejects.toMatchObject({
      code: grpc.status.DEADLINE_EXCEEDED,
    });
    // The client's reset reaches the server first or its own deadline timer fires first; which
    // one is a race on a loaded machine (DEADLINE_SLACK_MS covers the usual gap). Either way the
    // call is counted exactly once.
    await countedBeyond(deadline + canceled);
    const after = { deadline: await probeCount('DeadlineExceeded'), canceled: await probeCount('Canceled') };
    expect(after.deadline - deadline + (after.canceled - canceled)).toBe(1);
  }, 15_000);

  it('counts a call the client cancelled once, as Canceled, though the handler answers later', async () => {
    const count = async (code: string): Promise<number> =>
      sample(await metricsText(registry), series('Probe', code, 'count')) ?? 0;
    const [ok, canceled, deadline] = [await count('OK'), await count('Canceled'), await count('DeadlineExceeded')];
    const code = await new Promise<number>((resolve) => {
      const call = client.Probe({}, { deadline: Date.now() + 5000 }, (e) => resolve(e?.code ?? grpc.status.OK));
      setTimeout(() => call.cancel(), 30);
    });
    expect(code).toBe(grpc.status.CANCELLED);
    await new Promise((r) => setTimeout(r, 250)); // the handler's answer (after 150 ms) comes and goes
    expect({
      ok: await count('OK'),
      canceled: await count('Canceled'),
      deadline: await count('DeadlineExceeded'),
    }).toEqual({ ok, canceled: canceled + 1, deadline });
  });

  it('counts each of many concurrent calls once, with the request passed through to the handler', async () => {
    const before = sample(await metricsText(registry), series('GetPluginInfo', 'OK', 'count')) ?? 0;
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => unary(client, client.GetPluginInfo, {}, { timeoutMs: 5000 })),
    );
    expect(answers.map((a) => a.name)).toEqual(answers.map(() => 'pmem-csi.intel.com'));
    expect(sample(await metricsText(registry), series('GetPluginInfo', 'OK', 'count'))).toBe(before + 40);
  });

  it('refuses an empty driver name', () => {
    expect(() => ops.interceptor('')).toThrow('driverName must not be empty');
  });
});

describe('registerCertificateExpiry', () => {
  it('reports the notAfter of the own certificate and of each CA, and follows a rotation', async () => {
    const pki = await testPki();
    const files = await tlsFilesIn(`${pki.ca1.certPem}${pki.ca2.certPem}`, pki.registryA);
    const source = await TlsFileSource.open(files, { pollIntervalMs: 50 });
    try {
      const registry = createProcessRegistry({ component: 'test', version: '0', processMetrics: false });
      registerCertificateExpiry(registry, [source]);
      const rows =
        (await registry.getSingleMetric('pmem_csi_certificate_expiry_timestamp_seconds')?.get())?.values ?? [];
      const own = rows.filter((r) => r.labels['role'] === 'certificate');
      expect(own).toHaveLength(1);
      expect(own[0]?.labels['file']).toBe(files.certFile);
      expect(own[0]?.value).toBe(source.current.certificate.notAfter.getTime() / 1000);
      expect(
        rows
          .filter((r) => r.labels['role'] === 'ca')
          .map((r) => r.labels['subject'])
          .sort(),
      ).toEqual(['test CA 1', 'test CA 2']);
      // A 30-day leaf: expires in about 30 days.
      const days = ((own[0]?.value ?? 0) - Date.now() / 1000) / 86400;
      expect(days).toBeGreaterThan(29);
      expect(days).toBeLessThan(31);

      await writeTlsFiles(files.dir, pki.ca2.certPem, pki.registryB);
      expect(await source.refresh()).toBe(true);
      const after =
        (await registry.getSingleMetric('pmem_csi_certificate_expiry_timestamp_seconds')?.get())?.values ?? [];
      expect(after.filter((r) => r.labels['role'] === 'ca').map((r) => r.labels['subject'])).toEqual(['test CA 2']);
      expect(after.find((r) => r.labels['role'] === 'certificate')?.labels['serial']).toBe(
        source.current.certificate.serial,
      );
    } finally {
      source.close();
      await removeDir(files.dir);
    }
  }, 60_000);
});
