// Original file: proto/csi.proto

import type { VolumeUsage as _csi_v1_VolumeUsage, VolumeUsage__Output as _csi_v1_VolumeUsage__Output } from '../../csi/v1/VolumeUsage.js';
import type { VolumeCondition as _csi_v1_VolumeCondition, VolumeCondition__Output as _csi_v1_VolumeCondition__Output } from '../../csi/v1/VolumeCondition.js';

export interface NodeGetVolumeStatsResponse {
  /**
   * Usage figures (bytes and/or inodes).
   */
  'usage'?: (_csi_v1_VolumeUsage)[];
  /**
   * Health of the volume as seen from the node.
   */
  'volume_condition'?: (_csi_v1_VolumeCondition | null);
}

export interface NodeGetVolumeStatsResponse__Output {
  /**
   * Usage figures (bytes and/or inodes).
   */
  'usage': (_csi_v1_VolumeUsage__Output)[];
  /**
   * Health of the volume as seen from the node.
   */
  'volume_condition': (_csi_v1_VolumeCondition__Output | null);
}
