// Original file: proto/csi.proto


export interface CreateSnapshotRequest {
  /**
   * Volume to snapshot.
   */
  'source_volume_id'?: (string);
  /**
   * CO-chosen name; the idempotency key for creation.
   */
  'name'?: (string);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
  /**
   * Opaque driver parameters (e.g. VolumeSnapshotClass parameters).
   */
  'parameters'?: ({[key: string]: string});
}

export interface CreateSnapshotRequest__Output {
  /**
   * Volume to snapshot.
   */
  'source_volume_id': (string);
  /**
   * CO-chosen name; the idempotency key for creation.
   */
  'name': (string);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
  /**
   * Opaque driver parameters (e.g. VolumeSnapshotClass parameters).
   */
  'parameters': ({[key: string]: string});
}
