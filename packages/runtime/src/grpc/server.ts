// Turns objects of async functions into grpc-js service handlers. Every call gets a context with an
// AbortSignal that fires on cancellation or when the deadline passes (so host tools are killed
// with the call), an optional peer authorisation check (mutual TLS identities), one structured log
// line per call, and error mapping through status.ts. Unimplemented methods answer UNIMPLEMENTED.
import type * as grpc from '@grpc/grpc-js';
import { existsSync, rmSync } from 'node:fs';
import { UnimplementedError } from '../errors.js';
import type { Logger } from '../logger.js';
import { codeName, toServiceError } from './status.js';

/** Per-call information handed to every implementation function. */
export interface CallContext {
  /** Aborted when the client cancels or the deadline passes. */
  readonly signal: AbortSignal;
  /** The call's deadline, if the client set one. */
  readonly deadline: Date | undefined;
  readonly log: Logger;
  readonly method: string;
}

type UnaryImpl<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;

/** The async form of a generated `...Handlers` interface (unary methods only; index signature dropped). */
export type AsyncService<H> = {
  [K in keyof H as string extends K ? never : K]?: H[K] extends grpc.handleUnaryCall<infer Req, infer Res> ? UnaryImpl<Req, Res> : never;
};

export interface AdaptOptions {
  readonly log: Logger;
  /** Called before every handler; throws a DomainError (e.g. PermissionDenied) to refuse the peer. */
  readonly authorize?: (call: grpc.ServerUnaryCall<unknown, unknown>) => void;
  /** Methods logged at debug level only (probes, capacity polls). */
  readonly quietMethods?: readonly string[];
}

function deadlineOf(call: grpc.ServerUnaryCall<unknown, unknown>): Date | undefined {
  const d = call.getDeadline();
  const ms = d instanceof Date ? d.getTime() : d;
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

function contextFor(call: grpc.ServerUnaryCall<unknown, unknown>, method: string, log: Logger): { ctx: CallContext; done: () => void } {
  const ac = new AbortController();
  const deadline = deadlineOf(call);
  const timer = deadline ? setTimeout(() => ac.abort(new Error(`deadline of ${method} exceeded`)), Math.max(0, deadline.getTime() - Date.now())) : undefined;
  const onCancel = (): void => ac.abort(new Error(`${method} cancelled by the client`));
  call.on('cancelled', onCancel);
  return {
    ctx: { signal: ac.signal, deadline, log, method },
    done: () => {
      if (timer) clearTimeout(timer);
      call.removeListener('cancelled', onCancel);
    },
  };
}

/** Adapt `impl` to the grpc-js handler object of `definition`. */
export function adaptService<H extends grpc.UntypedServiceImplementation>(
  serviceName: string,
  definition: grpc.ServiceDefinition,
  impl: AsyncService<H>,
  options: AdaptOptions,
): H {
  const handlers: Record<string, grpc.handleUnaryCall<unknown, unknown>> = {};
  const table = impl as Record<string, UnaryImpl<unknown, unknown> | undefined>;
  for (const method of Object.keys(definition)) {
    const fn = table[method]?.bind(impl);
    const quiet = options.quietMethods?.includes(method) ?? false;
    const log = options.log.child({ rpc: `${serviceName}/${method}` });
    handlers[method] = (call, callback) => {
      const started = Date.now();
      const { ctx, done } = contextFor(call, method, log);
      const run = async (): Promise<unknown> => {
        options.authorize?.(call);
        if (fn === undefined) throw new UnimplementedError(`${serviceName}.${method} is not implemented by this driver`);
        return fn(call.request, ctx);
      };
      run().then(
        (res) => {
          done();
          (quiet ? log.debug : log.info)('call ok', { ms: Date.now() - started });
          callback(null, res);
        },
        (err: unknown) => {
          done();
          const status = toServiceError(err);
          log.warn('call failed', { ms: Date.now() - started, code: codeName(status.code), error: status.details });
          callback(status, null);
        },
      );
    };
  }
  return handlers as H;
}

/** Bind `server` to `address` ("unix:///path", "unix:path" or "host:port"); returns the bound port. */
export function bindServer(server: grpc.Server, address: string, creds: grpc.ServerCredentials): Promise<number> {
  const socketPath = unixSocketPath(address);
  if (socketPath !== undefined && existsSync(socketPath)) rmSync(socketPath); // stale socket of a previous run
  return new Promise((resolve, reject) => {
    server.bindAsync(address, creds, (err, port) => (err ? reject(err) : resolve(port)));
  });
}

/** The file path of a unix socket address, or undefined for TCP addresses. */
export function unixSocketPath(address: string): string | undefined {
  if (address.startsWith('unix://')) return address.slice('unix://'.length);
  if (address.startsWith('unix:')) return address.slice('unix:'.length);
  if (address.startsWith('/')) return address;
  return undefined;
}

/** Normalise a CSI endpoint flag ("/path", "unix:///path", "host:port") into a grpc-js address. */
export function grpcAddress(endpoint: string): string {
  const p = unixSocketPath(endpoint);
  return p === undefined ? endpoint.replace(/^tcp:\/\//, '') : `unix://${p}`;
}

/** Stop accepting calls and wait up to `graceMs` for running ones, then force. */
export function shutdownServer(server: grpc.Server, graceMs = 5000): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(t);
      resolve();
    });
  });
}
