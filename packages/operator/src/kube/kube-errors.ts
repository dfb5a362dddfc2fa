// Errors of the Kubernetes access port. Callers branch on the HTTP status the apiserver returned
// (never on message text): 404 "gone, nothing to do", 409 "someone else changed it first",
// 422 "this object cannot be written like that" (immutable fields).
export class KubeApiError extends Error {
  constructor(
    /** HTTP status of the apiserver's answer; 0 when the request never got one (network, timeout). */
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export function isNotFound(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 404;
}

export function isConflict(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 409;
}

/**
 * 410 Gone: the resourceVersion a watch continues from is older than the apiserver keeps (an ERROR
 * event "too old resource version", reason Expired). The normal end of a long watch: relist.
 */
export function isExpired(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 410;
}

/** 422: the apiserver refused the object itself (e.g. a change of an immutable field). */
export function isInvalid(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 422;
}
