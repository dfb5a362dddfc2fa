// What goes where in direct mode (direct.ts): which namespace names are volumes, how a region aligns
// a namespace, which region a new volume goes to (best fit) and the largest volume that fits now.
// Pure functions of ndctl's region and namespace reports; the commands are direct.ts's.
import { MiB } from '@pmem-csi/csi';
import { FSDAX_PFN_ALIGN, alignDown, lcm, rawForUsable, usableForRaw } from './sizes.js';
import type { NdNamespace, NdRegion } from './ndctl.js';

/** Names of namespaces this mode owns: volume ids `<first ≤6 chars of name>-<sha224 hex>`. */
export const VOLUME_ID_NAME = /^.{0,6}-[0-9a-f]{56}$/u;
/** ndctl/label limit for namespace names (64-byte label field with its NUL). */
export const NAMESPACE_NAME_MAX_BYTES = 63;
/** Region alignment used when a region reports none or ≤ 1 (worked on emulated regions). */
export const FALLBACK_REGION_ALIGN = 96 * MiB;

/** Whether a namespace name has the shape of our volume ids. */
export function isVolumeIdName(name: string): boolean {
  return VOLUME_ID_NAME.test(name) && Buffer.byteLength(name) <= NAMESPACE_NAME_MAX_BYTES;
}

/** Namespace size alignment of a region: LCM(fsdax align × interleave ways, region align or fallback). */
export function directAlignment(region: NdRegion): number {
  const regionAlign = region.align !== undefined && region.align > 1 ? region.align : FALLBACK_REGION_ALIGN;
  return lcm(FSDAX_PFN_ALIGN * region.interleaveWays, regionAlign);
}

/** Largest volume one contiguous extent of `extent` bytes in `region` can hold. */
export function usableInExtent(region: NdRegion, extent: number): number {
  return usableForRaw(alignDown(extent, directAlignment(region)));
}

export interface Placement {
  readonly region: NdRegion;
  readonly align: number;
  /** Raw namespace size to request. */
  readonly raw: number;
}

/**
 * Where a volume of `size` usable bytes goes: among regions whose largest free extent holds it,
 * the one with the SMALLEST such extent (best fit), so the big extents stay for big volumes and the
 * reported maxVolumeSize shrinks as little as possible.
 */
export function choosePlacement(regions: readonly NdRegion[], size: number): Placement | undefined {
  const fits = regions.flatMap((region) => {
    const align = directAlignment(region);
    const raw = rawForUsable(size, align);
    return raw <= alignDown(region.maxAvailableExtent, align) ? [{ region, align, raw }] : [];
  });
  return fits.sort((a, b) => a.region.maxAvailableExtent - b.region.maxAvailableExtent)[0];
}

/**
 * What `ndctl destroy-namespace` leaves behind: an idle namespace of size 0 with a zero uuid, which
 * the kernel lets KEEP its name (seen in the QEMU tier: {"dev":"namespace0.0","size":0,
 * "uuid":"00000000-...","state":"disabled","name":"<volume id>"}). It is no volume.
 */
export function isDestroyed(ns: NdNamespace): boolean {
  return ns.size === 0;
}

/** The largest volume any of `regions` can hold now (contiguous extent, aligned, minus metadata). */
export function maxVolumeSize(regions: readonly NdRegion[]): number {
  return Math.max(0, ...regions.map((r) => usableInExtent(r, r.maxAvailableExtent)));
}
