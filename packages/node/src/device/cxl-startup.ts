// The node driver's start-up step for CXL persistent memory (issue 27), before an lvm or direct
// device manager looks for nd regions: `--cxl-regions=assemble` makes one pmem region per CXL
// memory device whose persistent capacity no region maps (device/cxl.ts plans it and never touches
// an existing region or a mapped device) and waits until libnvdimm shows the new regions, so that
// the device manager's setup finds them; `manual` (the default) only reports such capacity, and skips
// the step quietly on machines without the `cxl` tool (a node without CXL devices needs none).
import { requireTools, type CommandRunner, type Logger } from '@pmem-csi/runtime';
import type { CxlRegionPolicy } from '@pmem-csi/api';
import { assembleCxlRegions, type AssembleResult } from './cxl.js';
import { Ndctl } from './ndctl.js';

/** The provider libnvdimm names for regions on the CXL bus (`ndctl list -R`). */
export const CXL_ND_PROVIDER = 'CXL';

export interface CxlStartupOptions {
  /** Bound of the whole step: listing, assembly and the wait for the nd regions (default 120 s). */
  readonly timeoutMs?: number;
  /** Pause between two looks for the new nd regions (default 250 ms). */
  readonly pollMs?: number;
}

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_POLL_MS = 250;

type StepDeps = { readonly runner: CommandRunner; readonly log: Logger };

async function cxlNdRegions(ndctl: Ndctl, signal: AbortSignal): Promise<string[]> {
  const regions = await ndctl.listRegions({ signal });
  return regions.filter((r) => r.provider === CXL_ND_PROVIDER && r.type === 'pmem').map((r) => r.dev);
}

/** Policy manual: list and report, never fail the start (a node without CXL devices needs no cxl tool). */
async function reportOnly(deps: StepDeps, timeoutMs: number): Promise<AssembleResult | undefined> {
  if (deps.runner.which('cxl') === undefined) {
    deps.log.debug('CXL memory devices not looked for: no cxl tool (--cxl-regions=manual)');
    return undefined;
  }
  try {
    return await assembleCxlRegions(deps, false, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    deps.log.warn('CXL memory devices could not be listed (--cxl-regions=manual: going on without them)', {
      error: e instanceof Error ? e.message : String(e),
    });
    return undefined;
  }
}

/** Wait until ndctl lists `want` CXL pmem regions (the kernel registers them asynchronously after the commit). */
async function waitForNdRegions(
  ndctl: Ndctl,
  want: number,
  what: { readonly names: string; readonly before: number; readonly timeoutMs: number; readonly pollMs: number },
  signal: AbortSignal,
): Promise<string[]> {
  for (;;) {
    const now = await cxlNdRegions(ndctl, signal).catch((e: unknown) => {
      if (signal.aborted) return undefined;
      throw e;
    });
    if (now !== undefined && now.length >= want) return now;
    if (signal.aborted || now === undefined) {
      throw new Error(
        `--cxl-regions=assemble: waited ${what.timeoutMs} ms for libnvdimm to show the nd regions of the assembled CXL regions ${what.names}: ` +
          `ndctl lists ${now?.length ?? what.before} CXL pmem regions, expected ${want}`,
      );
    }
    await new Promise((r) => setTimeout(r, what.pollMs));
  }
}

/**
 * Apply the CXL region policy. Returns what the assembly did, or undefined when the step did not run
 * (policy manual without the `cxl` tool, or a listing that failed under policy manual: logged as a warning).
 * @throws under policy assemble: a missing tool (naming the package), a failed listing or assembly,
 *   or the nd regions not appearing in time — the node must not start without the PMEM it was told to use
 */
export async function prepareCxlRegions(
  deps: StepDeps,
  policy: CxlRegionPolicy,
  o: CxlStartupOptions = {},
): Promise<AssembleResult | undefined> {
  const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (policy === 'manual') return reportOnly(deps, timeoutMs);
  requireTools(deps.runner, ['cxl', 'ndctl'], '--cxl-regions=assemble');
  const signal = AbortSignal.timeout(timeoutMs);
  const ndctl = new Ndctl(deps.runner);
  const before = await cxlNdRegions(ndctl, signal);
  const result = await assembleCxlRegions(deps, true, { signal });
  if (result.created.length === 0) return result;
  const names = result.created.map((r) => r.region).join(', ');
  const pollMs = o.pollMs ?? DEFAULT_POLL_MS;
  const now = await waitForNdRegions(
    ndctl,
    before.length + result.created.length,
    { names, before: before.length, timeoutMs, pollMs },
    signal,
  );
  deps.log.info('CXL pmem regions ready for the device manager', { cxlRegions: names, ndRegions: now.join(',') });
  return result;
}
