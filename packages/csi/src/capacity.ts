// The capacity of one node in bytes: what a device manager reports, what the node registers with
// the controller and what placement reads. One shape for node and controller.

/** Capacity in bytes. `maxVolumeSize` is the largest single volume that can be created now. */
export interface Capacity {
  /** Largest volume that can still be created (after alignment and fragmentation). */
  readonly maxVolumeSize: number;
  /** Free bytes in total (may be fragmented). */
  readonly available: number;
  /** Bytes under this driver's management (e.g. the `pmem-csi` namespaces in lvm mode). */
  readonly managed: number;
  /** All PMEM bytes on the node, managed or not. */
  readonly total: number;
}
