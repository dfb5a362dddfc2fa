// Original file: proto/csi.proto


export interface NodeUnpublishVolumeRequest {
  /**
   * Volume to unpublish.
   */
  'volume_id'?: (string);
  /**
   * Path used in NodePublishVolume.
   */
  'target_path'?: (string);
}

export interface NodeUnpublishVolumeRequest__Output {
  /**
   * Volume to unpublish.
   */
  'volume_id': (string);
  /**
   * Path used in NodePublishVolume.
   */
  'target_path': (string);
}
