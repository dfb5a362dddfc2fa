// Original file: proto/csi.proto

import type { VolumeCapability as _csi_v1_VolumeCapability, VolumeCapability__Output as _csi_v1_VolumeCapability__Output } from '../../csi/v1/VolumeCapability.js';

export interface ControllerPublishVolumeRequest {
  /**
   * Volume to attach.
   */
  'volume_id'?: (string);
  /**
   * Target node, as reported by NodeGetInfo.
   */
  'node_id'?: (string);
  /**
   * Capability the volume will be used with.
   */
  'volume_capability'?: (_csi_v1_VolumeCapability | null);
  /**
   * Attach read-only.
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

export interface ControllerPublishVolumeRequest__Output {
  /**
   * Volume to attach.
   */
  'volume_id': (string);
  /**
   * Target node, as reported by NodeGetInfo.
   */
  'node_id': (string);
  /**
   * Capability the volume will be used with.
   */
  'volume_capability': (_csi_v1_VolumeCapability__Output | null);
  /**
   * Attach read-only.
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
