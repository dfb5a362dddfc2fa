// Original file: proto/csi.proto


export interface CreateVolumeGroupSnapshotRequest {
  /**
   * CO-chosen name; the idempotency key for creation.
   */
  'name'?: (string);
  /**
   * Volumes to snapshot together.
   */
  'source_volume_ids'?: (string)[];
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Opaque driver parameters.
   */
  'parameters'?: ({[key: string]: string});
}

export interface CreateVolumeGroupSnapshotRequest__Output {
  /**
   * CO-chosen name; the idempotency key for creation.
   */
  'name': (string);
  /**
   * Volumes to snapshot together.
   */
  'source_volume_ids': (string)[];
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
  /**
   * Opaque driver parameters.
   */
  'parameters': ({[key: string]: string});
}
