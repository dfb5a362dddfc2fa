// `csi_plugin_operations_seconds`: the duration of every gRPC call a server answers, under the
// name, labels and buckets of the CSI sidecars' metrics (kubernetes-csi csi-lib-utils: subsystem
// "plugin"; labels driver_name, method_name = the full gRPC method "/csi.v1.Controller/CreateVolume",
// grpc_status_code = the code's name as grpc-go spells it: OK, InvalidArgument, ...). It is a
// grpc-js server interceptor, the outermost one, so calls refused before any handler (the mutual
// TLS identity check, an interceptor of the credentials) count too.
// Hot path (measured: see TimedCall): per call one map lookup by method path, two small objects
// and two clock reads; the labelled histogram child of each (method, code) is made once and kept.
import * as grpc from '@grpc/grpc-js';
import { Histogram, type Registry } from 'prom-client';
import { GRPC_OPTIONS } from '../grpc/server.js';

export const CSI_OPERATIONS_SECONDS = 'csi_plugin_operations_seconds';

/** The buckets of csi-lib-utils' operations histogram, in seconds. */
export const CSI_OPERATION_BUCKETS: readonly number[] = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600];

/** gRPC status code -> the name grpc-go's codes.Code.String() gives it (the label value CSI tooling expects). */
const CODE_NAMES: readonly string[] = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/** The label value of a gRPC status code ("Code(42)" for one outside the standard set, as grpc-go). */
export function grpcCodeLabel(code: number): string {
  return CODE_NAMES[code] ?? `Code(${code})`;
}

interface Observer {
  observe(value: number): void;
}

/** What grpc-js hands an intercepting call's start (InterceptingServerListener, not exported by @grpc/grpc-js). */
type InboundListener = Parameters<grpc.ServerInterceptingCall['start']>[0];
/** A status as an intercepting call sends it (PartialStatusObject, likewise not exported). */
type OutboundStatus = Parameters<grpc.ServerInterceptingCall['sendStatus']>[0];

/**
 * A client's cancel this close to the call's deadline counts as DeadlineExceeded: when the
 * client's own deadline ends a call, its RST_STREAM can reach the server before the server's copy
 * of the deadline (grpc-timeout counted from when the headers arrived, a little later) has passed.
 */
export const DEADLINE_SLACK_MS = 20;

function deadlinePassed(deadline: grpc.Deadline, slackMs = 0): boolean {
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) && Date.now() + slackMs >= ms;
}

/** The histogram children of one (driver, method), by status code, made on first use. */
class MethodSeries {
  readonly #byCode: Observer[] = [];

  constructor(
    readonly histogram: Histogram<'driver_name' | 'method_name' | 'grpc_status_code'>,
    readonly driverName: string,
    readonly method: string,
  ) {}

  observe(code: number, seconds: number): void {
    let child = this.#byCode[code];
    if (child === undefined) {
      child = this.histogram.labels({
        driver_name: this.driverName,
        method_name: this.method,
        grpc_status_code: grpcCodeLabel(code),
      });
      this.#byCode[code] = child;
    }
    child.observe(seconds);
  }
}

/**
 * One timed call. A subclass of grpc-js's ServerInterceptingCall rather than one with a
 * responder: a responder is a set of closures per call, and grpc-js then builds a listener object
 * and a listener chain around them; here the call is one object and, for the cancel notice, one
 * small listener that passes every event straight on (measured faster per call: e2e/bench/README.md,
 * "Figures from the code's comments").
 * Counted once: the first of our answer (its code; DeadlineExceeded when it comes after the
 * deadline) or the end without one (DeadlineExceeded when the deadline passed, else Cancelled).
 */
class TimedCall extends grpc.ServerInterceptingCall {
  readonly #next: grpc.ServerInterceptingCallInterface;
  readonly #series: MethodSeries;
  readonly #started = performance.now();
  #answered = false;

  constructor(next: grpc.ServerInterceptingCallInterface, series: MethodSeries) {
    super(next);
    this.#next = next;
    this.#series = series;
  }

