// The one list of device modes, with what distinguishes them. Everything else is derived from it:
// the modes a node may run and record (VOLUME_DEVICE_MODES), the modes the CRD offers (DEVICE_MODES:
// `fake` is for scale tests and never offered) and the modes that manage real PMEM.
//   lvm, direct  manage the node's PMEM (regions, namespaces);
//   emulated     is NOT persistent memory: each volume is a sparse file under the driver's state
//                directory on the node's disk, attached to a loop device (trying PMEM-CSI on a
//                cluster without NVDIMMs, and tests);
//   fake         no block devices at all, in memory (scale tests).
const MODES = {
  lvm: { offered: true, pmem: true },
  direct: { offered: true, pmem: true },
  emulated: { offered: true, pmem: false },
  fake: { offered: false, pmem: false },
} as const;

type Modes = typeof MODES;
/** Every device mode of the node driver. */
export type VolumeDeviceMode = keyof Modes;
/** The device modes a PmemCSIDeployment may choose (the CRD's enum). */
export type OfferedDeviceMode = {
  [M in VolumeDeviceMode]: Modes[M]['offered'] extends true ? M : never;
}[VolumeDeviceMode];
/** The device modes whose node driver manages the node's real PMEM. */
export type PmemDeviceMode = { [M in VolumeDeviceMode]: Modes[M]['pmem'] extends true ? M : never }[VolumeDeviceMode];

const modes = Object.keys(MODES) as VolumeDeviceMode[];

/** Device modes a node may run in and record for a volume. */
export const VOLUME_DEVICE_MODES: readonly VolumeDeviceMode[] = modes;
/** Device modes a user may choose (the CRD's subset of VOLUME_DEVICE_MODES). */
export const DEVICE_MODES: readonly OfferedDeviceMode[] = modes.filter((m): m is OfferedDeviceMode => MODES[m].offered);
/** The device modes whose node driver manages the node's real PMEM (regions, namespaces). */
export const PMEM_DEVICE_MODES: readonly PmemDeviceMode[] = modes.filter((m): m is PmemDeviceMode => MODES[m].pmem);
