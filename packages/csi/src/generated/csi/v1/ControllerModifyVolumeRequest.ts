// Original file: proto/csi.proto


export interface ControllerModifyVolumeRequest {
  /**
   * Volume to modify.
   */
  'volume_id'?: (string);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Desired full set of mutable parameters; absent keys are removed.
   */
  'mutable_parameters'?: ({[key: string]: string});
}

export interface ControllerModifyVolumeRequest__Output {
  /**
   * Volume to modify.
   */
  'volume_id': (string);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
  /**
   * Desired full set of mutable parameters; absent keys are removed.
   */
  'mutable_parameters': ({[key: string]: string});
}