  override start(listener: InboundListener): void {
    // The base class would wrap the listener in its interception chain; nothing here intercepts
    // inbound events, so they go straight to grpc-js's listener, with the cancel notice seen.
    this.#next.start(new CancelWatch(listener, this));
  }

  override sendStatus(status: OutboundStatus): void {
    // An answer after the deadline never reaches the client: grpc-js has answered
    // DEADLINE_EXCEEDED already (the cancel notice may not have come through yet).
    if (!this.#answered) this.#record(deadlinePassed(this.getDeadline()) ? grpc.status.DEADLINE_EXCEEDED : status.code);
    super.sendStatus(status);
  }

  /** The call's stream ended (grpc-js says so after every call). Without an answer of ours: the
   * deadline passed (grpc-js answers DEADLINE_EXCEEDED below the interceptors, or the client's
   * deadline ended it: DEADLINE_SLACK_MS) or the client cancelled. */
  ended(): void {
    if (!this.#answered)
      this.#record(
        deadlinePassed(this.getDeadline(), DEADLINE_SLACK_MS) ? grpc.status.DEADLINE_EXCEEDED : grpc.status.CANCELLED,
      );
  }

  #record(code: number): void {
    this.#answered = true;
    this.#series.observe(code, (performance.now() - this.#started) / 1000);
  }
}

/** Passes every inbound event on; tells the call about a cancel first. */
class CancelWatch implements InboundListener {
  constructor(
    readonly listener: InboundListener,
    readonly call: TimedCall,
  ) {}

  onReceiveMetadata(metadata: grpc.Metadata): void {
    this.listener.onReceiveMetadata(metadata);
  }

  onReceiveMessage(message: unknown): void {
    this.listener.onReceiveMessage(message);
  }

  onReceiveHalfClose(): void {
    this.listener.onReceiveHalfClose();
  }

  onCancel(): void {
    this.call.ended();
    this.listener.onCancel();
  }
}

/** The operations histogram of one process, shared by all its gRPC servers. */
export class CsiOperationMetrics {
  readonly histogram: Histogram<'driver_name' | 'method_name' | 'grpc_status_code'>;
  /** driver name -> full method -> its series. */
  readonly #series = new Map<string, Map<string, MethodSeries>>();

  constructor(registry: Registry) {
    this.histogram = new Histogram({
      name: CSI_OPERATIONS_SECONDS,
      help: 'Duration of the gRPC calls this CSI plugin answered, by driver, full gRPC method and gRPC status code.',
      labelNames: ['driver_name', 'method_name', 'grpc_status_code'] as const,
      buckets: [...CSI_OPERATION_BUCKETS],
      registers: [registry],
    });
  }

  #methods(driverName: string): Map<string, MethodSeries> {
    let methods = this.#series.get(driverName);
    if (methods === undefined) this.#series.set(driverName, (methods = new Map()));
    return methods;
  }

  #method(methods: Map<string, MethodSeries>, driverName: string, method: string): MethodSeries {
    let series = methods.get(method);
    if (series === undefined) methods.set(method, (series = new MethodSeries(this.histogram, driverName, method)));
    return series;
  }

  /** Record one answered call. */
  observe(driverName: string, method: string, code: number, seconds: number): void {
    this.#method(this.#methods(driverName), driverName, method).observe(code, seconds);
  }

  /** A server interceptor that times every call of a server serving `driverName`. */
  interceptor(driverName: string): grpc.ServerInterceptor {
    if (driverName === '') throw new TypeError('CsiOperationMetrics.interceptor: driverName must not be empty');
    const methods = this.#methods(driverName);
    // Per call: one map lookup by the method's path, the call object and its cancel watch.
    return (method, call) =>
      new TimedCall(call, methods.get(method.path) ?? this.#method(methods, driverName, method.path));
  }

  /** A grpc-js server with the driver's options (GRPC_OPTIONS) whose calls are timed. */
  createServer(driverName: string): grpc.Server {
    return new grpc.Server({ ...GRPC_OPTIONS, interceptors: [this.interceptor(driverName)] });
  }
}
