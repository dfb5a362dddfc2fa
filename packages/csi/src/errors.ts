// Domain errors shared by every package (CSI vocabulary: the kinds mirror the codes the CSI spec
// uses). Code throws these classes; the RPC edge (@pmem-csi/runtime status.ts) turns them into
// gRPC status codes in exactly one place. Messages are for humans and name the field or object
// concerned; they never contain secrets or stack traces.

/** The gRPC-visible category of a domain error (mirrors the codes the CSI spec uses). */
export type ErrorKind =
  | 'InvalidArgument'
  | 'NotFound'
  | 'AlreadyExists'
  | 'ResourceExhausted'
  | 'FailedPrecondition'
  | 'Aborted'
  | 'Unavailable'
  | 'OutOfRange'
  | 'DeadlineExceeded'
  | 'Unimplemented'
  | 'Unauthenticated'
  | 'PermissionDenied'
  | 'Internal';

/** Base class of every error our code throws on purpose. */
export abstract class DomainError extends Error {
  abstract readonly kind: ErrorKind;
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A request field is missing or malformed; the message names the field and what is allowed. */
export class InvalidArgumentError extends DomainError {
  readonly kind = 'InvalidArgument';
}
/** The named object does not exist. */
export class NotFoundError extends DomainError {
  readonly kind = 'NotFound';
}
/** An object with that identity exists but is incompatible with the request. */
export class AlreadyExistsError extends DomainError {
  readonly kind = 'AlreadyExists';
}
/** Not enough space (or other resource) to satisfy the request. */
export class ResourceExhaustedError extends DomainError {
  readonly kind = 'ResourceExhausted';
}
/** The system is not in a state in which the operation may run (e.g. device busy, not staged). */
export class FailedPreconditionError extends DomainError {
  readonly kind = 'FailedPrecondition';
}
/** A conflicting operation on the same key is in progress; the caller should retry. */
export class AbortedError extends DomainError {
  readonly kind = 'Aborted';
}
/** A dependency (node, controller, tool) cannot be reached right now; retriable. */
export class UnavailableError extends DomainError {
  readonly kind = 'Unavailable';
}
/** A value lies outside the range the implementation supports. */
export class OutOfRangeError extends DomainError {
  readonly kind = 'OutOfRange';
}
/** An operation ran out of time; the message says what it was waiting for. */
export class DeadlineExceededError extends DomainError {
  readonly kind = 'DeadlineExceeded';
}
/** The operation is not supported by this driver or mode. */
export class UnimplementedError extends DomainError {
  readonly kind = 'Unimplemented';
}
/** The peer presented no (valid) identity. */
export class UnauthenticatedError extends DomainError {
  readonly kind = 'Unauthenticated';
}
/** The peer's identity is not allowed to call this service (e.g. wrong certificate SAN). */
export class PermissionDeniedError extends DomainError {
  readonly kind = 'PermissionDenied';
}
/** An unexpected failure; details are logged, the client sees only the message. */
export class InternalError extends DomainError {
  readonly kind = 'Internal';
}

/** Narrow an unknown thrown value to an Error (wrapping non-Error values). */
export function asError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === 'string' ? value : `non-error value thrown: ${String(value)}`);
}

/** The message of an unknown thrown value. */
export function errorMessage(value: unknown): string {
  return asError(value).message;
}
