// Turns objects of async functions into grpc-js service handlers. Every call gets a context with an
// AbortSignal that fires on cancellation or when the deadline passes (so host tools are killed
// with the call), an optional peer authorisation check (mutual TLS identities), a structured log
// line per call (failures at warn, successes at debug) and error mapping through status.ts.
// Unimplemented methods answer UNIMPLEMENTED.
import * as grpc from '@grpc/grpc-js';
import { lookup } from 'node:dns/promises';
import { existsSync, rmSync } from 'node:fs';
import { createServer as createTcpServer, isIP, type AddressInfo, type Server as TcpServer } from 'node:net';
import { InvalidArgumentError, UnimplementedError } from '@pmem-csi/csi';
import type { Logger } from '../logger.js';
import { REFUSAL_LOG, type TlsRefusalLog, type TlsServerEvents } from '../tls/refusal-log.js';
import { codeName, toServiceError } from '../status.js';
import type { ConnectionTracker } from './connections.js';

/** Per-call information handed to every implementation function. */
export interface CallContext {
  /** Aborted when the client cancels or the deadline passes. */
  readonly signal: AbortSignal;
  /** The call's deadline, if the client set one. */
  readonly deadline: Date | undefined;
  readonly log: Logger;
  readonly method: string;
  /** The client's connection as grpc-js names it ("address:port"; see connections.ts). */
  readonly peer: string;
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

  get peer(): string {
    return this.#call.getPeer();
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

/** Options of bindServer. */
export interface BindOptions {
  /**
   * Listen backlog of a TCP address: connections the kernel has completed and holds until the event
   * loop accepts them (Linux caps it at net.core.somaxconn). Without it grpc-js listens with Node's
   * default, 511: when the queue is full Linux drops the client's handshake ACK, and a client whose
   * half-open connection is pruned meanwhile gets a reset for its TLS ClientHello. Ignored for unix sockets.
   */
  readonly backlog?: number;
  /** Where accept errors of a listener with our backlog are logged (grpc-js's own listeners do not report them). */
  readonly log?: Logger;
  /** Tracks every accepted connection (connections.ts); needs a TCP address and a `backlog`. */
  readonly connections?: ConnectionTracker;
}

/** TCP listeners bindServer opened itself (for a backlog of ours); shutdownServer closes them first. */
const ownListeners = new WeakMap<grpc.Server, TcpServer[]>();

/**
 * Bind `server` to `address` ("unix:///path", "unix:path" or "host:port"); returns the bound port.
 * With mutual-TLS credentials (serverCredentialsFromSource), refused handshakes are logged. With a
 * `backlog`, a TCP address is listened on by a server of ours that hands each accepted connection to
 * grpc-js (its connection injector: the same TLS, HTTP/2 and handlers as a bound port).
 */
export async function bindServer(
  server: grpc.Server,
  address: string,
  creds: grpc.ServerCredentials,
  options: BindOptions = {},
): Promise<number> {
  const socketPath = unixSocketPath(address);
  if (options.connections !== undefined && (socketPath !== undefined || options.backlog === undefined))
    throw new InvalidArgumentError(
      `connection tracking of ${address} needs a TCP address and a backlog: only connections accepted by our own listener can be tracked`,
    );
  if (socketPath !== undefined && existsSync(socketPath)) rmSync(socketPath); // stale socket of a previous run
  const port =
    socketPath === undefined && options.backlog !== undefined
      ? await listenWithBacklog(server, address, creds, { ...options, backlog: options.backlog })
      : await new Promise<number>((resolve, reject) => {
          server.bindAsync(address, creds, (err, p) => (err ? reject(err) : resolve(p)));
        });
  const refusals = (creds as grpc.ServerCredentials & { [REFUSAL_LOG]?: TlsRefusalLog })[REFUSAL_LOG];
  if (refusals !== undefined) watchRefusals(server, refusals);
  return port;
}

/** "host:port", "[v6]:port" or ":port" (all interfaces) split; anything else is refused naming the address. */
function splitListenAddress(address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(address);
  const port = Number(m?.[3]);
  if (m === null || port > 65535)
    throw new InvalidArgumentError(`listen address "${address}" must be host:port ([v6]:port) with a port in 0..65535`);
  return { host: m[1] ?? m[2] ?? '', port };
}

function listen(listener: TcpServer, host: string | undefined, port: number, backlog: number): Promise<number> {
  return new Promise((resolve, reject) => {
    listener.once('error', reject);
    listener.listen({ host, port, backlog }, () => {
      listener.off('error', reject);
      resolve((listener.address() as AddressInfo).port);
    });
  });
}

/** Listen on every address of the host (as grpc-js does; port 0: the first one's port for all) with `backlog`. */
async function listenWithBacklog(
  server: grpc.Server,
  address: string,
  creds: grpc.ServerCredentials,
  options: BindOptions & { readonly backlog: number },
): Promise<number> {
  const { backlog, log } = options;
  if (!Number.isInteger(backlog) || backlog < 1)
    throw new InvalidArgumentError(`backlog ${backlog} of ${address} must be a positive integer`);
  const { host, port } = splitListenAddress(address);
  const hosts =
    host === '' ? [undefined] : isIP(host) !== 0 ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  const injector = server.createConnectionInjector(creds);
  const listeners: TcpServer[] = [];
  let bound = port;
  try {
    for (const h of hosts) {
      const listener = createTcpServer((socket) => {
        options.connections?.attach(socket);
        injector.injectConnection(socket);
      });
      bound = await listen(listener, h, bound, backlog);
      listener.on('error', (err) => log?.warn('accepting a connection failed', { address, error: err.message }));
      listeners.push(listener);
    }
  } catch (err) {
    for (const l of listeners) l.close();
    injector.destroy();
    throw err;
  }
  ownListeners.set(server, [...(ownListeners.get(server) ?? []), ...listeners]);
  return bound;
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
  // Our listeners first: grpc-js closes only the servers it listens with.
  for (const l of ownListeners.get(server) ?? []) l.close();
  ownListeners.delete(server);
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
