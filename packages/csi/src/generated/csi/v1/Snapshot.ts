// Original file: proto/csi.proto

import type { Timestamp as _google_protobuf_Timestamp, Timestamp__Output as _google_protobuf_Timestamp__Output } from '../../google/protobuf/Timestamp.js';
import type { Long } from '../../long.js';

/**
 * A point-in-time snapshot of a volume.
 */
export interface Snapshot {
  /**
   * Size in bytes; 0 means unknown.
   */
  'size_bytes'?: (number | string | Long);
  /**
   * Plugin-assigned snapshot ID.
   */
  'snapshot_id'?: (string);
  /**
   * Volume the snapshot was taken from.
   */
  'source_volume_id'?: (string);
  /**
   * When the snapshot was cut.
   */
  'creation_time'?: (_google_protobuf_Timestamp | null);
  /**
   * True once the snapshot can be used as a volume source.
   */
  'ready_to_use'?: (boolean);
  /**
   * Owning group snapshot, if any.
   */
  'group_snapshot_id'?: (string);
}

/**
 * A point-in-time snapshot of a volume.
 */
export interface Snapshot__Output {
  /**
   * Size in bytes; 0 means unknown.
   */
  'size_bytes': (string);
  /**
   * Plugin-assigned snapshot ID.
   */
  'snapshot_id': (string);
  /**
   * Volume the snapshot was taken from.
   */
  'source_volume_id': (string);
  /**
   * When the snapshot was cut.
   */
  'creation_time': (_google_protobuf_Timestamp__Output | null);
  /**
   * True once the snapshot can be used as a volume source.
   */
  'ready_to_use': (boolean);
  /**
   * Owning group snapshot, if any.
   */
  'group_snapshot_id': (string);
}
