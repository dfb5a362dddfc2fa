// The one place where errors become gRPC statuses. Domain errors carry their code as `kind`;
// anything else is an internal error whose message is passed on but whose stack never leaves.
import * as grpc from '@grpc/grpc-js';
import { asError, DomainError, type ErrorKind } from '@pmem-csi/csi';

const CODES: Record<ErrorKind, grpc.status> = {
  InvalidArgument: grpc.status.INVALID_ARGUMENT,
  NotFound: grpc.status.NOT_FOUND,
  AlreadyExists: grpc.status.ALREADY_EXISTS,
  ResourceExhausted: grpc.status.RESOURCE_EXHAUSTED,
  FailedPrecondition: grpc.status.FAILED_PRECONDITION,
  Aborted: grpc.status.ABORTED,
  Unavailable: grpc.status.UNAVAILABLE,
  OutOfRange: grpc.status.OUT_OF_RANGE,
  DeadlineExceeded: grpc.status.DEADLINE_EXCEEDED,
  Unimplemented: grpc.status.UNIMPLEMENTED,
  Unauthenticated: grpc.status.UNAUTHENTICATED,
  PermissionDenied: grpc.status.PERMISSION_DENIED,
  Internal: grpc.status.INTERNAL,
};

/** The gRPC code of an error kind. */
export function grpcCodeOf(kind: ErrorKind): grpc.status {
  return CODES[kind];
}

/** A gRPC error object for a thrown value (no stack, no details beyond the message). */
export function toServiceError(value: unknown): Partial<grpc.StatusObject> & { code: grpc.status; details: string } {
  const err = asError(value);
  if (err instanceof DomainError) return { code: CODES[err.kind], details: err.message };
  if (isServiceError(err)) return { code: err.code, details: err.details };
  return { code: grpc.status.INTERNAL, details: `internal error: ${err.message}` };
}

/** Whether a value is an error returned by a grpc-js client call. */
export function isServiceError(value: unknown): value is grpc.ServiceError {
  return value instanceof Error && typeof (value as Partial<grpc.ServiceError>).code === 'number' && 'details' in value;
}

/** The name of a gRPC status code, e.g. "RESOURCE_EXHAUSTED". */
export function codeName(code: grpc.status): string {
  return grpc.status[code] ?? String(code);
}
