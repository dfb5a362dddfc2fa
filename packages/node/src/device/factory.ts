// One place that turns the node's --device-mode into a DeviceManager, so the CSI services never
// know which implementation they talk to. Constructors check their prerequisites (root, tools,
// flags) and throw a clear error; setup() is still the caller's job.
// Each implementation is imported when its mode is asked for: a node runs one mode for its whole
// life, and the others' code (ndctl and LVM parsing, loop devices) would only take memory on every
// node of the cluster (the driver's bundle keeps each in its own chunk).
import { join } from 'node:path';
import type { CommandRunner, Logger } from '@pmem-csi/runtime';
import { InvalidArgumentError } from '@pmem-csi/csi';
import { VOLUME_DEVICE_MODES, type VolumeDeviceMode } from '@pmem-csi/api';
import type { DeviceManager } from './device-manager.js';
import type { PmemOwner } from './ownership.js';

export interface DeviceManagerDeps {
  runner: CommandRunner;
  log: Logger;
  /** The driver's state directory, e.g. /var/lib/<driver>; emulated volumes live in `<stateDir>/emulated`. */
  stateDir: string;
  /** lvm mode: share of each region to use, 0..100 (0 means 100). */
  pmemPercentage: number;
  /** emulated mode: pool size in bytes (default 4 GiB). */
  emulatedSize?: number;
  /** fake mode: pool size in bytes (default 1 TiB). */
  fakeSize?: number;
  /**
   * The CSI driver name: lvm and direct mode mark the PMEM they take as this driver instance's and
   * refuse what another one marked (device/ownership.ts). Default: pmem-csi.intel.com.
   */
  driverName?: string;
}

/** The owner of the PMEM an lvm or direct manager takes. */
async function pmemOwner(deps: DeviceManagerDeps): Promise<PmemOwner> {
  const { PmemOwner } = await import('./ownership.js');
  return new PmemOwner(deps.driverName);
}

/** The subdirectory of the state directory that holds emulated backing files. */
export const EMULATED_SUBDIR = 'emulated';

/** The device manager for `mode`. @throws InvalidArgumentError for an unknown mode, or the implementation's precondition errors */
export async function createDeviceManager(mode: VolumeDeviceMode, deps: DeviceManagerDeps): Promise<DeviceManager> {
  const { runner, log } = deps;
  switch (mode) {
    case 'lvm': {
      const { LvmDeviceManager } = await import('./lvm.js');
      return new LvmDeviceManager({ runner, log, pmemPercentage: deps.pmemPercentage, owner: await pmemOwner(deps) });
    }
    case 'direct': {
      const { DirectDeviceManager } = await import('./direct.js');
      return new DirectDeviceManager({ runner, log, owner: await pmemOwner(deps) });
    }
    case 'emulated': {
      const { EMULATED_DEFAULT_SIZE, EmulatedDeviceManager } = await import('./emulated.js');
      return new EmulatedDeviceManager({
        runner,
        log,
        dir: join(deps.stateDir, EMULATED_SUBDIR),
        totalSize: deps.emulatedSize ?? EMULATED_DEFAULT_SIZE,
      });
    }
    case 'fake': {
      const { FAKE_DEFAULT_SIZE, FakeDeviceManager } = await import('./fake.js');
      return new FakeDeviceManager({ log, totalSize: deps.fakeSize ?? FAKE_DEFAULT_SIZE });
    }
    default:
      // Reached only from untyped input (flags, config files).
      throw new InvalidArgumentError(
        `device mode ${JSON.stringify(mode as string)} is not one of ${VOLUME_DEVICE_MODES.join(', ')}`,
      );
  }
}
