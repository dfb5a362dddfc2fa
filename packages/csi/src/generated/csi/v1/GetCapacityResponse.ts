// Original file: proto/csi.proto

import type { Int64Value as _google_protobuf_Int64Value, Int64Value__Output as _google_protobuf_Int64Value__Output } from '../../google/protobuf/Int64Value.js';
import type { Long } from '../../long.js';

export interface GetCapacityResponse {
  /**
   * Bytes available for new volumes.
   */
  'available_capacity'?: (number | string | Long);
  /**
   * Largest volume that could be created now; unset if unknown.
   */
  'maximum_volume_size'?: (_google_protobuf_Int64Value | null);
  /**
   * Smallest volume that can be created; unset if unknown.
   */
  'minimum_volume_size'?: (_google_protobuf_Int64Value | null);
}

export interface GetCapacityResponse__Output {
  /**
   * Bytes available for new volumes.
   */
  'available_capacity': (string);
  /**
   * Largest volume that could be created now; unset if unknown.
   */
  'maximum_volume_size': (_google_protobuf_Int64Value__Output | null);
  /**
   * Smallest volume that can be created; unset if unknown.
   */
  'minimum_volume_size': (_google_protobuf_Int64Value__Output | null);
}
