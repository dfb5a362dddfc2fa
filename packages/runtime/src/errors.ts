// Transitional (issue 29): the domain errors are CSI vocabulary, defined and imported from
// @pmem-csi/csi. This file passes them on only for packages/node/src, which still imports them from
// the runtime; it is deleted with the export in index.ts once node imports them from csi
// (packages/csi/src/one-door.test.ts then fails until it is). Nothing in the runtime imports it.
export {
  AbortedError,
  AlreadyExistsError,
  DeadlineExceededError,
  FailedPreconditionError,
  InternalError,
  InvalidArgumentError,
  NotFoundError,
  OutOfRangeError,
  ResourceExhaustedError,
  UnavailableError,
  UnimplementedError,
  errorMessage,
} from '@pmem-csi/csi';
