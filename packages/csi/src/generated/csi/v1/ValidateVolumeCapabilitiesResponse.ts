// Original file: proto/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.js';

/**
 * Echo of what the plugin confirmed as supported.
 */
export interface _csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed {
  'volume_context'?: ({[key: string]: string});
  'volume_capabilities'?: (_csi_v1_VolumeCapability)[];
  'parameters'?: ({[key: string]: string});
  'mutable_parameters'?: ({[key: string]: string});
}

/**
 * Echo of what the plugin confirmed as supported.
 */
export interface _csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed__Output {
  'volume_context': ({[key: string]: string});
  'volume_capabilities': (_csi_v1_VolumeCapability__Output)[];
  'parameters': ({[key: string]: string});
  'mutable_parameters': ({[key: string]: string});
}

export interface ValidateVolumeCapabilitiesResponse {
  /**
   * Set only when everything requested is supported.
   */
  'confirmed'?: (_csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed | null);
  /**
   * Human-readable explanation when not confirmed.
   */
  'message'?: (string);
}

export interface ValidateVolumeCapabilitiesResponse__Output {
  /**
   * Set only when everything requested is supported.
   */
  'confirmed': (_csi_v1_ValidateVolumeCapabilitiesResponse_Confirmed__Output | null);
  /**
   * Human-readable explanation when not confirmed.
   */
  'message': (string);
}
