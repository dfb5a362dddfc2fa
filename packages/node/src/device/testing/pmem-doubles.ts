// Test doubles of the lvm and direct managers' unit tests (scripted ndctl/LVM, no real PMEM): the
// block-device probe without a host, an owner whose new namespace uuids are known, and a region as
// `ndctl list` describes one.
import { GiB, MiB } from '@pmem-csi/csi';
import { DeviceInUseError } from '../device-manager.js';
import type { NdRegion } from '../ndctl.js';
import { PmemOwner } from '../ownership.js';
import type { BlockDeviceAccess } from '../wipe.js';

/** The block-device probe of a host without devices: `busy` paths are in use; `checked` lists every path probed. */
export class FakeDevices implements BlockDeviceAccess {
  readonly busy = new Set<string>();
  readonly checked: string[] = [];
  async assertNotInUse(path: string, volumeId: string): Promise<void> {
    this.checked.push(path);
    if (this.busy.has(path))
      throw new DeviceInUseError(`device ${path} of volume ${JSON.stringify(volumeId)} is in use (mounted or open)`);
  }
}

/** An owner whose new namespace uuids are known: the random part fixed. */
export class FixedOwner extends PmemOwner {
  override namespaceUuid(): string {
    return super.namespaceUuid('0123456789ab');
  }
}

/** The default driver (pmem-csi.intel.com, owner mark 5c3f485886) and the uuid it gives new namespaces. */
export const OWNER = new FixedOwner();
export const OWNER_UUID = '706d656d-5c3f-8485-8886-0123456789ab';
/** Another driver instance on the same node (owner mark a99c7e08e1) and its namespace uuid. */
export const SECOND = new FixedOwner('second.pmem-csi.example');
export const SECOND_UUID = '706d656d-a99c-87e0-88e1-0123456789ab';

/** A 64 GiB PMEM region of one DIMM, as ndctl lists it, with `over` changed. */
export function region(over: Partial<NdRegion>): NdRegion {
  return {
    dev: 'region0',
    bus: 'ndbus0',
    provider: 'ACPI.NFIT',
    size: 64 * GiB,
    availableSize: 64 * GiB,
    maxAvailableExtent: 64 * GiB,
    align: 16 * MiB,
    type: 'pmem',
    isetId: undefined,
    interleaveWays: 1,
    dimms: ['nmem0'],
    enabled: true,
    ...over,
  };
}
