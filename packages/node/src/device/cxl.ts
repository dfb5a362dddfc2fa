// CXL persistent memory (issue 27): discovery and pmem region assembly with the ndctl package's
// `cxl` tool, through the node's one CommandRunner (timeouts, missing tool named). Once assembled,
// a CXL pmem region is an nd region like an NVDIMM one, and lvm and direct mode work on it as is.
//
// Safety: the planner never touches an existing region, never a memdev some region already maps
// (the driver adds no second region to a device), never a memdev with only volatile capacity; each
// of those is reported with the reason. Assembly runs only when the caller's policy allows it.
import { runJson, CommandNotFoundError, type CommandRunner, type Logger } from '@pmem-csi/runtime';
import { InternalError } from '@pmem-csi/csi';
import { parseCreatedRegion, parseCxlList, type CxlMemdev, type CxlRegion, type CxlTopology } from './cxl-list.js';

export type { CxlTopology, CxlMemdev, CxlRegion, CxlRootDecoder, CxlEndpointDecoder } from './cxl-list.js';

/** CXL regions are assembled in multiples of this (the CXL HDM decoder granule). */
export const CXL_REGION_ALIGN = 256 * 1024 * 1024;

/** One region to create: `cxl create-region -t pmem -m -d <rootDecoder> -w 1 <memdev> -s <size>`. */
export interface CxlRegionPlan {
  readonly memdev: string;
  readonly rootDecoder: string;
  readonly size: number;
}

/** A memdev or region that is left alone, and why. */
export interface CxlSkipped {
  readonly what: string;
  readonly reason: string;
}

export interface CxlPlan {
  readonly create: CxlRegionPlan[];
  readonly skipped: CxlSkipped[];
  /** Free persistent bytes per memdev (pmem capacity minus what its endpoint decoders hold). */
  readonly freePmem: ReadonlyMap<string, number>;
}

export interface CxlCallOptions {
  readonly signal?: AbortSignal;
}

const MIB = 1024 * 1024;
const mib = (n: number): string => `${(n / MIB).toFixed(0)} MiB`;

/** Free persistent capacity of each memdev: pmem_size minus the pmem its endpoint decoders hold. */
export function freePersistentCapacity(topo: CxlTopology): Map<string, number> {
  const free = new Map<string, number>();
  for (const m of topo.memdevs) {
    const used = topo.endpointDecoders
      .filter((d) => d.memdev === m.memdev && d.mode === 'pmem')
      .reduce((sum, d) => sum + d.dpaSize, 0);
    free.set(m.memdev, Math.max(0, m.pmemSize - used));
  }
  return free;
}

/** Why `m` gets no region, or undefined when it may get one (capacity and window not yet checked). */
function refusal(m: CxlMemdev, topo: CxlTopology): string | undefined {
  const inRegion = topo.regions.filter((r) => r.memdevs.includes(m.memdev)).map((r) => r.region);
  const decoders = topo.endpointDecoders.filter((d) => d.memdev === m.memdev);
  if (m.pmemSize === 0) return `only volatile capacity (ram ${mib(m.ramSize)}, no pmem): not a PMEM device`;
  if (inRegion.length > 0 || decoders.some((d) => d.region !== undefined)) {
    return `already mapped by ${inRegion.join(', ') || 'a region'}: the driver adds no second region to a device`;
  }
  if (!decoders.some((d) => d.region === undefined && d.dpaSize === 0)) return 'no idle endpoint decoder';
  if (m.hostBridge === undefined) return 'its host bridge is unknown (the listing shows no port for it)';
  return undefined;
}

/** The region for `m` (taking its room from `extent`), or why there is none. */
function planOne(m: CxlMemdev, topo: CxlTopology, bytes: number, extent: Map<string, number>): CxlRegionPlan | string {
  const refused = refusal(m, topo);
  if (refused !== undefined) return refused;
  const size = Math.floor(bytes / CXL_REGION_ALIGN) * CXL_REGION_ALIGN;
  if (size === 0) return `free persistent capacity ${mib(bytes)} is below one 256 MiB region`;
  const hb = m.hostBridge ?? '';
  const root = topo.rootDecoders.find(
    (d) =>
      d.pmemCapable &&
      d.interleaveWays === 1 &&
      d.targets.includes(hb) &&
      (extent.get(d.decoder) ?? 0) >= CXL_REGION_ALIGN,
  );
  if (root === undefined) return `no pmem-capable 1-way root decoder with free space decodes to its host bridge ${hb}`;
  const room = extent.get(root.decoder) ?? 0;
  const take = Math.min(size, Math.floor(room / CXL_REGION_ALIGN) * CXL_REGION_ALIGN);
  extent.set(root.decoder, room - take);
  return { memdev: m.memdev, rootDecoder: root.decoder, size: take };
}

