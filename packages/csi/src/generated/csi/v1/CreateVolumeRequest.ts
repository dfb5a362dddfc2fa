// Original file: proto/csi.proto

import type { CapacityRange as _csi_v1_CapacityRange, CapacityRange__Output as _csi_v1_CapacityRange__Output } from '../../csi/v1/CapacityRange.js';
import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.js';
import type { VolumeContentSource as _csi_v1_VolumeContentSource, VolumeContentSource__Output as _csi_v1_VolumeContentSource__Output } from '../../csi/v1/VolumeContentSource.js';
import type { TopologyRequirement as _csi_v1_TopologyRequirement, TopologyRequirement__Output as _csi_v1_TopologyRequirement__Output } from '../../csi/v1/TopologyRequirement.js';

export interface CreateVolumeRequest {
  /**
   * CO-chosen name; the idempotency key for creation.
   */
  'name'?: (string);
  /**
   * Requested size bounds; unset lets the plugin choose.
   */
  'capacity_range'?: (_csi_v1_CapacityRange | null);
  /**
   * Every capability the new volume must be usable with.
   */
  'volume_capabilities'?: (_csi_v1_VolumeCapability)[];
  /**
   * Opaque driver parameters (e.g. StorageClass parameters).
   */
  'parameters'?: ({[key: string]: string});
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Optional snapshot or volume to pre-populate from.
   */
  'volume_content_source'?: (_csi_v1_VolumeContentSource | null);
  /**
   * Where the volume must / should be accessible.
   */
  'accessibility_requirements'?: (_csi_v1_TopologyRequirement | null);
  /**
   * Initial values of parameters that ControllerModifyVolume may change.
   */
  'mutable_parameters'?: ({[key: string]: string});
}

export interface CreateVolumeRequest__Output {
  /**
   * CO-chosen name; the idempotency key for creation.
   */
  'name': (string);
  /**
   * Requested size bounds; unset lets the plugin choose.
   */
  'capacity_range': (_csi_v1_CapacityRange__Output | null);
  /**
   * Every capability the new volume must be usable with.
   */
  'volume_capabilities': (_csi_v1_VolumeCapability__Output)[];
  /**
   * Opaque driver parameters (e.g. StorageClass parameters).
   */
  'parameters': ({[key: string]: string});
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
  /**
   * Optional snapshot or volume to pre-populate from.
   */
  'volume_content_source': (_csi_v1_VolumeContentSource__Output | null);
  /**
   * Where the volume must / should be accessible.
   */
  'accessibility_requirements': (_csi_v1_TopologyRequirement__Output | null);
  /**
   * Initial values of parameters that ControllerModifyVolume may change.
   */
  'mutable_parameters': ({[key: string]: string});
}
