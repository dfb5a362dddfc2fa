// Original file: proto/csi.proto


export interface GetVolumeGroupSnapshotRequest {
  /**
   * Group snapshot to look up.
   */
  'group_snapshot_id'?: (string);
  /**
   * Member snapshot IDs.
   */
  'snapshot_ids'?: (string)[];
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
}

export interface GetVolumeGroupSnapshotRequest__Output {
  /**
   * Group snapshot to look up.
   */
  'group_snapshot_id': (string);
  /**
   * Member snapshot IDs.
   */
  'snapshot_ids': (string)[];
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
}
