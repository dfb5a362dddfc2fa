// Original file: proto/csi.proto


export interface ControllerGetVolumeRequest {
  /**
   * Volume to look up.
   */
  'volume_id'?: (string);
}

export interface ControllerGetVolumeRequest__Output {
  /**
   * Volume to look up.
   */
  'volume_id': (string);
}
