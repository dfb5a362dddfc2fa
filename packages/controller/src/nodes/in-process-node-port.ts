// The in-process adapter of the NodePort (node-port.ts): the node's own node-controller functions
// called in this process, no gRPC — for tests that run the controller on real nodes (the node
// package's test kit gives them on fake devices) without a server per node. It keeps what the wire
// would do to a call, so that the contract suite finds no difference to the gRPC adapter:
// requests and answers go through the protobuf encoding (defaults filled in, 64-bit numbers as
// strings, unknown fields dropped), a thrown error reaches the controller as the gRPC status the
// node's server would have sent (runtime toServiceError), the call has a deadline and follows the
// caller's AbortSignal — the caller gets DEADLINE_EXCEEDED or CANCELLED at once while the node sees
// its signal fire, as with a real server.
import * as grpc from '@grpc/grpc-js';
import {
  codeName,
  loadCsi,
  nullLogger,
  toServiceError,
  type AsyncService,
  type CallContext,
  type ControllerHandlers,
  type Logger,
  type UnaryCallOptions,
} from '@pmem-csi/runtime';
import { fromNodeError, NodeUnreachableError } from './node-errors.js';
import { UnaryNodePort, type NodeCallOptions, type NodeRpcs } from './unary-node-port.js';

/** The node-controller functions of one node that the controller calls (AsyncService form: request as decoded, context). */
export type InProcessNodeCalls = Required<
  Pick<
    AsyncService<ControllerHandlers>,
    'CreateVolume' | 'DeleteVolume' | 'ListVolumes' | 'GetCapacity' | 'ControllerExpandVolume'
  >
>;

export interface InProcessNodePortOptions extends NodeCallOptions {
  readonly log?: Logger;
}

/** The encoding of one method, as the generated service definition gives it. */
interface WireMethod<Req, Res, ReqOut, ResOut> {
  requestSerialize(value: Req): Buffer;
  requestDeserialize(bytes: Buffer): ReqOut;
  responseSerialize(value: Res): Buffer;
  responseDeserialize(bytes: Buffer): ResOut;
}

function serviceError(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${codeName(code)}: ${details}`), {
    code,
    details,
    metadata: new grpc.Metadata(),
  });
}

/** The gRPC status a server would have sent for `err`, as a grpc-js client reports it. */
function asServiceError(err: unknown): grpc.ServiceError {
  const status = toServiceError(err);
  return serviceError(status.code, status.details);
}

/** The signal of a call: the caller's, plus its deadline; the error says which fired. */
function callSignal(o: UnaryCallOptions): { signal: AbortSignal; deadline: Date; error: () => grpc.ServiceError } {
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal === undefined ? timeout : AbortSignal.any([o.signal, timeout]);
  const error = (): grpc.ServiceError =>
    timeout.aborted
      ? serviceError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded')
      : serviceError(grpc.status.CANCELLED, 'Cancelled on client');
  return { signal, deadline: new Date(Date.now() + o.timeoutMs), error };
}

/** One call through the encoding, with deadline and cancellation. */
async function invoke<Req, Res, ReqOut, ResOut>(
  wire: WireMethod<Req, Res, ReqOut, ResOut>,
  fn: (req: ReqOut, ctx: CallContext) => Promise<Res>,
  req: Req,
  o: UnaryCallOptions & { readonly method: string; readonly log: Logger },
): Promise<ResOut> {
  const { signal, deadline, error } = callSignal(o);
  if (signal.aborted) throw error();
  const decoded = wire.requestDeserialize(wire.requestSerialize(req));
  const ctx: CallContext = { signal, deadline, log: o.log, method: o.method, peer: 'in-process' };
  const answer = fn(decoded, ctx).then(
    (res) => wire.responseDeserialize(wire.responseSerialize(res)),
    (err: unknown) => Promise.reject(asServiceError(err)),
  );
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(error());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([answer, aborted]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
    // The node may still answer after the caller gave up; that answer has no one to go to.
    answer.catch(() => undefined);
    aborted.catch(() => undefined);
  }
}

function rpcsOf(calls: InProcessNodeCalls, log: Logger): NodeRpcs {
  const def = loadCsi().csi.v1.Controller.service;
  const opts = (o: UnaryCallOptions, method: string) => ({ ...o, method, log });
  return {
    CreateVolume: (req, o) => invoke(def.CreateVolume, calls.CreateVolume, req, opts(o, 'CreateVolume')),
    DeleteVolume: (req, o) => invoke(def.DeleteVolume, calls.DeleteVolume, req, opts(o, 'DeleteVolume')),
    ListVolumes: (req, o) => invoke(def.ListVolumes, calls.ListVolumes, req, opts(o, 'ListVolumes')),
    GetCapacity: (req, o) => invoke(def.GetCapacity, calls.GetCapacity, req, opts(o, 'GetCapacity')),
    ControllerExpandVolume: (req, o) =>
      invoke(def.ControllerExpandVolume, calls.ControllerExpandVolume, req, opts(o, 'ControllerExpandVolume')),
  };
}

export class InProcessNodePort extends UnaryNodePort {
  /** The nodes of this process by endpoint; the caller may add and remove nodes at any time. */
  readonly #nodes: ReadonlyMap<string, InProcessNodeCalls>;
  readonly #endpoints = new Map<string, string>();
  readonly #log: Logger;

  constructor(nodes: ReadonlyMap<string, InProcessNodeCalls>, options: InProcessNodePortOptions = {}) {
    super(options);
    this.#nodes = nodes;
    this.#log = options.log ?? nullLogger;
  }

  connect(nodeId: string, endpoint: string): void {
    this.#endpoints.set(nodeId, endpoint);
  }

  close(nodeId: string): void {
    this.#endpoints.delete(nodeId);
  }

  closeAll(): void {
    this.#endpoints.clear();
  }

  protected async call<T>(nodeId: string, method: string, fn: (rpcs: NodeRpcs) => Promise<T>): Promise<T> {
    const endpoint = this.#endpoints.get(nodeId);
    if (endpoint === undefined) throw new NodeUnreachableError(nodeId, 'no connection to its endpoint');
    const calls = this.#nodes.get(endpoint);
    if (calls === undefined)
      throw new NodeUnreachableError(nodeId, `no node serves ${JSON.stringify(endpoint)} in this process`);
    try {
      return await fn(rpcsOf(calls, this.#log.child({ node: nodeId })));
    } catch (err) {
      throw fromNodeError(nodeId, method, err);
    }
  }
}
