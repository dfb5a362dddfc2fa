// Original file: proto/csi.proto

import type { Volume as _csi_v1_Volume, Volume__Output as _csi_v1_Volume__Output } from '../../csi/v1/Volume.js';
import type { VolumeCondition as _csi_v1_VolumeCondition, VolumeCondition__Output as _csi_v1_VolumeCondition__Output } from '../../csi/v1/VolumeCondition.js';

/**
 * Runtime state of the volume.
 */
export interface _csi_v1_ControllerGetVolumeResponse_VolumeStatus {
  /**
   * Nodes the volume is published to.
   */
  'published_node_ids'?: (string)[];
  /**
   * Health of the volume.
   */
  'volume_condition'?: (_csi_v1_VolumeCondition | null);
}

/**
 * Runtime state of the volume.
 */
export interface _csi_v1_ControllerGetVolumeResponse_VolumeStatus__Output {
  /**
   * Nodes the volume is published to.
   */
  'published_node_ids': (string)[];
  /**
   * Health of the volume.
   */
  'volume_condition': (_csi_v1_VolumeCondition__Output | null);
}

export interface ControllerGetVolumeResponse {
  'volume'?: (_csi_v1_Volume | null);
  'status'?: (_csi_v1_ControllerGetVolumeResponse_VolumeStatus | null);
}

export interface ControllerGetVolumeResponse__Output {
  'volume': (_csi_v1_Volume__Output | null);
  'status': (_csi_v1_ControllerGetVolumeResponse_VolumeStatus__Output | null);
}
