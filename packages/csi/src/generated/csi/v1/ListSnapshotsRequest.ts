// Original file: proto/csi.proto


export interface ListSnapshotsRequest {
  /**
   * Page size; 0 means no limit.
   */
  'max_entries'?: (number);
  /**
   * next_token of the previous page; empty for the first page.
   */
  'starting_token'?: (string);
  /**
   * Filter: only snapshots of this volume.
   */
  'source_volume_id'?: (string);
  /**
   * Filter: only this snapshot.
   */
  'snapshot_id'?: (string);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
}

export interface ListSnapshotsRequest__Output {
  /**
   * Page size; 0 means no limit.
   */
  'max_entries': (number);
  /**
   * next_token of the previous page; empty for the first page.
   */
  'starting_token': (string);
  /**
   * Filter: only snapshots of this volume.
   */
  'source_volume_id': (string);
  /**
   * Filter: only this snapshot.
   */
  'snapshot_id': (string);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
}
