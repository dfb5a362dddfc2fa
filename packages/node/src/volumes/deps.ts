// What the CSI services of a node share: identity, the device manager, the volume records, the
// command runner and ONE set of per-volume locks, so the node-controller service (create/delete)
// and the node service (stage/publish) never work on the same volume at the same time.
import type { CommandRunner, KeyedLocks, Logger } from '@pmem-csi/runtime';
import type { DeviceManager } from '../device/device-manager.js';
import type { VolumeStateStore } from '../state/volume-store.js';
import type { VolumeHooks } from './hooks.js';

export interface NodeServiceDeps {
  /** The CSI driver name, e.g. pmem-csi.intel.com (also the topology key prefix). */
  readonly driverName: string;
  /** This node's id (the Kubernetes node name). */
  readonly nodeId: string;
  readonly dm: DeviceManager;
  readonly state: VolumeStateStore;
  readonly runner: CommandRunner;
  /** Per-volume-id locks shared by every service of this node. */
  readonly locks: KeyedLocks;
  readonly log: Logger;
  /** Driver version for GetPluginInfo. */
  readonly version?: string;
  /** Size of a CreateVolume without capacity_range (default @pmem-csi/csi DEFAULT_VOLUME_SIZE, as the central controller). */
  readonly defaultVolumeSize?: number;
  /** Whether the process holds a Linux capability (default: read from /proc/self/status). */
  readonly hasCapability?: (cap: number) => Promise<boolean>;
  /** Test-only observation points (see hooks.ts). */
  readonly hooks?: VolumeHooks;
}

/** Whether volumes of this device mode can grow (every mode but direct: namespaces have a fixed size). */
export function canExpand(deps: Pick<NodeServiceDeps, 'dm'>): boolean {
  return deps.dm.mode !== 'direct';
}
