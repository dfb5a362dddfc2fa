// The EmulatedPmem condition: a deployment in emulated device mode runs a working driver whose
// volumes are NOT persistent memory. Each volume is a sparse file in <state dir>/emulated on the
// node's disk (/var/lib/<driver name>/emulated, a hostPath) attached to a loop device: real
// filesystems and mounts, but no DAX, disk speed and the disk's durability. Anyone who sees a
// PMEM-CSI driver would assume PMEM, so the status says otherwise for as long as it is true:
// EmulatedPmem=True (LoopBackedFiles) with the capacity per node, and a Warning event when it
// turns True (deployment-status.ts). It is judged from the device mode the driver actually runs with (a
// refused change away from emulated keeps it True). When the driver runs in lvm or direct mode
// again the condition turns False (PmemDeviceMode); a deployment that never ran emulated has none.
import {
  driverHostPaths,
  getCondition,
  type ConditionUpdate,
  type DefaultedSpec,
  type DeploymentCondition,
} from '@pmem-csi/api';

export const EMULATED_PMEM_REASONS = { emulated: 'LoopBackedFiles', pmem: 'PmemDeviceMode' } as const;

/**
 * EmulatedPmem for a driver named `driverName` that runs with `spec` (the effective spec: its
 * device mode is the deployed one), given the conditions the status has now.
 */
export function emulatedPmem(
  driverName: string,
  spec: Pick<DefaultedSpec, 'deviceMode' | 'emulatedSize'>,
  conditions: readonly DeploymentCondition[] | undefined,
): ConditionUpdate | undefined {
  if (spec.deviceMode === 'emulated') {
    const dir = `${driverHostPaths(driverName).stateDir}/emulated`;
    return {
      type: 'EmulatedPmem',
      status: 'True',
      reason: EMULATED_PMEM_REASONS.emulated,
      message:
        `device mode emulated: volumes are NOT persistent memory. Each volume is a sparse file in ${dir} on the node's disk, attached to a loop device ` +
        `(real filesystems and mounts, but no DAX, disk speed and durability); each node driver offers ${String(spec.emulatedSize)} (spec.emulatedSize). ` +
        'For trying PMEM-CSI and for tests; use deviceMode lvm or direct on nodes with PMEM.',
    };
  }
  if (getCondition(conditions, 'EmulatedPmem') === undefined) return undefined;
  return {
    type: 'EmulatedPmem',
    status: 'False',
    reason: EMULATED_PMEM_REASONS.pmem,
    message: `the driver runs in device mode ${spec.deviceMode} and manages the nodes' PMEM`,
  };
}
