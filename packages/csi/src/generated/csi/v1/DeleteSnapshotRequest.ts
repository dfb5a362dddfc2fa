// Original file: proto/csi.proto


export interface DeleteSnapshotRequest {
  /**
   * Snapshot to delete.
   */
  'snapshot_id'?: (string);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
}

export interface DeleteSnapshotRequest__Output {
  /**
   * Snapshot to delete.
   */
  'snapshot_id': (string);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
}
