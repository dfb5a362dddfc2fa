// Original file: proto/csi.proto

import type { Snapshot as _csi_v1_Snapshot, Snapshot__Output as _csi_v1_Snapshot__Output } from '../../csi/v1/Snapshot.js';
import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';

/**
 * A consistent set of snapshots of several volumes.
 */
export interface VolumeGroupSnapshot {
  /**
   * Plugin-assigned group snapshot ID.
   */
  'group_snapshot_id'?: (string);
  /**
   * Member snapshots.
   */
  'snapshots'?: (_csi_v1_Snapshot)[];
  /**
   * When the group snapshot was cut.
   */
  'creation_time'?: (_google_protobuf_Timestamp | null);
  /**
   * True once all members are ready to use.
   */
  'ready_to_use'?: (boolean);
}

/**
 * A consistent set of snapshots of several volumes.
 */
export interface VolumeGroupSnapshot__Output {
  /**
   * Plugin-assigned group snapshot ID.
   */
  'group_snapshot_id': (string);
  /**
   * Member snapshots.
   */
  'snapshots': (_csi_v1_Snapshot__Output)[];
  /**
   * When the group snapshot was cut.
   */
  'creation_time': (_google_protobuf_Timestamp__Output | null);
  /**
   * True once all members are ready to use.
   */
  'ready_to_use': (boolean);
}
