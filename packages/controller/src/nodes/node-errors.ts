// Errors of forwarded calls. A node's answer keeps its gRPC code (the node already chose the CSI
// code, e.g. RESOURCE_EXHAUSTED or ALREADY_EXISTS) and gets the node named in the message; a node
// that could not be reached becomes UNAVAILABLE. The controller also needs to know whether a failed
// CreateVolume may nevertheless have created the volume ("uncertain"), to avoid a duplicate.
import * as grpc from '@grpc/grpc-js';
import {
  AbortedError,
  AlreadyExistsError,
  DeadlineExceededError,
  type DomainError,
  errorMessage,
  FailedPreconditionError,
  InternalError,
  InvalidArgumentError,
  NotFoundError,
  OutOfRangeError,
  PermissionDeniedError,
  ResourceExhaustedError,
  UnauthenticatedError,
  UnavailableError,
  UnimplementedError,
} from '@pmem-csi/csi';
import { isServiceError } from '@pmem-csi/runtime';

type DomainErrorClass = new (message: string, options?: ErrorOptions) => DomainError;

const BY_CODE: Partial<Record<grpc.status, DomainErrorClass>> = {
  [grpc.status.INVALID_ARGUMENT]: InvalidArgumentError,
  [grpc.status.NOT_FOUND]: NotFoundError,
  [grpc.status.ALREADY_EXISTS]: AlreadyExistsError,
  [grpc.status.RESOURCE_EXHAUSTED]: ResourceExhaustedError,
  [grpc.status.FAILED_PRECONDITION]: FailedPreconditionError,
  [grpc.status.ABORTED]: AbortedError,
  [grpc.status.OUT_OF_RANGE]: OutOfRangeError,
  [grpc.status.DEADLINE_EXCEEDED]: DeadlineExceededError,
  [grpc.status.UNIMPLEMENTED]: UnimplementedError,
  [grpc.status.UNAUTHENTICATED]: UnauthenticatedError,
  [grpc.status.PERMISSION_DENIED]: PermissionDeniedError,
};

// Answers that prove the node did not create the volume. Everything else (deadline, cancellation,
// lost connection, internal errors, ABORTED = the node is still working on it) leaves it open.
const DEFINITIVE = new Set<grpc.status>([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.NOT_FOUND,
  grpc.status.ALREADY_EXISTS,
  grpc.status.RESOURCE_EXHAUSTED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.OUT_OF_RANGE,
  grpc.status.UNIMPLEMENTED,
  grpc.status.UNAUTHENTICATED,
  grpc.status.PERMISSION_DENIED,
]);

/** The node could not be reached (connection refused, TLS failure, lost connection). */
export class NodeUnreachableError extends UnavailableError {
  constructor(
    readonly nodeId: string,
    /** What went wrong, without the node name (e.g. the gRPC details). */
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`node ${JSON.stringify(nodeId)} is not reachable: ${detail}`, options);
  }
}

/** Convert the error of a call to node `nodeId` into a domain error that names the node. */
export function fromNodeError(nodeId: string, method: string, err: unknown): DomainError {
  const node = JSON.stringify(nodeId);
  if (!isServiceError(err))
    return new InternalError(`${method} on node ${node} failed: ${errorMessage(err)}`, { cause: err });
  if (err.code === grpc.status.UNAVAILABLE) {
    return new NodeUnreachableError(nodeId, err.details, { cause: err });
  }
  if (err.code === grpc.status.CANCELLED)
    return new AbortedError(`${method} on node ${node} was cancelled: ${err.details}`, { cause: err });
  const Class = BY_CODE[err.code] ?? InternalError;
  return new Class(`node ${node}: ${err.details}`, { cause: err });
}

/** Whether a failed forwarded CreateVolume proves that the node did not create the volume. */
export function isDefinitiveFailure(err: unknown): boolean {
  const cause = err instanceof Error && isServiceError(err.cause) ? err.cause : err;
  return isServiceError(cause) && DEFINITIVE.has(cause.code);
}