/**
 * Which regions to assemble: for each memdev with free persistent capacity and no region yet, one
 * region of that capacity (rounded down to 256 MiB, and to the window's free extent) in a
 * pmem-capable root decoder that decodes to the memdev's host bridge with one way.
 */
export function planCxlRegions(topo: CxlTopology): CxlPlan {
  const free = freePersistentCapacity(topo);
  const create: CxlRegionPlan[] = [];
  const skipped: CxlSkipped[] = topo.regions.map((r) => ({
    what: r.region,
    reason: `existing region (${mib(r.size)}, ${r.memdevs.join('+') || 'no mappings'}): never changed by the driver`,
  }));
  const extent = new Map(topo.rootDecoders.map((d) => [d.decoder, d.maxAvailableExtent]));
  for (const m of topo.memdevs) {
    const p = planOne(m, topo, free.get(m.memdev) ?? 0, extent);
    if (typeof p === 'string') skipped.push({ what: m.memdev, reason: p });
    else create.push(p);
  }
  return { create, skipped, freePmem: free };
}

/** The `cxl` commands the node uses. */
export class Cxl {
  readonly #runner: CommandRunner;

  constructor(runner: CommandRunner) {
    this.#runner = runner;
  }

  #require(): void {
    if (this.#runner.which('cxl') === undefined) {
      throw new CommandNotFoundError(
        'CXL persistent memory needs the cxl tool, not found on this machine (Debian package: ndctl, version 76 or later)',
        'cxl',
        null,
        '',
      );
    }
  }

  /** The whole topology: `cxl list -vvv`. */
  async list(o: CxlCallOptions = {}): Promise<CxlTopology> {
    this.#require();
    return runJson(this.#runner, { command: 'cxl', args: ['list', '-vvv'], options: { signal: o.signal } }, (v) =>
      parseCxlList(v),
    );
  }

  /** Assemble one pmem region and return it as `cxl create-region` reports it (decode_state commit). */
  async createRegion(plan: CxlRegionPlan, o: CxlCallOptions = {}): Promise<CxlRegion> {
    this.#require();
    if (plan.size <= 0 || plan.size % CXL_REGION_ALIGN !== 0) {
      throw new InternalError(`cxl region size ${plan.size} is not a positive multiple of 256 MiB`);
    }
    const args = [
      'create-region',
      '-t',
      'pmem',
      '-m',
      '-d',
      plan.rootDecoder,
      '-w',
      '1',
      plan.memdev,
      '-s',
      String(plan.size),
    ];
    const region = await runJson(this.#runner, { command: 'cxl', args, options: { signal: o.signal } }, (v) =>
      parseCreatedRegion(v),
    );
    if (region.decodeState !== undefined && region.decodeState !== 'commit') {
      throw new InternalError(
        `cxl create-region made ${region.region} but its decode_state is ${region.decodeState}, not commit`,
      );
    }
    return region;
  }
}

export interface AssembleResult {
  readonly created: CxlRegion[];
  readonly skipped: CxlSkipped[];
  /** Regions planned but not created because the policy does not allow assembly. */
  readonly notAllowed: CxlRegionPlan[];
}

/**
 * Discover CXL persistent memory and, when `allow` is true, assemble the planned pmem regions
 * (one at a time; a failure stops and is thrown, regions created before it stay). Logs each
 * creation and each device left alone.
 */
export async function assembleCxlRegions(
  deps: { runner: CommandRunner; log: Logger },
  allow: boolean,
  o: CxlCallOptions = {},
): Promise<AssembleResult> {
  const cxl = new Cxl(deps.runner);
  const plan = planCxlRegions(await cxl.list(o));
  for (const s of plan.skipped) deps.log.info('CXL device left alone', { device: s.what, reason: s.reason });
  if (!allow) {
    for (const p of plan.create) {
      deps.log.info('CXL persistent memory without a region: not assembled (not allowed by policy)', { ...p });
    }
    return { created: [], skipped: plan.skipped, notAllowed: plan.create };
  }
  const created: CxlRegion[] = [];
  for (const p of plan.create) {
    const region = await cxl.createRegion(p, o);
    deps.log.info('assembled CXL pmem region', {
      region: region.region,
      memdev: p.memdev,
      rootDecoder: p.rootDecoder,
      size: region.size,
    });
    created.push(region);
  }
  return { created, skipped: plan.skipped, notAllowed: [] };
}
