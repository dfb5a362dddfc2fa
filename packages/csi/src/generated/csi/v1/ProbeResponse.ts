// Original file: proto/csi.proto

import type { BoolValue as _google_protobuf_BoolValue, BoolValue__Output as _google_protobuf_BoolValue__Output } from '../../google/protobuf/BoolValue.js';

export interface ProbeResponse {
  /**
   * Unset means ready; false means still initializing.
   */
  'ready'?: (_google_protobuf_BoolValue | null);
}

export interface ProbeResponse__Output {
  /**
   * Unset means ready; false means still initializing.
   */
  'ready': (_google_protobuf_BoolValue__Output | null);
}
