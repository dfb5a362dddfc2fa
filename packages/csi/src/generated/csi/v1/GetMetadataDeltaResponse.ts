// Original file: proto/csi.proto

import type { BlockMetadataType as _csi_v1_BlockMetadataType, BlockMetadataType__Output as _csi_v1_BlockMetadataType__Output } from '../../csi/v1/BlockMetadataType.js';
import type { BlockMetadata as _csi_v1_BlockMetadata, BlockMetadata__Output as _csi_v1_BlockMetadata__Output } from '../../csi/v1/BlockMetadata.js';
import type { Long } from '../../long.js';

export interface GetMetadataDeltaResponse {
  /**
   * Range style; constant for the whole stream.
   */
  'block_metadata_type'?: (_csi_v1_BlockMetadataType);
  /**
   * Size of the underlying volume in bytes.
   */
  'volume_capacity_bytes'?: (number | string | Long);
  /**
   * Changed ranges, in ascending offset order.
   */
  'block_metadata'?: (_csi_v1_BlockMetadata)[];
}

export interface GetMetadataDeltaResponse__Output {
  /**
   * Range style; constant for the whole stream.
   */
  'block_metadata_type': (_csi_v1_BlockMetadataType__Output);
  /**
   * Size of the underlying volume in bytes.
   */
  'volume_capacity_bytes': (string);
  /**
   * Changed ranges, in ascending offset order.
   */
  'block_metadata': (_csi_v1_BlockMetadata__Output)[];
}
