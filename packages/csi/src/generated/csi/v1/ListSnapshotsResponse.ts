// Original file: proto/csi.proto

import type { Snapshot as _csi_v1_Snapshot, Snapshot__Output as _csi_v1_Snapshot__Output } from '../../csi/v1/Snapshot.js';

export interface _csi_v1_ListSnapshotsResponse_Entry {
  'snapshot'?: (_csi_v1_Snapshot | null);
}

export interface _csi_v1_ListSnapshotsResponse_Entry__Output {
  'snapshot': (_csi_v1_Snapshot__Output | null);
}

export interface ListSnapshotsResponse {
  'entries'?: (_csi_v1_ListSnapshotsResponse_Entry)[];
  /**
   * Token for the next page; empty when this is the last page.
   */
  'next_token'?: (string);
}

export interface ListSnapshotsResponse__Output {
  'entries': (_csi_v1_ListSnapshotsResponse_Entry__Output)[];
  /**
   * Token for the next page; empty when this is the last page.
   */
  'next_token': (string);
}
