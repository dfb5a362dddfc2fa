// Original file: proto/csi.proto

import type { Long } from '../../long.js';

export interface GetMetadataDeltaRequest {
  /**
   * Older snapshot.
   */
  'base_snapshot_id'?: (string);
  /**
   * Newer snapshot of the same volume.
   */
  'target_snapshot_id'?: (string);
  /**
   * Byte offset to resume from.
   */
  'starting_offset'?: (number | string | Long);
  /**
   * Max ranges per streamed response; 0 lets the plugin choose.
   */
  'max_results'?: (number);
  /**
   * Credentials for the operation.
   */
  'secrets'?: ({[key: string]: string});
}

export interface GetMetadataDeltaRequest__Output {
  /**
   * Older snapshot.
   */
  'base_snapshot_id': (string);
  /**
   * Newer snapshot of the same volume.
   */
  'target_snapshot_id': (string);
  /**
   * Byte offset to resume from.
   */
  'starting_offset': (string);
  /**
   * Max ranges per streamed response; 0 lets the plugin choose.
   */
  'max_results': (number);
  /**
   * Credentials for the operation.
   */
  'secrets': ({[key: string]: string});
}
