import * as grpc from '@grpc/grpc-js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError } from '../errors.js';
import { createLogger } from '../logger.js';
import type { IdentityClient, IdentityHandlers } from '../generated/csi/v1/Identity.js';
import { unary } from './client.js';
import { loadCsi } from './protos.js';
import { adaptService, bindServer, grpcAddress, shutdownServer } from './server.js';

describe('adaptService over a real unix socket', () => {
  const dir = mkdtempSync(join(tmpdir(), 'grpc-test-'));
  const address = grpcAddress(join(dir, 'csi.sock'));
  const lines: string[] = [];
  let server: grpc.Server;
  let client: IdentityClient;
  let probeSignal: AbortSignal | undefined;

  beforeAll(async () => {
    const csi = loadCsi();
    server = new grpc.Server();
    const impl = adaptService<IdentityHandlers>('Identity', csi.csi.v1.Identity.service, {
      GetPluginInfo: async () => ({ name: 'pmem-csi.intel.com', vendor_version: '1.0.0' }),
      GetPluginCapabilities: async () => { throw new NotFoundError('volume "v1" not found'); },
      Probe: async (_req, ctx) => {
        probeSignal = ctx.signal;
        await new Promise((r) => setTimeout(r, 300));
        throw new Error('boom');
      },
    }, { log: createLogger({ sink: (l) => lines.push(l) }) });
    server.addService(csi.csi.v1.Identity.service, impl);
    await bindServer(server, address, grpc.ServerCredentials.createInsecure());
    client = new csi.csi.v1.Identity(address, grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    client.close();
    await shutdownServer(server, 1000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers and logs one line per call', async () => {
    const res = await unary(client, client.GetPluginInfo, {}, { timeoutMs: 5000 });
    expect(res).toEqual({ name: 'pmem-csi.intel.com', vendor_version: '1.0.0', manifest: {} });
    expect(lines.some((l) => l.includes('rpc=Identity/GetPluginInfo') && l.includes('msg="call ok"'))).toBe(true);
  });

  it('maps domain errors to their gRPC code with the message', async () => {
    await expect(unary(client, client.GetPluginCapabilities, {}, { timeoutMs: 5000 }))
      .rejects.toMatchObject({ code: grpc.status.NOT_FOUND, details: 'volume "v1" not found' });
  });

  it('aborts the handler signal when the deadline passes', async () => {
    await expect(unary(client, client.Probe, {}, { timeoutMs: 100 })).rejects.toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
    await new Promise((r) => setTimeout(r, 300));
    expect(probeSignal?.aborted).toBe(true);
  });

  it('sends unexpected errors as INTERNAL without a stack', async () => {
    const err = await unary(client, client.Probe, {}, { timeoutMs: 5000 }).catch((e: grpc.ServiceError) => e);
    expect(err).toMatchObject({ code: grpc.status.INTERNAL, details: 'internal error: boom' });
  });
});
