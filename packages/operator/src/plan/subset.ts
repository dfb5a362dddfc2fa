// "Does the live object already say everything we would apply?" Server-side apply of an unchanged
// object is a no-op on the server but still a request; reconciles run on every status change of
// the driver workloads, so objects whose desired fields all match are not sent again.
// Fields the apiserver added (defaults, status, metadata) are ignored; anything we set must match.

/** True when every field set in `desired` has the same value in `live` (arrays element by element). */
export function isSubset(desired: unknown, live: unknown): boolean {
  if (desired === undefined) return true;
  if (Array.isArray(desired)) {
    return Array.isArray(live) && desired.length === live.length && desired.every((d, i) => isSubset(d, live[i]));
  }
  if (desired !== null && typeof desired === 'object') {
    if (live === null || typeof live !== 'object' || Array.isArray(live)) return false;
    const l = live as Record<string, unknown>;
    return Object.entries(desired as Record<string, unknown>).every(([k, v]) => isSubset(v, l[k]));
  }
  return desired === live;
}
