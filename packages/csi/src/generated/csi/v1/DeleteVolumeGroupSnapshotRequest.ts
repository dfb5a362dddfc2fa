// Original file: proto/csi.proto


export interface DeleteVolumeGroupSnapshotRequest {
  /**
   * Group snapshot to delete.
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

export interface DeleteVolumeGroupSnapshotRequest__Output {
  /**
   * Group snapshot to delete.
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
