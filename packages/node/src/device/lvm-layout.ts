// What goes where in lvm mode (lvm.ts): the names of its namespace, volume groups and logical volumes,
// how large a region's namespace is, which VG a new LV goes to, and the view of VGs and LVs that
// one driver has. Pure functions of ndctl and LVM reports; the commands are lvm.ts's.
import { GiB, InternalError } from '@pmem-csi/csi';
import { alignDown, alignUp, lcm } from './sizes.js';
import type { PmemDeviceInfo } from './device-manager.js';
import type { LogicalVolume, VolumeGroup } from './lvm-tools.js';
import type { NdRegion } from './ndctl.js';

/** Name of the namespace that lvm mode creates and owns in each region. */
export const LVM_NAMESPACE_NAME = 'pmem-csi';
/** Volume groups this mode manages: <bus><region>fsdax. */
export const MANAGED_VG = /^ndbus\d+region\d+fsdax$/;
/** Volume groups of older Go driver releases for sector-mode namespaces (`<bus><region>sector`). */
export const GO_SECTOR_VG = /^ndbus\d+region\d+sector$/;

/** Volume groups this mode sees but does not take over, and why (logged at start-up, never touched). */
export function notTakenOver(vgs: readonly VolumeGroup[]): Array<{ vg: string; reason: string }> {
  return vgs
    .filter((g) => GO_SECTOR_VG.test(g.name))
    .map((g) => ({
      vg: g.name,
      reason:
        "the Go driver's sector-mode volume group (older releases): its volumes are not fsdax and are left alone; copy their data to new volumes",
    }));
}

/** Smallest namespace worth turning into a volume group (as in the Go driver). */
export const MIN_LVM_NAMESPACE = 2 * GiB;
/** Namespace size granularity per interleave way (1 GiB proved reliable with the Go driver). */
export const LVM_NAMESPACE_ALIGN = GiB;

/** Characters LVM accepts in LV names (no leading "-", at most 127 characters, not "." or ".."). */
export const LV_NAME = /^(?!\.{1,2}$)[A-Za-z0-9+_.][A-Za-z0-9+_.-]{0,126}$/;

/** The volume group name of a region. */
export function vgNameFor(bus: string, region: string): string {
  return `${bus}${region}fsdax`;
}

/**
 * Raw size of the "pmem-csi" namespace to create in `region`: pmemPercentage % of the region (0 means
 * 100), capped by the largest contiguous free extent, aligned down to LCM(1 GiB × interleave ways,
 * region align); 0 when that is below 2 GiB (the region is then skipped).
 */
export function lvmNamespaceSize(region: NdRegion, pmemPercentage: number): number {
  const pct = pmemPercentage === 0 ? 100 : pmemPercentage;
  const wanted = Number((BigInt(region.size) * BigInt(pct)) / 100n);
  const regionAlign = region.align !== undefined && region.align > 1 ? region.align : 1;
  const align = lcm(LVM_NAMESPACE_ALIGN * region.interleaveWays, regionAlign);
  const size = alignDown(Math.min(wanted, region.maxAvailableExtent), align);
  return size >= MIN_LVM_NAMESPACE ? size : 0;
}

/** Largest LV that fits into one of `vgs` (free space rounded down to the extent size). */
export function largestLvSize(vgs: readonly VolumeGroup[]): number {
  return Math.max(0, ...vgs.map((vg) => alignDown(vg.free, vg.extentSize)));
}

/** The VG with the most free space, where a new LV goes (see chooseVg). */
export function emptiestVg(vgs: readonly VolumeGroup[]): VolumeGroup | undefined {
  return [...vgs].sort((a, b) => b.free - a.free)[0];
}

/**
 * The VG for a new LV of at least `size` bytes: the one with the most free space (spreads volumes
 * over regions, like round-robin, and keeps the others' space), if the extent-rounded size fits.
 */
export function chooseVg(vgs: readonly VolumeGroup[], size: number): { vg: VolumeGroup; size: number } | undefined {
  const best = emptiestVg(vgs);
  if (best === undefined) return undefined;
  const rounded = alignUp(size, best.extentSize);
  return rounded <= best.free ? { vg: best, size: rounded } : undefined;
}

/** The VGs of this mode as one driver sees them. */
export interface LvmState {
  /** VGs it may create volumes in: tagged as its own (the first owner tag, if several). */
  readonly vgs: VolumeGroup[];
  /** VGs whose volumes it lists, finds, grows and deletes: its own and untagged ones. */
  readonly listed: VolumeGroup[];
  /** The volumes in `listed`. */
  readonly lvs: LogicalVolume[];
}

/** The region of a managed VG name (ndbus0region1fsdax → region1). */
export function regionOfVg(vg: string): string {
  return /^ndbus\d+(region\d+)fsdax$/.exec(vg)?.[1] ?? vg;
}

/** Whether a driver has nothing in lvm mode: no VG to create volumes in, no volume. */
export function isEmpty(state: LvmState): boolean {
  return state.vgs.length === 0 && state.lvs.length === 0;
}

/** The VG of an LV. @throws InternalError when lvs and vgs disagree */
export function vgOf(vgs: readonly VolumeGroup[], lv: LogicalVolume): VolumeGroup {
  const vg = vgs.find((g) => g.name === lv.vgName);
  if (vg === undefined) throw new InternalError(`volume group ${lv.vgName} of volume ${lv.name} not found`);
  return vg;
}

/** The DeviceManager's view of an LV. */
export function toInfo(lv: LogicalVolume): PmemDeviceInfo {
  return { volumeId: lv.name, path: lv.path, size: lv.size, dax: true };
}
