// Original file: proto/csi.proto

import type { Topology as _csi_v1_Topology, Topology__Output as _csi_v1_Topology__Output } from '../../csi/v1/Topology.js';

/**
 * Placement constraints for a new volume.
 */
export interface TopologyRequirement {
  /**
   * Segments the volume must be accessible from (any of them).
   */
  'requisite'?: (_csi_v1_Topology)[];
  /**
   * Ordered placement preferences.
   */
  'preferred'?: (_csi_v1_Topology)[];
}

/**
 * Placement constraints for a new volume.
 */
export interface TopologyRequirement__Output {
  /**
   * Segments the volume must be accessible from (any of them).
   */
  'requisite': (_csi_v1_Topology__Output)[];
  /**
   * Ordered placement preferences.
   */
  'preferred': (_csi_v1_Topology__Output)[];
}
