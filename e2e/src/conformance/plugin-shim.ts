// Test-side shim for csi-sanity (never product code). csi-sanity asks the Identity service of its
// --csi.endpoint whether the plugin provides CONTROLLER_SERVICE and skips the whole-lifecycle specs
// ("Node Service should work", "... should be idempotent") when it does not; a split node driver
// correctly does not advertise it, so those specs never ran. The shim listens on its own unix
// socket and serves:
//   - Identity: GetPluginCapabilities answers the union of the node's and the controller's plugin
//     capabilities (so CONTROLLER_SERVICE appears); GetPluginInfo and Probe come from the node.
//   - Node: every method forwarded byte for byte to the node's socket (status, details and
//     trailers of errors pass through unchanged).
// The Controller service stays where it is: csi-sanity talks to the real controller's socket
// through --csi.controllerendpoint. Every forwarded call has a deadline (the caller's, or
// callTimeoutMs when the caller set none, as csi-sanity does) and a timeout names what it waited for.
import * as grpc from '@grpc/grpc-js';
import type { csi } from '@pmem-csi/csi';
import {
  bindServer,
  createServer,
  grpcAddress,
  type IdentityClient,
  type IdentityHandlers,
  loadCsi,
  type Logger,
  serviceDefinition,
  shutdownServer,
  unary,
} from '@pmem-csi/runtime';

export interface PluginShimOptions {
  /** Unix socket the shim listens on (what csi-sanity gets as --csi.endpoint). */
  readonly socket: string;
  /** The node driver's CSI socket. */
  readonly nodeSocket: string;
  /** The controller's CSI socket (only its Identity is asked, for its plugin capabilities). */
  readonly controllerSocket: string;
  readonly log: Logger;
  /** Deadline for a forwarded call whose caller set none (default 120 s). */
  readonly callTimeoutMs?: number;
}

