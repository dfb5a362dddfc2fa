// Original file: proto/csi.proto


export interface DeleteVolumeRequest {
  /**
   * Volume to delete.
   */
  'volume_id'?: (string);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
}

export interface DeleteVolumeRequest__Output {
  /**
   * Volume to delete.
   */
  'volume_id': (string);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
}
