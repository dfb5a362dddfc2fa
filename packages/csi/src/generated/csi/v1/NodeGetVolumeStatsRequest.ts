// Original file: proto/csi.proto


export interface NodeGetVolumeStatsRequest {
  /**
   * Volume to inspect.
   */
  'volume_id'?: (string);
  /**
   * Any path the volume is published at.
   */
  'volume_path'?: (string);
  /**
   * Staging directory, if the volume is staged.
   */
  'staging_target_path'?: (string);
}

export interface NodeGetVolumeStatsRequest__Output {
  /**
   * Volume to inspect.
   */
  'volume_id': (string);
  /**
   * Any path the volume is published at.
   */
  'volume_path': (string);
  /**
   * Staging directory, if the volume is staged.
   */
  'staging_target_path': (string);
}