export interface PluginShim {
  readonly socket: string;
  /** Calls answered so far, by method name ("NodeStageVolume", "GetPluginCapabilities", ...). */
  readonly calls: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

const DEFAULT_CALL_TIMEOUT_MS = 120_000;

type RawHandler = grpc.handleUnaryCall<Buffer, Buffer>;

const passThrough = (b: Buffer): Buffer => b;

/** A service definition with the same paths whose messages stay serialized bytes. */
function rawDefinition(fullName: string): grpc.ServiceDefinition {
  const raw: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  for (const [name, m] of Object.entries(serviceDefinition(fullName))) {
    if (m.requestStream || m.responseStream)
      throw new Error(`plugin shim: ${fullName}.${name} is a streaming method; only unary methods are forwarded`);
    raw[name] = {
      ...m,
      requestSerialize: passThrough,
      requestDeserialize: passThrough,
      responseSerialize: passThrough,
      responseDeserialize: passThrough,
    };
  }
  return raw;
}

function isServiceError(e: unknown): e is grpc.ServiceError {
  return e instanceof Error && typeof (e as Partial<grpc.ServiceError>).code === 'number';
}

/** One key per distinct capability, so the union lists each once. */
function capabilityKey(c: csi.PluginCapability__Output): string {
  return JSON.stringify([c.type ?? '', c.service?.type ?? '', c.volume_expansion?.type ?? '']);
}

/** The union of plugin capabilities, in the order first seen. */
export function mergePluginCapabilities(
  ...lists: ReadonlyArray<readonly csi.PluginCapability__Output[]>
): csi.PluginCapability__Output[] {
  const seen = new Map<string, csi.PluginCapability__Output>();
  for (const list of lists) for (const c of list) if (!seen.has(capabilityKey(c))) seen.set(capabilityKey(c), c);
  return [...seen.values()];
}

/** Start the shim; close() stops it and its upstream connections. */
export async function startPluginShim(o: PluginShimOptions): Promise<PluginShim> {
  const timeoutMs = o.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const calls = new Map<string, number>();
  const count = (method: string): void => {
    calls.set(method, (calls.get(method) ?? 0) + 1);
  };
  const creds = grpc.credentials.createInsecure();
  const Identity = loadCsi().csi.v1.Identity;
  const nodeIdentity: IdentityClient = new Identity(grpcAddress(o.nodeSocket), creds);
  const controllerIdentity: IdentityClient = new Identity(grpcAddress(o.controllerSocket), creds);
  const node = new grpc.Client(grpcAddress(o.nodeSocket), creds);

  /** Explain a deadline the shim chose itself; other errors pass through untouched. */
  const explain = (e: unknown, what: string, ownDeadline: boolean): grpc.ServiceError | Partial<grpc.StatusObject> => {
    if (!isServiceError(e)) return { code: grpc.status.INTERNAL, details: `plugin shim: ${what} failed: ${String(e)}` };
    if (ownDeadline && e.code === grpc.status.DEADLINE_EXCEEDED) {
      return {
        code: e.code,
        details: `plugin shim: ${what} did not answer within ${timeoutMs / 1000} s`,
        metadata: e.metadata,
      };
    }
    return e;
  };

  const forward =
    (method: string, path: string): RawHandler =>
    (call, callback) => {
      count(method);
      const started = Date.now();
      const callerDeadline = call.getDeadline();
      const ownDeadline = callerDeadline === Infinity;
      const upstream = node.makeUnaryRequest<Buffer, Buffer>(
        path,
        passThrough,
        passThrough,
        call.request,
        call.metadata,
        { deadline: ownDeadline ? Date.now() + timeoutMs : callerDeadline },
        (err, value) => {
          call.removeListener('cancelled', cancel);
          o.log.debug('plugin shim forwarded a call', {
            method,
            target: 'node',
            code: err?.code ?? grpc.status.OK,
            ms: Date.now() - started,
          });
          if (err) callback(explain(err, `${method} on the node (${o.nodeSocket})`, ownDeadline));
          else callback(null, value);
        },
      );
      const cancel = (): void => upstream.cancel();
      call.on('cancelled', cancel);
    };

  const nodeHandlers: Record<string, RawHandler> = {};
  for (const [name, m] of Object.entries(serviceDefinition('csi.v1.Node'))) nodeHandlers[name] = forward(name, m.path);

  const identityHandlers: IdentityHandlers = {
    GetPluginInfo: (_call, callback) => {
      count('GetPluginInfo');
      unary(nodeIdentity, nodeIdentity.GetPluginInfo, {}, { timeoutMs }).then(
        (r) => callback(null, r),
        (e: unknown) => callback(explain(e, `GetPluginInfo on the node (${o.nodeSocket})`, true)),
      );
    },
    Probe: (_call, callback) => {
      count('Probe');
      unary(nodeIdentity, nodeIdentity.Probe, {}, { timeoutMs }).then(
        (r) => callback(null, r),
        (e: unknown) => callback(explain(e, `Probe on the node (${o.nodeSocket})`, true)),
      );
    },
    GetPluginCapabilities: (_call, callback) => {
      count('GetPluginCapabilities');
      const ask = (
        client: IdentityClient,
        who: string,
        socket: string,
      ): Promise<csi.PluginCapability__Output[] | grpc.ServiceError | Partial<grpc.StatusObject>> =>
        unary(client, client.GetPluginCapabilities, {}, { timeoutMs }).then(
          (r) => r.capabilities,
          (e: unknown) => explain(e, `GetPluginCapabilities on the ${who} (${socket})`, true),
        );
      void Promise.all([
        ask(nodeIdentity, 'node', o.nodeSocket),
        ask(controllerIdentity, 'controller', o.controllerSocket),
      ]).then(([n, c]) => {
        if (!Array.isArray(n)) return callback(n);
        if (!Array.isArray(c)) return callback(c);
        const capabilities = mergePluginCapabilities(n, c);
        o.log.debug('plugin shim merged plugin capabilities', {
          node: n.length,
          controller: c.length,
          merged: capabilities.length,
        });
        return callback(null, { capabilities });
      });
    },
  };

  const server = createServer();
  server.addService(Identity.service, identityHandlers);
  server.addService(rawDefinition('csi.v1.Node'), nodeHandlers);
  try {
    await bindServer(server, grpcAddress(o.socket), grpc.ServerCredentials.createInsecure());
  } catch (e) {
    nodeIdentity.close();
    controllerIdentity.close();
    node.close();
    throw new Error(`plugin shim: cannot listen on ${o.socket}: ${e instanceof Error ? e.message : String(e)}`);
  }
  o.log.info('plugin shim listening', { socket: o.socket, node: o.nodeSocket, controller: o.controllerSocket });

  let closed: Promise<void> | undefined;
  return {
    socket: o.socket,
    calls,
    close: () => {
      closed ??= shutdownServer(server).then(() => {
        nodeIdentity.close();
        controllerIdentity.close();
        node.close();
      });
      return closed;
    },
  };
}
