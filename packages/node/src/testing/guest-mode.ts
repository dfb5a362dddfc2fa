// What the one real-PMEM guest suite (device/pmem.guest.test.ts) needs of a device mode: the mode's
// own cases (the device manager on blank NVDIMMs, a second driver instance on the same regions, the
// DeviceManager contract, the CSI cases only that mode has, the reboot), and the few differences of
// the CSI cases both modes share. e2e/qemu/harness.mjs names the mode in PMEM_CSI_GUEST_MODE.
import type { Logger } from '@pmem-csi/runtime';
import type { DeviceManager } from '../device/device-manager.js';
import type { Csi, Fs } from './guest-csi.js';

/** The device modes with real PMEM, each run by the QEMU tier in its own guest. */
export const GUEST_MODES = ['lvm', 'direct'] as const;
export type GuestMode = (typeof GUEST_MODES)[number];

/** The mode of this guest run: PMEM_CSI_GUEST_MODE. @throws Error naming the variable and the modes allowed */
export function guestMode(env: NodeJS.ProcessEnv = process.env): GuestMode {
  const mode = env['PMEM_CSI_GUEST_MODE'];
  const known: readonly string[] = GUEST_MODES;
  if (mode === undefined || !known.includes(mode)) {
    throw new Error(
      `PMEM_CSI_GUEST_MODE must be one of ${GUEST_MODES.join(', ')} (e2e/qemu/harness.mjs sets it), got ${JSON.stringify(mode ?? '')}`,
    );
  }
  return mode as GuestMode;
}

/** A volume's PMEM as the eraseafter cases read it: before DeleteVolume and after. */
export interface ErasedSpace {
  /** The volume's bytes on the PMEM now, before the delete. */
  written(): Promise<Buffer>;
  /** The same PMEM after DeleteVolume; whatever it creates to read it is removed again. */
  left(): Promise<Buffer>;
}

/** A volume of the dax case, staged and published. */
export interface PublishedDax {
  readonly volumeId: string;
  readonly fs: Fs;
  /** The size CreateVolume asked for. */
  readonly size: number;
  readonly staging: string;
  readonly target: string;
}

export interface GuestModeSuite {
  readonly mode: GuestMode;
  readonly log: Logger;
  /** A device manager of the mode as the CSI cases' node uses it (setup() not called). */
  newManager(): DeviceManager;
  /** Boot 1: the device manager on blank NVDIMMs. */
  deviceCases(): void;
  /** Boot 1: a second driver instance on the regions the first one marked (issue 32). */
  ownerCases(): void;
  /** Boot 1: the DeviceManager contract as the mode keeps it. */
  contract(): void;
  /** Boot 2 after boot 1: volumes, data and marks survive a power-off. */
  reboot(): void;
  /** The shared CSI cases' differences. */
  readonly csi: {
    /** The dax case of `fs`: its name, and whether CreateVolume gives exactly the size asked for. */
    readonly daxName: (fs: Fs) => string;
    readonly exactCapacity: boolean;
    /** More checks of a published volume of the dax case (before unpublish). */
    readonly published?: (t: Csi, dax: PublishedDax) => Promise<void>;
    /** The FileIO case: its name, its volume's name and the mode's check of the staged volume. */
    readonly fileIoName: string;
    readonly fileIoVolume: string;
    readonly fileIoStaged?: (staging: string) => Promise<void>;
    /** The eraseafter case: its name, and how its PMEM is read before and after DeleteVolume. */
    readonly eraseName: (eraseafter: boolean) => string;
    readonly erasedSpace: (volumeId: string, eraseafter: boolean) => Promise<ErasedSpace>;
    /** The CSI cases only this mode has (expansion, ephemeral volumes, ...). */
    readonly cases: (t: () => Csi) => void;
  };
}
