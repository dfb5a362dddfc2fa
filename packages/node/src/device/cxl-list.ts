// Strict parser for `cxl list -vvv` (the ndctl package's `cxl` tool, 76.1 and later): the CXL
// topology the node needs to assemble a pmem region from a type-3 memory device.
//
// The listing nests: bus objects ("bus":"root0") hold "ports:root0" (host bridges, depth 1; deeper
// switch ports nest "ports:portN"), ports hold "endpoints:portN" (one per memdev, with the memdev
// object nested as "memdev" and its decoders as "decoders:endpointN") and "decoders:portN"; the bus
// holds its root decoders ("decoders:root0": the fixed memory windows, pmem_capable and
// max_available_extent) and each root decoder its regions ("regions:decoder0.0"). A list of one
// entry may be a bare object; nothing matching prints nothing. Recorded shapes: __fixtures__/cxl/.
// Anything else fails with an InternalError that names the command and the offending field.
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

/** One CXL memory device (memX). */
export interface CxlMemdev {
  readonly memdev: string;
  /** Persistent capacity in bytes (0 when the device has none). */
  readonly pmemSize: number;
  /** Volatile capacity in bytes. */
  readonly ramSize: number;
  readonly serial: number | undefined;
  /** The PCI device (e.g. 0000:0d:00.0). */
  readonly host: string | undefined;
  /** The CXL host bridge (e.g. ACPI0016:00) the device sits behind; undefined when the listing did not show its port. */
  readonly hostBridge: string | undefined;
  /** Its endpoint port (endpointN). */
  readonly endpoint: string | undefined;
}

/** An endpoint decoder (decoderN.M of an endpoint): maps device capacity (DPA) into a region. */
export interface CxlEndpointDecoder {
  readonly decoder: string;
  readonly memdev: string;
  readonly region: string | undefined;
  /** Device capacity this decoder holds (0 when idle). */
  readonly dpaSize: number;
  /** "pmem" or "ram" once allocated. */
  readonly mode: string | undefined;
  readonly enabled: boolean;
}

/** A root decoder (a platform CXL fixed memory window). */
export interface CxlRootDecoder {
  readonly decoder: string;
  readonly size: number;
  readonly interleaveWays: number;
  readonly maxAvailableExtent: number;
  readonly pmemCapable: boolean;
  /** Host bridges it decodes to (the targets' names, e.g. ACPI0016:00). */
  readonly targets: readonly string[];
}

/** An assembled region. */
export interface CxlRegion {
  readonly region: string;
  readonly rootDecoder: string | undefined;
  readonly size: number;
  readonly interleaveWays: number;
  readonly decodeState: string | undefined;
  /** "pmem" or "ram" when the listing says so (cxl 78+ prints "type"). */
  readonly type: string | undefined;
  readonly memdevs: readonly string[];
}

export interface CxlTopology {
  readonly memdevs: CxlMemdev[];
  readonly endpointDecoders: CxlEndpointDecoder[];
  readonly rootDecoders: CxlRootDecoder[];
  readonly regions: CxlRegion[];
}

interface Ctx {
  readonly hostBridge?: string;
  readonly rootDecoder?: string;
}
interface Acc {
  memdevs: Map<string, CxlMemdev>;
  endpointDecoders: CxlEndpointDecoder[];
  rootDecoders: CxlRootDecoder[];
  regions: Map<string, CxlRegion>;
}

function optBool(o: Json, key: string, at: At): boolean {
  const v = o[key];
  if (v === undefined) return false;
  if (typeof v !== 'boolean') fail(child(at, key), `expected true or false, got ${describe(v)}`);
  return v;
}

function array(v: unknown, at: At): unknown[] {
  if (Array.isArray(v)) return v;
  if (isObject(v)) return [v];
  fail(at, `expected an array, got ${describe(v)}`);
}

function objects(v: unknown, at: At, each: (o: Json, at: At) => void): void {
  array(v, at).forEach((item, i) => {
    const where = child(at, i);
    if (!isObject(item)) fail(where, `expected an object, got ${describe(item)}`);
    each(item, where);
  });
}

function parseMemdev(o: Json, ctx: Ctx, at: At, acc: Acc): void {
  const memdev = reqString(o, 'memdev', at);
  if (!/^mem\d+$/.test(memdev)) fail(child(at, 'memdev'), `not a memdev name: ${describe(memdev)}`);
  const prev = acc.memdevs.get(memdev);
  acc.memdevs.set(memdev, {
    memdev,
    pmemSize: optCount(o, 'pmem_size', at) ?? 0,
    ramSize: optCount(o, 'ram_size', at) ?? 0,
    serial: optCount(o, 'serial', at),
    host: optString(o, 'host', at),
    hostBridge: ctx.hostBridge ?? prev?.hostBridge,
    endpoint: prev?.endpoint,
  });
}

function parseRegion(o: Json, ctx: Ctx, at: At, acc: Acc): void {
  const region = reqString(o, 'region', at);
  const memdevs: string[] = [];
  objects(o['mappings'] ?? [], child(at, 'mappings'), (m, where) => memdevs.push(reqString(m, 'memdev', where)));
  acc.regions.set(region, {
    region,
    rootDecoder: ctx.rootDecoder,
    size: reqCount(o, 'size', at),
    interleaveWays: optCount(o, 'interleave_ways', at) ?? 1,
    decodeState: optString(o, 'decode_state', at),
    type: optString(o, 'type', at),
    memdevs,
  });
}

