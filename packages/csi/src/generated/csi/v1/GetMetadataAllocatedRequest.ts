// Original file: proto/csi.proto

import type { Long } from '../../long.js';

export interface GetMetadataAllocatedRequest {
  /**
   * Snapshot to inspect.
   */
  'snapshot_id'?: (string);
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

export interface GetMetadataAllocatedRequest__Output {
  /**
   * Snapshot to inspect.
   */
  'snapshot_id': (string);
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
