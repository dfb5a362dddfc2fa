// Typed wrapper around the ndctl CLI and strict parsers for its JSON. Every call goes through the
// CommandRunner; callers serialize calls per node (ndctl is not safe under concurrent use).
//
// ndctl's JSON quirks handled here (see __fixtures__/README.md for where each shape comes from):
// - a list of one entry is printed as a bare object by older ndctl (and by newer ones with --human);
// - nothing at all is printed when nothing matches (empty stdout, no "[]");
// - -B nests regions/namespaces/dimms in bus objects {"provider","dev":"ndbusN","regions":[...]};
//   -R with -N nests namespaces in regions, and wraps the list in {"regions":[...]} only when the
//   last region had namespaces; -D adds per-region "mappings" (one per DIMM = interleave ways);
// - sizes are JSON numbers, except that create-namespace prints them human-readable
//   ("2.00 GiB (2.15 GB)"): its output is only used for the device name, then re-listed;
// - iset_id may be a signed/unsigned 64-bit number (beyond double precision) or a hex string: it is
//   kept as text and never used for decisions.
// Anything else fails with an InternalError that names the command and the offending field.
import { runJson, type CommandRunner } from '@pmem-csi/runtime';
import { InternalError } from '@pmem-csi/csi';
import {
  child,
  describe,
  fail,
  isObject,
  optCount,
  optString,
  reqCount,
  reqString,
  type At,
  type Json,
} from './json-output.js';

/** One PMEM (or blk) region as `ndctl list --buses --regions --dimms` reports it. */
export interface NdRegion {
  readonly dev: string;
  /** The bus device name (e.g. ndbus0); undefined when the listing had no bus information. */
  readonly bus: string | undefined;
  readonly provider: string | undefined;
  readonly size: number;
  readonly availableSize: number;
  /** Largest contiguous free extent (falls back to available_size on old ndctl). */
  readonly maxAvailableExtent: number;
  /** Region alignment in bytes, when the kernel reports one. */
  readonly align: number | undefined;
  readonly type: string;
  readonly isetId: string | undefined;
  /** Number of DIMM mappings (interleave ways); 1 when the listing had no mappings. */
  readonly interleaveWays: number;
  /** DIMM device names (nmemX) of the mappings. */
  readonly dimms: readonly string[];
  readonly enabled: boolean;
}

/** One namespace as `ndctl list --namespaces` reports it. */
export interface NdNamespace {
  readonly dev: string;
  /** The region (regionX), from the nesting or else from the namespaceX.Y name. */
  readonly region: string;
  readonly mode: string;
  /** Usable bytes (for fsdax/sector: after metadata); 0 for idle seeds. */
  readonly size: number;
  /** What `ndctl list` shows as uuid: of the pfn/btt/dax device on top (fsdax, sector, devdax), else the namespace's. */
  readonly uuid: string | undefined;
  /** The namespace's own uuid where it differs from `uuid` (`ndctl list -v`'s raw_uuid): the owner mark is there. */
  readonly rawUuid: string | undefined;
  readonly name: string | undefined;
  /** Block device name without /dev (pmem0, pmem0.1, pmem0.2s); absent for devdax/idle ones. */
  readonly blockdev: string | undefined;
  readonly map: string | undefined;
  readonly sectorSize: number | undefined;
  readonly align: number | undefined;
  readonly enabled: boolean;
}

export interface CreateNamespaceRequest {
  readonly region: string;
  readonly name: string;
  /** Raw size in bytes; must be a multiple of the region and namespace alignment. */
  readonly size: number;
  readonly mode: 'fsdax' | 'sector';
  /** Page metadata location for fsdax (we always use "dev"). */
  readonly map?: 'dev' | 'mem';
  /** The namespace uuid (default: ndctl makes one); the owner's mark goes here (ownership.ts). */
  readonly uuid?: string;
}

export interface NdctlCallOptions {
  readonly signal?: AbortSignal;
}

const BYTES = { expected: 'a byte count (non-negative integer)', missing: 'a byte count' };
const optBytes = (o: Json, key: string, at: At): number | undefined => optCount(o, key, at, BYTES);
const reqBytes = (o: Json, key: string, at: At): number => reqCount(o, key, at, BYTES);

function optArray(o: Json, key: string, at: At): unknown[] {
  const v = o[key];
  if (v === undefined) return [];
  if (!Array.isArray(v)) fail(child(at, key), `expected an array, got ${describe(v)}`);
  return v;
}

function isetId(o: Json): string | undefined {
  const v = o['iset_id'];
  return typeof v === 'number' || typeof v === 'string' ? String(v) : undefined;
}

