// Comparison of PmemCSIDeployment statuses that ignores timestamps, so that the operator writes
// the status only when something a reader cares about changed (every write bumps resourceVersion
// and wakes every watcher, including the operator itself).
import type { PmemCSIDeploymentStatus } from './generated/pmemcsideployment.js';

/**
 * True when `a` and `b` differ at most in lastUpdated, lastTransitionTime and the order of the
 * keyed lists (conditions by type, driverComponents by component). Missing and undefined fields
 * are equal; a missing status equals an empty one.
 */
export function statusEqual(a: PmemCSIDeploymentStatus | undefined, b: PmemCSIDeploymentStatus | undefined): boolean {
  return canonical(comparable(a ?? {})) === canonical(comparable(b ?? {}));
}

function comparable(status: PmemCSIDeploymentStatus): unknown {
  const { lastUpdated: _lastUpdated, conditions, driverComponents, ...rest } = status;
  return {
    ...rest,
    conditions: [...(conditions ?? [])]
      .map(({ lastTransitionTime: _t, ...c }) => c)
      .sort((x, y) => compare(x.type, y.type)),
    driverComponents: [...(driverComponents ?? [])]
      .map(({ lastUpdated: _t, ...c }) => c)
      .sort((x, y) => compare(x.component, y.component)),
  };
}

// JSON with sorted keys: key order and undefined-valued fields do not matter.
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => compare(x, y)))
      : v,
  );
}

// Code-unit order: independent of the process locale, unlike localeCompare.
function compare(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
