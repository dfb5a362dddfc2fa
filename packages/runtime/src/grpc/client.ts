// Promise wrappers for generated grpc-js clients, with a deadline on every call (forwarded calls
// must never hang) and an optional AbortSignal that cancels the call.
import * as grpc from '@grpc/grpc-js';

// Generated client methods are overloaded; TypeScript infers from the last overload
// (request, callback), so that is the shape used for inference. Every generated unary method also
// has the (request, metadata, options, callback) overload, which is the one actually called.
type UnaryMethod<Req, Res> = (request: Req, callback: grpc.requestCallback<Res>) => grpc.ClientUnaryCall;
type FullUnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

export interface UnaryCallOptions {
  /** Deadline relative to now, in ms. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** Call a unary method of a generated client and await its answer. */
export function unary<Req, Res>(
  client: grpc.Client,
  method: UnaryMethod<Req, Res>,
  request: Req,
  options: UnaryCallOptions,
): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    const onAbort = (): void => call.cancel();
    const call = (method as unknown as FullUnaryMethod<Req, Res>).call(
      client,
      request,
      new grpc.Metadata(),
      { deadline: Date.now() + options.timeoutMs },
      (err, value) => {
        options.signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(value as Res);
      },
    );
    if (options.signal?.aborted) call.cancel();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
