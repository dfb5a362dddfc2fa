// The domain errors are CSI vocabulary and live in @pmem-csi/csi (errors.ts); the runtime passes
// them on so that its own modules and its users keep one import path. No class is defined here.
export {
  AbortedError,
  AlreadyExistsError,
  DeadlineExceededError,
  DomainError,
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
  asError,
  errorMessage,
  type ErrorKind,
} from '@pmem-csi/csi';
