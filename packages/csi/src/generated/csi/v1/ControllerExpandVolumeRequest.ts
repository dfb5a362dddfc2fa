// Original file: proto/csi.proto

import type { CapacityRange as _csi_v1_CapacityRange, CapacityRange__Output as _csi_v1_CapacityRange__Output } from '../../csi/v1/CapacityRange.js';
import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.js';

export interface ControllerExpandVolumeRequest {
  /**
   * Volume to grow.
   */
  'volume_id'?: (string);
  /**
   * New size bounds.
   */
  'capacity_range'?: (_csi_v1_CapacityRange | null);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Capability the volume is (or will be) used with.
   */
  'volume_capability'?: (_csi_v1_VolumeCapability | null);
}

export interface ControllerExpandVolumeRequest__Output {
  /**
   * Volume to grow.
   */
  'volume_id': (string);
  /**
   * New size bounds.
   */
  'capacity_range': (_csi_v1_CapacityRange__Output | null);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
  /**
   * Capability the volume is (or will be) used with.
   */
  'volume_capability': (_csi_v1_VolumeCapability__Output | null);
}
