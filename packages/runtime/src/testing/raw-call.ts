// One unary call by method name through a service definition, with any request object, for the
// fuzz tests: the answer is the status code's name and details (or OK and the response), never a
// thrown error, so a fuzzer can check every code against what the CSI spec allows.
import * as grpc from '@grpc/grpc-js';

export interface RawOutcome {
  /** The status code's name: OK, INVALID_ARGUMENT, ... (the number when grpc-js has no name for it). */
  readonly code: string;
  readonly details: string;
  /** The decoded response of an OK call, undefined otherwise. */
  readonly response: unknown;
}

/** A caller whose calls have a deadline of `timeoutMs` from when each starts. */
export function unaryCaller(
  timeoutMs: number,
): (client: grpc.Client, def: grpc.ServiceDefinition, method: string, req: object) => Promise<RawOutcome> {
  return (client, def, method, req) => {
    const m = def[method];
    if (m === undefined) throw new Error(`no method ${method} in the service definition`);
    return new Promise((resolve) => {
      client.makeUnaryRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        req,
        { deadline: Date.now() + timeoutMs },
        (err, res) =>
          resolve(
            err
              ? { code: grpc.status[err.code] ?? String(err.code), details: err.details, response: undefined }
              : { code: 'OK', details: '', response: res },
          ),
      );
    });
  };
}
