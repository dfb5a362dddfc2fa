import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError } from '@pmem-csi/csi';
import { createLogger } from '../logger.js';
import type { IdentityClient, IdentityHandlers } from '../generated/csi/v1/Identity.js';
import { unary } from './client.js';
import { loadCsi } from './protos.js';
import { adaptService, bindServer, grpcAddress, shutdownServer, type CallContext } from './server.js';

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
    const impl = adaptService<IdentityHandlers>(
      'Identity',
      csi.csi.v1.Identity.service,
      {
        GetPluginInfo: async () => ({ name: 'pmem-csi.intel.com', vendor_version: '1.0.0' }),
        GetPluginCapabilities: async () => {
          throw new NotFoundError('volume "v1" not found');
        },
        Probe: async (_req, ctx) => {
          probeSignal = ctx.signal;
          await new Promise((r) => setTimeout(r, 300));
          throw new Error('boom');
        },
      },
      { log: createLogger({ level: 'debug', sink: (l) => lines.push(l) }) },
    );
    server.addService(csi.csi.v1.Identity.service, impl);
    await bindServer(server, address, grpc.ServerCredentials.createInsecure());
    client = new csi.csi.v1.Identity(address, grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    client.close();
    await shutdownServer(server, 1000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers and, at debug level, logs one line per call', async () => {
    const res = await unary(client, client.GetPluginInfo, {}, { timeoutMs: 5000 });
    expect(res).toEqual({ name: 'pmem-csi.intel.com', vendor_version: '1.0.0', manifest: {} });
    expect(lines.some((l) => l.includes('rpc=Identity/GetPluginInfo') && l.includes('msg="call ok"'))).toBe(true);
  });

  it('maps domain errors to their gRPC code with the message', async () => {
    await expect(unary(client, client.GetPluginCapabilities, {}, { timeoutMs: 5000 })).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: 'volume "v1" not found',
    });
  });

  it('aborts the handler signal when the deadline passes', async () => {
    await expect(unary(client, client.Probe, {}, { timeoutMs: 100 })).rejects.toMatchObject({
      code: grpc.status.DEADLINE_EXCEEDED,
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(probeSignal?.aborted).toBe(true);
  });

  it('sends unexpected errors as INTERNAL without a stack', async () => {
    const err = await unary(client, client.Probe, {}, { timeoutMs: 5000 }).catch((e: grpc.ServiceError) => e);
    expect(err).toMatchObject({ code: grpc.status.INTERNAL, details: 'internal error: boom' });
  });
});

/** A stand-in for grpc-js's ServerUnaryCall: the request, a deadline, and the 'cancelled' event. */
function fakeCall(deadline: number = Infinity): grpc.ServerUnaryCall<unknown, unknown> & { cancel(): void } {
  const call = Object.assign(new EventEmitter(), {
    request: {},
    cancelled: false,
    getDeadline: () => deadline,
    cancel(): void {
      call.cancelled = true;
      call.emit('cancelled');
    },
  });
  return call as unknown as grpc.ServerUnaryCall<unknown, unknown> & { cancel(): void };
}

type Handlers = Record<
  string,
  (call: grpc.ServerUnaryCall<unknown, unknown>, cb: (err: unknown, res: unknown) => void) => void
>;

function invoke(
  handlers: Handlers,
  method: string,
  call: grpc.ServerUnaryCall<unknown, unknown>,
): Promise<{ err: unknown; res: unknown }> {
  return new Promise((resolve) => handlers[method]?.(call, (err, res) => resolve({ err, res })));
}

describe('adaptService call context and logging (handlers called directly)', () => {
  const definition = loadCsi().csi.v1.Identity.service;

  function adapt(
    level: 'info' | 'debug',
    impl: Record<string, (req: unknown, ctx: CallContext) => Promise<unknown>>,
  ): { handlers: Handlers; lines: string[] } {
    const lines: string[] = [];
    const handlers = adaptService('Identity', definition, impl, {
      log: createLogger({ level, sink: (l) => lines.push(l) }),
      quietMethods: ['Probe'],
    }) as unknown as Handlers;
    return { handlers, lines };
  }

  it('logs successes only at debug level, never for quiet methods, and failures always', async () => {
    const impl = {
      GetPluginInfo: async () => ({ name: 'x' }),
      Probe: async () => ({}),
      GetPluginCapabilities: async () => {
        throw new NotFoundError('gone');
      },
    };
    const info = adapt('info', impl);
    await invoke(info.handlers, 'GetPluginInfo', fakeCall());
    await invoke(info.handlers, 'GetPluginCapabilities', fakeCall());
    expect(info.lines).toHaveLength(1);
    expect(info.lines[0]).toMatch(
      /level=warn msg="call failed" rpc=Identity\/GetPluginCapabilities ms=\d+ code=NOT_FOUND error=gone$/,
    );
    const debug = adapt('debug', impl);
    await invoke(debug.handlers, 'GetPluginInfo', fakeCall());
    await invoke(debug.handlers, 'Probe', fakeCall());
    expect(debug.lines).toHaveLength(1);
    expect(debug.lines[0]).toMatch(/level=debug msg="call ok" rpc=Identity\/GetPluginInfo ms=\d+$/);
  });

  it('gives an already aborted signal to a call cancelled before the signal was read', async () => {
    let reason: unknown;
    const call = fakeCall();
    const { handlers } = adapt('info', {
      GetPluginInfo: async (_req, ctx) => {
        call.cancel();
        reason = ctx.signal.reason;
        return { aborted: ctx.signal.aborted };
      },
    });
    expect((await invoke(handlers, 'GetPluginInfo', call)).res).toEqual({ aborted: true });
    expect(reason).toEqual(new Error('GetPluginInfo cancelled by the client'));
  });

  it('aborts on a cancellation after the signal was read, and on a deadline already past', async () => {
    const call = fakeCall(Date.now() + 60_000);
    const seen: boolean[] = [];
    const { handlers } = adapt('info', {
      GetPluginInfo: async (_req, ctx) => {
        const signal = ctx.signal;
        seen.push(signal.aborted);
        call.cancel();
        seen.push(signal.aborted);
        return {};
      },
      Probe: async (_req, ctx) => ({ reason: String(ctx.signal.reason) }),
    });
    await invoke(handlers, 'GetPluginInfo', call);
    expect(seen).toEqual([false, true]);
    expect(call.listenerCount('cancelled')).toBe(0); // released when the call ended
    expect((await invoke(handlers, 'Probe', fakeCall(Date.now() - 1))).res).toEqual({
      reason: 'Error: deadline of Probe exceeded',
    });
  });

  it('makes no AbortController, timer or listener for a call that never reads the signal', async () => {
    const call = fakeCall(Date.now() + 60_000);
    const { handlers } = adapt('info', { GetPluginInfo: async () => ({ listeners: call.listenerCount('cancelled') }) });
    expect((await invoke(handlers, 'GetPluginInfo', call)).res).toEqual({ listeners: 0 });
  });
});
