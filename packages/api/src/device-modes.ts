// The one list of device modes, with what distinguishes them. Everything else is derived from it:
// the modes a node may run and record (VOLUME_DEVICE_MODES), the modes the CRD offers
// (OFFERED_DEVICE_MODES: `fake` is for scale tests and never offered) and the modes that manage
// real PMEM (PMEM_DEVICE_MODES). One name per list across packages: node uses VOLUME_DEVICE_MODES.
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
export const OFFERED_DEVICE_MODES: readonly OfferedDeviceMode[] = modes.filter(
  (m): m is OfferedDeviceMode => MODES[m].offered,
);
/** The device modes whose node driver manages the node's real PMEM (regions, namespaces). */
export const PMEM_DEVICE_MODES: readonly PmemDeviceMode[] = modes.filter((m): m is PmemDeviceMode => MODES[m].pmem);

/**
 * One driver per node's PMEM (issue 32): two node drivers in PMEM-managing modes on one node would
 * both carve namespaces and volume groups out of the same regions. The rule in the words the
 * operator's PmemOverlap condition, the CRD description and the README use; the order is the one of
 * OBJECT_NAME_OWNERSHIP_RULE (names.ts), so that every operator replica picks the same deployment.
 */
export const PMEM_OVERLAP_RULE =
  'on a node that the node selectors of several PmemCSIDeployments in a PMEM-managing device mode (lvm, direct) match, only the earliest runs its node driver: ' +
  'the one with the earliest metadata.creationTimestamp, of those created in the same second the one whose name sorts first';

/**
 * How many node selector terms the required node affinity of a node DaemonSet may get for keeping
 * off the nodes of earlier PMEM-managing deployments. Excluding one earlier node selector with n
 * labels (that the deployment's own node selector lacks) takes n terms, ORed; several earlier ones
 * multiply (a node matching {a: 1, b: 2} is excluded by "a NotIn [1]" OR "b NotIn [2]"). Disjoint
 * selectors (the same key, different values) take none. Past this bound the operator refuses.
 */
export const PMEM_OVERLAP_MAX_NODE_SELECTOR_TERMS = 32;

/**
 * What the node driver does with CXL memory devices' persistent capacity that no region maps yet
 * (issue 27): `manual` (the default: regions come from the firmware or are made by hand) lists it and
 * logs what it would assemble; `assemble` makes one pmem region per device at start-up
 * (`cxl create-region`), which lvm and direct mode then use like an NVDIMM region. Assembly programs
 * the device's and the host bridge's decoders and commits device capacity into a platform memory
 * window, a machine-level choice, so it is never the default; the driver never destroys a region.
 * Not "off"/"on": YAML 1.1, which Kubernetes reads manifests with, takes an unquoted off as false.
 * The node driver's flag --cxl-regions, the PmemCSIDeployment's spec.cxlRegions.
 */
export const CXL_REGION_POLICIES = ['manual', 'assemble'] as const;
export type CxlRegionPolicy = (typeof CXL_REGION_POLICIES)[number];
