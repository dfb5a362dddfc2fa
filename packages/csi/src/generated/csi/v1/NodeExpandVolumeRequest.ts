// Original file: proto/csi.proto

import type { CapacityRange as _csi_v1_CapacityRange, CapacityRange__Output as _csi_v1_CapacityRange__Output } from '../../csi/v1/CapacityRange.js';
import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.js';

export interface NodeExpandVolumeRequest {
  /**
   * Volume to grow on the node.
   */
  'volume_id'?: (string);
  /**
   * Any path the volume is published at.
   */
  'volume_path'?: (string);
  /**
   * New size bounds.
   */
  'capacity_range'?: (_csi_v1_CapacityRange | null);
  /**
   * Staging directory, if the volume is staged.
   */
  'staging_target_path'?: (string);
  /**
   * Capability the volume is used with.
   */
  'volume_capability'?: (_csi_v1_VolumeCapability | null);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
}

export interface NodeExpandVolumeRequest__Output {
  /**
   * Volume to grow on the node.
   */
  'volume_id': (string);
  /**
   * Any path the volume is published at.
   */
  'volume_path': (string);
  /**
   * New size bounds.
   */
  'capacity_range': (_csi_v1_CapacityRange__Output | null);
  /**
   * Staging directory, if the volume is staged.
   */
  'staging_target_path': (string);
  /**
   * Capability the volume is used with.
   */
  'volume_capability': (_csi_v1_VolumeCapability__Output | null);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
}