function parseRootDecoder(o: Json, at: At, acc: Acc): void {
  const decoder = reqString(o, 'decoder', at);
  const targets: string[] = [];
  objects(o['targets'] ?? [], child(at, 'targets'), (t, where) => targets.push(reqString(t, 'target', where)));
  const size = reqCount(o, 'size', at);
  acc.rootDecoders.push({
    decoder,
    size,
    interleaveWays: optCount(o, 'interleave_ways', at) ?? 1,
    maxAvailableExtent: optCount(o, 'max_available_extent', at) ?? 0,
    pmemCapable: optBool(o, 'pmem_capable', at),
    targets,
  });
  for (const key of Object.keys(o).filter((k) => k.startsWith('regions:'))) {
    objects(o[key], child(at, key), (r, where) => parseRegion(r, { rootDecoder: decoder }, where, acc));
  }
}

function parseEndpointDecoder(o: Json, memdev: string, at: At, acc: Acc): void {
  acc.endpointDecoders.push({
    decoder: reqString(o, 'decoder', at),
    memdev,
    region: optString(o, 'region', at),
    dpaSize: optCount(o, 'dpa_size', at) ?? 0,
    mode: optString(o, 'mode', at),
    enabled: optString(o, 'state', at) !== 'disabled',
  });
}

function parseEndpoint(o: Json, ctx: Ctx, at: At, acc: Acc): void {
  const endpoint = reqString(o, 'endpoint', at);
  const memdev = reqString(o, 'host', at);
  const nested = o['memdev'];
  if (nested !== undefined) {
    if (!isObject(nested)) fail(child(at, 'memdev'), `expected an object, got ${describe(nested)}`);
    parseMemdev(nested, ctx, child(at, 'memdev'), acc);
  }
  const known = acc.memdevs.get(memdev);
  if (known !== undefined) acc.memdevs.set(memdev, { ...known, hostBridge: ctx.hostBridge, endpoint });
  for (const key of Object.keys(o).filter((k) => k.startsWith('decoders:'))) {
    objects(o[key], child(at, key), (d, where) => parseEndpointDecoder(d, memdev, where, acc));
  }
}

function parsePort(o: Json, ctx: Ctx, at: At, acc: Acc): void {
  const depth = reqCount(o, 'depth', at);
  const host = reqString(o, 'host', at);
  const inner: Ctx = { hostBridge: depth === 1 ? host : ctx.hostBridge };
  for (const key of Object.keys(o)) {
    if (key.startsWith('ports:')) objects(o[key], child(at, key), (p, w) => parsePort(p, inner, w, acc));
    else if (key.startsWith('endpoints:')) objects(o[key], child(at, key), (e, w) => parseEndpoint(e, inner, w, acc));
  }
}

function parseBus(o: Json, at: At, acc: Acc): void {
  for (const key of Object.keys(o)) {
    if (key.startsWith('ports:')) objects(o[key], child(at, key), (p, w) => parsePort(p, {}, w, acc));
    else if (key.startsWith('decoders:')) objects(o[key], child(at, key), (d, w) => parseRootDecoder(d, w, acc));
    else if (key.startsWith('memdevs:')) objects(o[key], child(at, key), (m, w) => parseMemdev(m, {}, w, acc));
  }
}

/** Parse `cxl list -vvv` (or any listing of buses, or bare memdevs). Empty output is an empty topology. */
export function parseCxlList(value: unknown, source = 'cxl list -vvv'): CxlTopology {
  const acc: Acc = { memdevs: new Map(), endpointDecoders: [], rootDecoders: [], regions: new Map() };
  const at: At = { source, path: '' };
  if (value !== undefined) {
    objects(value, at, (o, where) => {
      if (typeof o['bus'] === 'string') parseBus(o, where, acc);
      else if (typeof o['memdev'] === 'string') parseMemdev(o, {}, where, acc);
      else if (typeof o['region'] === 'string') parseRegion(o, {}, where, acc);
      else fail(where, `expected a bus, memdev or region object, got ${describe(o)}`);
    });
  }
  return {
    memdevs: [...acc.memdevs.values()],
    endpointDecoders: acc.endpointDecoders,
    rootDecoders: acc.rootDecoders,
    regions: [...acc.regions.values()],
  };
}

/** Parse `cxl create-region` output: the created region (size exact, decode_state). */
export function parseCreatedRegion(value: unknown, source = 'cxl create-region'): CxlRegion {
  const at: At = { source, path: '' };
  const obj = Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
  if (!isObject(obj)) fail(at, `expected the created region object, got ${describe(value)}`);
  const acc: Acc = { memdevs: new Map(), endpointDecoders: [], rootDecoders: [], regions: new Map() };
  parseRegion(obj, {}, at, acc);
  const [region] = acc.regions.values();
  if (region === undefined || !/^region\d+$/.test(region.region)) fail(child(at, 'region'), 'not a region name');
  return region;
}