interface Context {
  readonly bus?: string;
  readonly provider?: string;
  readonly region?: string;
}

/** Regions and namespaces found anywhere in one ndctl listing. */
export interface NdctlListing {
  readonly regions: NdRegion[];
  readonly namespaces: NdNamespace[];
}

function parseMappings(o: Json, at: At): string[] {
  return optArray(o, 'mappings', at).map((m, i) => {
    const where = child(child(at, 'mappings'), i);
    if (!isObject(m)) fail(where, `expected a mapping object, got ${describe(m)}`);
    return reqString(m, 'dimm', where);
  });
}

function parseRegion(o: Json, ctx: Context, at: At): NdRegion {
  const availableSize = reqBytes(o, 'available_size', at);
  const dimms = parseMappings(o, at);
  return {
    dev: reqString(o, 'dev', at),
    bus: ctx.bus,
    provider: ctx.provider,
    size: reqBytes(o, 'size', at),
    availableSize,
    maxAvailableExtent: optBytes(o, 'max_available_extent', at) ?? availableSize,
    align: optBytes(o, 'align', at),
    type: reqString(o, 'type', at),
    isetId: isetId(o),
    interleaveWays: Math.max(1, dimms.length),
    dimms,
    enabled: optString(o, 'state', at) !== 'disabled',
  };
}

function regionOfNamespace(dev: string, ctx: Context, at: At): string {
  if (ctx.region !== undefined) return ctx.region;
  const m = /^namespace(\d+)\.\d+$/.exec(dev);
  if (!m) fail(child(at, 'dev'), `cannot tell the region of namespace ${describe(dev)}`);
  return `region${m[1]}`;
}

function parseNamespace(o: Json, ctx: Context, at: At): NdNamespace {
  const dev = reqString(o, 'dev', at);
  const enabled = optString(o, 'state', at) !== 'disabled';
  const size = optBytes(o, 'size', at);
  if (size === undefined && enabled) fail(child(at, 'size'), 'missing (expected a byte count)');
  return {
    dev,
    region: regionOfNamespace(dev, ctx, at),
    mode: optString(o, 'mode', at) ?? 'unknown',
    size: size ?? 0,
    uuid: optString(o, 'uuid', at),
    rawUuid: optString(o, 'raw_uuid', at),
    name: optString(o, 'name', at),
    blockdev: optString(o, 'blockdev', at),
    map: optString(o, 'map', at),
    sectorSize: optBytes(o, 'sector_size', at),
    align: optBytes(o, 'align', at),
    enabled,
  };
}

const CONTAINER_KEYS = ['regions', 'namespaces', 'dimms'] as const;

function walkChildren(o: Json, ctx: Context, at: At, out: NdctlListing): void {
  for (const key of CONTAINER_KEYS) {
    if (key === 'dimms' || o[key] === undefined) continue;
    walk(o[key], ctx, child(at, key), out);
  }
}

function walkObject(o: Json, ctx: Context, at: At, out: NdctlListing): void {
  const dev = o['dev'];
  if (typeof dev !== 'string') {
    // A platform object ({"regions":[...]}, {"namespaces":[...]}, ...) has no dev of its own.
    if (!CONTAINER_KEYS.some((k) => k in o)) fail(at, `expected a bus, region or namespace object, got ${describe(o)}`);
    walkChildren(o, ctx, at, out);
  } else if (/^ndbus\d+$/.test(dev)) {
    walkChildren(o, { bus: dev, provider: optString(o, 'provider', at) }, at, out);
  } else if (/^region\d+$/.test(dev)) {
    out.regions.push(parseRegion(o, ctx, at));
    walkChildren(o, { ...ctx, region: dev }, at, out);
  } else if (/^namespace\d+\.\d+$/.test(dev)) {
    out.namespaces.push(parseNamespace(o, ctx, at));
  } else if (!/^nmem\d+$/.test(dev)) {
    fail(child(at, 'dev'), `unknown device ${describe(dev)}`);
  }
}

function walk(value: unknown, ctx: Context, at: At, out: NdctlListing): void {
  if (value === undefined) return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => walk(v, ctx, child(at, i), out));
  } else if (isObject(value)) {
    walkObject(value, ctx, at, out);
  } else {
    fail(at, `expected JSON objects or arrays, got ${describe(value)}`);
  }
}

/** Parse any `ndctl list` output shape (undefined = empty output) into regions and namespaces. */
export function parseNdctlListing(value: unknown, source = 'ndctl list'): NdctlListing {
  const out: NdctlListing = { regions: [], namespaces: [] };
  walk(value, {}, { source, path: '' }, out);
  return out;
}

