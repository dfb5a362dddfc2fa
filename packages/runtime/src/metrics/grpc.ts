// `csi_plugin_operations_seconds`: the duration of every gRPC call a server answers, under the
// name, labels and buckets of the CSI sidecars' metrics (kubernetes-csi csi-lib-utils: subsystem
// "plugin"; labels driver_name, method_name = the full gRPC method "/csi.v1.Controller/CreateVolume",
// grpc_status_code = the code's name as grpc-go spells it: OK, InvalidArgument, ...). It is a
// grpc-js server interceptor, the outermost one, so calls refused before any handler (the mutual
// TLS identity check, an interceptor of the credentials) count too.
// Hot path: one ServerInterceptingCall and one clock read per call and per answer; the labelled
// histogram child is looked up once per (method, code) and kept.
import * as grpc from '@grpc/grpc-js';
import { Histogram, type Registry } from 'prom-client';
import { GRPC_OPTIONS } from '../grpc/server.js';

export const CSI_OPERATIONS_SECONDS = 'csi_plugin_operations_seconds';

/** The buckets of csi-lib-utils' operations histogram, in seconds. */
export const CSI_OPERATION_BUCKETS: readonly number[] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600];

/** gRPC status code -> the name grpc-go's codes.Code.String() gives it (the label value CSI tooling expects). */
const CODE_NAMES: readonly string[] = [
  'OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied',
  'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable',
  'DataLoss', 'Unauthenticated',
];

/** The label value of a gRPC status code ("Code(42)" for one outside the standard set, as grpc-go). */
export function grpcCodeLabel(code: number): string {
  return CODE_NAMES[code] ?? `Code(${code})`;
}

interface Observer {
  observe(value: number): void;
}

function deadlinePassed(deadline: grpc.Deadline): boolean {
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) && Date.now() >= ms;
}

/** The operations histogram of one process, shared by all its gRPC servers. */
export class CsiOperationMetrics {
  readonly histogram: Histogram<'driver_name' | 'method_name' | 'grpc_status_code'>;
  /** method -> status code -> child, per driver name. */
  readonly #children = new Map<string, Map<string, Observer[]>>();

  constructor(registry: Registry) {
    this.histogram = new Histogram({
      name: CSI_OPERATIONS_SECONDS,
      help: 'Duration of the gRPC calls this CSI plugin answered, by driver, full gRPC method and gRPC status code.',
      labelNames: ['driver_name', 'method_name', 'grpc_status_code'] as const,
      buckets: [...CSI_OPERATION_BUCKETS],
      registers: [registry],
    });
  }

  /** Record one answered call. */
  observe(driverName: string, method: string, code: number, seconds: number): void {
    let byMethod = this.#children.get(driverName);
    if (byMethod === undefined) this.#children.set(driverName, (byMethod = new Map()));
    let byCode = byMethod.get(method);
    if (byCode === undefined) byMethod.set(method, (byCode = []));
    let child = byCode[code];
    if (child === undefined) {
      child = this.histogram.labels({ driver_name: driverName, method_name: method, grpc_status_code: grpcCodeLabel(code) });
      byCode[code] = child;
    }
    child.observe(seconds);
  }

  /** A server interceptor that times every call of a server serving `driverName`. */
  interceptor(driverName: string): grpc.ServerInterceptor {
    if (driverName === '') throw new TypeError('CsiOperationMetrics.interceptor: driverName must not be empty');
    return (method, call) => {
      const started = performance.now();
      let answered = false;
      const record = (code: number): void => {
        answered = true;
        this.observe(driverName, method.path, code, (performance.now() - started) / 1000);
      };
      return new grpc.ServerInterceptingCall(call, {
        // A call that ends without an answer of ours: the deadline passed (grpc-js answers
        // DEADLINE_EXCEEDED below the interceptors) or the client cancelled.
        start: (next) => next({ onCancel: () => answered || record(deadlinePassed(call.getDeadline()) ? grpc.status.DEADLINE_EXCEEDED : grpc.status.CANCELLED) }),
        sendStatus: (status, next) => {
          // An answer after the deadline never reaches the client: grpc-js has answered
          // DEADLINE_EXCEEDED already (the cancel notice may not have come through yet).
          if (!answered) record(deadlinePassed(call.getDeadline()) ? grpc.status.DEADLINE_EXCEEDED : status.code);
          next(status);
        },
      });
    };
  }

  /** A grpc-js server with the driver's options (GRPC_OPTIONS) whose calls are timed. */
  createServer(driverName: string): grpc.Server {
    return new grpc.Server({ ...GRPC_OPTIONS, interceptors: [this.interceptor(driverName)] });
  }
}
