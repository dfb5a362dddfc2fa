// Original file: proto/csi.proto


export interface GetSnapshotRequest {
  /**
   * Snapshot to look up.
   */
  'snapshot_id'?: (string);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
}

export interface GetSnapshotRequest__Output {
  /**
   * Snapshot to look up.
   */
  'snapshot_id': (string);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
}
