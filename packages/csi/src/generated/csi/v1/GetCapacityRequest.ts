// Original file: proto/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.js';
import type { Topology as _csi_v1_Topology, Topology__Output as _csi_v1_Topology__Output } from '../../csi/v1/Topology.js';

export interface GetCapacityRequest {
  /**
   * Only count capacity usable with these capabilities.
   */
  'volume_capabilities'?: (_csi_v1_VolumeCapability)[];
  /**
   * Creation parameters to take into account.
   */
  'parameters'?: ({[key: string]: string});
  /**
   * Only count capacity reachable from this segment.
   */
  'accessible_topology'?: (_csi_v1_Topology | null);
}

export interface GetCapacityRequest__Output {
  /**
   * Only count capacity usable with these capabilities.
   */
  'volume_capabilities': (_csi_v1_VolumeCapability__Output)[];
  /**
   * Creation parameters to take into account.
   */
  'parameters': ({[key: string]: string});
  /**
   * Only count capacity reachable from this segment.
   */
  'accessible_topology': (_csi_v1_Topology__Output | null);
}
