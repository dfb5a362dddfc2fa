// Original file: proto/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.js';

export interface NodePublishVolumeRequest {
  /**
   * Volume to publish.
   */
  'volume_id'?: (string);
  /**
   * ControllerPublishVolumeResponse.publish_context.
   */
  'publish_context'?: ({[key: string]: string});
  /**
   * Staging directory, when STAGE_UNSTAGE_VOLUME is supported.
   */
  'staging_target_path'?: (string);
  /**
   * Per-workload path to mount / expose the volume at.
   */
  'target_path'?: (string);
  /**
   * Capability the volume will be used with.
   */
  'volume_capability'?: (_csi_v1_VolumeCapability | null);
  /**
   * Publish read-only.
   */
  'readonly'?: (boolean);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Volume.volume_context from creation.
   */
  'volume_context'?: ({[key: string]: string});
}

export interface NodePublishVolumeRequest__Output {
  /**
   * Volume to publish.
   */
  'volume_id': (string);
  /**
   * ControllerPublishVolumeResponse.publish_context.
   */
  'publish_context': ({[key: string]: string});
  /**
   * Staging directory, when STAGE_UNSTAGE_VOLUME is supported.
   */
  'staging_target_path': (string);
  /**
   * Per-workload path to mount / expose the volume at.
   */
  'target_path': (string);
  /**
   * Capability the volume will be used with.
   */
  'volume_capability': (_csi_v1_VolumeCapability__Output | null);
  /**
   * Publish read-only.
   */
  'readonly': (boolean);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
  /**
   * Volume.volume_context from creation.
   */
  'volume_context': ({[key: string]: string});
}