/** Parse `ndctl create-namespace` output: only the device name is trusted (sizes are human text). */
export function parseCreatedNamespace(value: unknown, source = 'ndctl create-namespace'): string {
  const at: At = { source, path: '' };
  const obj = Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
  if (!isObject(obj)) fail(at, `expected the created namespace object, got ${describe(value)}`);
  const dev = reqString(obj, 'dev', at);
  if (!/^namespace\d+\.\d+$/.test(dev)) fail(child(at, 'dev'), `not a namespace name: ${describe(dev)}`);
  return dev;
}

/** A label-less region's single raw namespace (kernel type "io", no uuid), if the listing has one. */
export function labelLessNamespace(namespaces: readonly NdNamespace[]): NdNamespace | undefined {
  return namespaces.find((ns) => ns.enabled && ns.mode === 'raw' && ns.uuid === undefined && ns.size > 0);
}

/** The ndctl commands the device managers use. */
export class Ndctl {
  readonly #runner: CommandRunner;

  constructor(runner: CommandRunner) {
    this.#runner = runner;
  }

  async #list(args: string[], o: NdctlCallOptions): Promise<NdctlListing> {
    const source = `ndctl list ${args.join(' ')}`;
    return runJson(this.#runner, { command: 'ndctl', args: ['list', ...args], options: { signal: o.signal } }, (v) =>
      parseNdctlListing(v, source),
    );
  }

  /** All regions (enabled or not) with bus and DIMM mappings: `ndctl list --buses --regions --dimms --idle`. */
  async listRegions(o: NdctlCallOptions = {}): Promise<NdRegion[]> {
    return (await this.#list(['--buses', '--regions', '--dimms', '--idle'], o)).regions;
  }

  /**
   * Namespaces, including disabled ones and idle seeds: `ndctl list --namespaces --idle -v [...]`
   * (-v adds raw_uuid, the namespace's own uuid, which carries the owner mark; also numa_node and
   * media errors, which are not read).
   */
  async listNamespaces(
    filter: { region?: string; namespace?: string } = {},
    o: NdctlCallOptions = {},
  ): Promise<NdNamespace[]> {
    const args = ['--namespaces', '--idle', '-v'];
    if (filter.region !== undefined) args.push(`--region=${filter.region}`);
    if (filter.namespace !== undefined) args.push(`--namespace=${filter.namespace}`);
    return (await this.#list(args, o)).namespaces;
  }

  /** Create a namespace and return it as listed afterwards (exact byte sizes). */
  async createNamespace(req: CreateNamespaceRequest, o: NdctlCallOptions = {}): Promise<NdNamespace> {
    const args = [
      'create-namespace',
      `--region=${req.region}`,
      `--mode=${req.mode}`,
      `--size=${req.size}`,
      `--name=${req.name}`,
    ];
    if (req.uuid !== undefined) args.push(`--uuid=${req.uuid}`);
    if (req.mode === 'fsdax') args.push(`--map=${req.map ?? 'dev'}`);
    const dev = await runJson(this.#runner, { command: 'ndctl', args, options: { signal: o.signal } }, (v) =>
      parseCreatedNamespace(v),
    );
    const [ns] = await this.listNamespaces({ namespace: dev }, o);
    if (ns === undefined)
      throw new InternalError(`ndctl create-namespace reported ${dev}, but ndctl list does not show it`);
    return ns;
  }

  /** Destroy a namespace; --force disables it first (fails if it is mounted). */
  async destroyNamespace(dev: string, o: NdctlCallOptions = {}): Promise<void> {
    await this.#runner.run('ndctl', ['destroy-namespace', '--force', dev], { signal: o.signal });
  }

  /** Enable a disabled namespace (so its block device appears). */
  async enableNamespace(dev: string, o: NdctlCallOptions = {}): Promise<void> {
    await this.#runner.run('ndctl', ['enable-namespace', dev], { signal: o.signal });
  }

  /**
   * Write empty label index blocks so the region supports several namespaces. DESTROYS the region's
   * label-less namespace: callers decide when that is safe (see `initLabelsIfSafe` in label-init.ts).
   */
  async initLabels(
    target: { region?: string; dimms?: readonly string[] } = {},
    o: NdctlCallOptions = {},
  ): Promise<void> {
    const region = target.region ?? 'all';
    const dimms = target.dimms && target.dimms.length > 0 ? [...target.dimms] : ['all'];
    await this.#runner.run('ndctl', ['disable-region', region], { signal: o.signal });
    try {
      await this.#runner.run('ndctl', ['init-labels', '-f', ...dimms], { signal: o.signal });
    } finally {
      await this.#runner.run('ndctl', ['enable-region', region], { signal: o.signal });
    }
  }
}
