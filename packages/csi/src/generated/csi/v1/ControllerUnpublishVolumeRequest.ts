// Original file: proto/csi.proto


export interface ControllerUnpublishVolumeRequest {
  /**
   * Volume to detach.
   */
  'volume_id'?: (string);
  /**
   * Node to detach from; empty means all nodes.
   */
  'node_id'?: (string);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
}

export interface ControllerUnpublishVolumeRequest__Output {
  /**
   * Volume to detach.
   */
  'volume_id': (string);
  /**
   * Node to detach from; empty means all nodes.
   */
  'node_id': (string);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
}
