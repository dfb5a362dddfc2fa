// Turns objects of async functions into grpc-js service handlers. Every call gets a context with an
// AbortSignal that fires on cancellation or when the deadline passes (so host tools are killed
// with the call), an optional peer authorisation check (mutual TLS identities), a structured log
// line per call (failures at warn, successes at debug) and error mapping through status.ts.
// Unimplemented methods answer UNIMPLEMENTED.
import * as grpc from '@grpc/grpc-js';
import { existsSync, rmSync } from 'node:fs';
import { UnimplementedError } from '../errors.js';
import type { Logger } from '../logger.js';
import { REFUSAL_LOG, type TlsRefusalLog, type TlsServerEvents } from '../tls/refusal-log.js';
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
  [K in keyof H as string extends K ? never : K]?: H[K] extends grpc.handleUnaryCall<infer Req, infer Res>
    ? UnaryImpl<Req, Res>
    : never;
};

export interface AdaptOptions {
  readonly log: Logger;
  /** Called before every handler; throws a DomainError (e.g. PermissionDenied) to refuse the peer. */
  readonly authorize?: (call: grpc.ServerUnaryCall<unknown, unknown>) => void;
  /** Methods whose successful calls are not logged even at debug level (probes, capacity polls, renewals). */
  readonly quietMethods?: readonly string[];
}

function deadlineOf(call: grpc.ServerUnaryCall<unknown, unknown>): Date | undefined {
  const d = call.getDeadline();
  const ms = d instanceof Date ? d.getTime() : d;
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

/**
 * The per-call context. Most calls finish without anyone asking for the AbortSignal (queries,
 * identity calls), so the AbortController, the deadline timer and the cancellation listener are
 * made on the first read of `signal` only; a call cancelled or past its deadline before that read
 * gets a signal that is already aborted.
 */
class LazyCallContext implements CallContext {
  readonly deadline: Date | undefined;
  readonly log: Logger;
  readonly method: string;
  readonly #call: grpc.ServerUnaryCall<unknown, unknown>;
  #ac: AbortController | undefined;
  #timer: NodeJS.Timeout | undefined;
  #onCancel: (() => void) | undefined;

  constructor(call: grpc.ServerUnaryCall<unknown, unknown>, method: string, log: Logger) {
    this.#call = call;
    this.method = method;
    this.log = log;
    this.deadline = deadlineOf(call);
  }

  get signal(): AbortSignal {
    if (this.#ac === undefined) this.#ac = this.#arm();
    return this.#ac.signal;
  }

  #arm(): AbortController {
    const ac = new AbortController();
    const method = this.method;
    if (this.#call.cancelled) {
      ac.abort(new Error(`${method} cancelled by the client`));
      return ac;
    }
    if (this.deadline !== undefined) {
      const left = this.deadline.getTime() - Date.now();
      const expire = (): void => ac.abort(new Error(`deadline of ${method} exceeded`));
      if (left <= 0) expire();
      else this.#timer = setTimeout(expire, left);
    }
    this.#onCancel = (): void => ac.abort(new Error(`${method} cancelled by the client`));
    this.#call.on('cancelled', this.#onCancel);
    return ac;
  }

  /** Release the timer and the listener (after the answer was produced). */
  done(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#onCancel !== undefined) this.#call.removeListener('cancelled', this.#onCancel);
  }
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
    const log = options.log.child({ rpc: `${serviceName}/${method}` });
    const logSuccess = log.isEnabled('debug') && !(options.quietMethods?.includes(method) ?? false);
    handlers[method] = (call, callback) => {
      const started = Date.now();
      const ctx = new LazyCallContext(call, method, log);
      const run = async (): Promise<unknown> => {
        options.authorize?.(call);
        if (fn === undefined)
          throw new UnimplementedError(`${serviceName}.${method} is not implemented by this driver`);
        return fn(call.request, ctx);
      };
      run().then(
        (res) => {
          ctx.done();
          // Success is logged at debug: the services log what they changed at info themselves.
          if (logSuccess) log.debug('call ok', { ms: Date.now() - started });
          callback(null, res);
        },
        (err: unknown) => {
          ctx.done();
          const status = toServiceError(err);
          log.warn('call failed', { ms: Date.now() - started, code: codeName(status.code), error: status.details });
          callback(status, null);
        },
      );
    };
  }
  return handlers as H;
}

/**
 * Options of every gRPC server and channel of the driver. Channelz (grpc-js's per-call and
 * per-socket bookkeeping for the channelz debug service) is off: nothing here serves channelz,
 * and its trackers ran on every call.
 */
export const GRPC_OPTIONS = { 'grpc.enable_channelz': 0 } as const satisfies grpc.ServerOptions & grpc.ChannelOptions;

/** A grpc-js server with the driver's options (GRPC_OPTIONS). */
export function createServer(): grpc.Server {
  return new grpc.Server({ ...GRPC_OPTIONS });
}

/**
 * Hand the TLS servers grpc-js made for `server` to the credentials' refusal log. grpc-js keeps them
 * in a private map; when that is gone (a grpc-js change) the log says that it cannot watch.
 */
function watchRefusals(server: grpc.Server, refusals: TlsRefusalLog): void {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map)) {
    refusals.unwatchable('grpc-js no longer exposes its http2 servers (http2Servers)');
    return;
  }
  for (const s of servers.keys() as IterableIterator<unknown>) {
    if (typeof (s as { on?: unknown } | null)?.on === 'function') refusals.watch(s as TlsServerEvents);
  }
}

/**
 * Bind `server` to `address` ("unix:///path", "unix:path" or "host:port"); returns the bound port.
 * With mutual-TLS credentials (serverCredentialsFromSource), refused handshakes are logged.
 */
export async function bindServer(server: grpc.Server, address: string, creds: grpc.ServerCredentials): Promise<number> {
  const socketPath = unixSocketPath(address);
  if (socketPath !== undefined && existsSync(socketPath)) rmSync(socketPath); // stale socket of a previous run
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, creds, (err, p) => (err ? reject(err) : resolve(p)));
  });
  const refusals = (creds as grpc.ServerCredentials & { [REFUSAL_LOG]?: TlsRefusalLog })[REFUSAL_LOG];
  if (refusals !== undefined) watchRefusals(server, refusals);
  return port;
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
