// Original file: proto/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.js';

export interface ValidateVolumeCapabilitiesRequest {
  /**
   * Volume to check.
   */
  'volume_id'?: (string);
  /**
   * Volume.volume_context from creation.
   */
  'volume_context'?: ({[key: string]: string});
  /**
   * Capabilities to validate.
   */
  'volume_capabilities'?: (_csi_v1_VolumeCapability)[];
  /**
   * Creation-time parameters.
   */
  'parameters'?: ({[key: string]: string});
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Mutable parameters to validate.
   */
  'mutable_parameters'?: ({[key: string]: string});
}

export interface ValidateVolumeCapabilitiesRequest__Output {
  /**
   * Volume to check.
   */
  'volume_id': (string);
  /**
   * Volume.volume_context from creation.
   */
  'volume_context': ({[key: string]: string});
  /**
   * Capabilities to validate.
   */
  'volume_capabilities': (_csi_v1_VolumeCapability__Output)[];
  /**
   * Creation-time parameters.
   */
  'parameters': ({[key: string]: string});
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
  /**
   * Mutable parameters to validate.
   */
  'mutable_parameters': ({[key: string]: string});
}
