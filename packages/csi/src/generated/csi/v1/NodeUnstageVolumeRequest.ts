// Original file: proto/csi.proto


export interface NodeUnstageVolumeRequest {
  /**
   * Volume to unstage.
   */
  'volume_id'?: (string);
  /**
   * Staging directory used in NodeStageVolume.
   */
  'staging_target_path'?: (string);
}

export interface NodeUnstageVolumeRequest__Output {
  /**
   * Volume to unstage.
   */
  'volume_id': (string);
  /**
   * Staging directory used in NodeStageVolume.
   */
  'staging_target_path': (string);
}
