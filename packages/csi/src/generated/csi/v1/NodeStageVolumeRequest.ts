// Original file: proto/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.js';

export interface NodeStageVolumeRequest {
  /**
   * Volume to stage.
   */
  'volume_id'?: (string);
  /**
   * ControllerPublishVolumeResponse.publish_context.
   */
  'publish_context'?: ({[key: string]: string});
  /**
   * Per-volume global staging directory on the node.
   */
  'staging_target_path'?: (string);
  /**
   * Capability the volume will be used with.
   */
  'volume_capability'?: (_csi_v1_VolumeCapability | null);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Volume.volume_context from creation.
   */
  'volume_context'?: ({[key: string]: string});
}

export interface NodeStageVolumeRequest__Output {
  /**
   * Volume to stage.
   */
  'volume_id': (string);
  /**
   * ControllerPublishVolumeResponse.publish_context.
   */
  'publish_context': ({[key: string]: string});
  /**
   * Per-volume global staging directory on the node.
   */
  'staging_target_path': (string);
  /**
   * Capability the volume will be used with.
   */
  'volume_capability': (_csi_v1_VolumeCapability__Output | null);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
  /**
   * Volume.volume_context from creation.
   */
  'volume_context': ({[key: string]: string});
}
