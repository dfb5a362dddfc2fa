// Content hashes for pod-template annotations: a change in anything a pod consumes but does not
// contain (the certificates in its Secret) must still roll the pods. Canonical JSON (sorted keys,
// undefined dropped) so that key order never changes a hash.
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

/** First 32 hex digits of the SHA-256 of the canonical JSON of `parts`. */
export function contentHash(...parts: unknown[]): string {
  return createHash('sha256').update(canonicalJson(parts)).digest('hex').slice(0, 32);
}
