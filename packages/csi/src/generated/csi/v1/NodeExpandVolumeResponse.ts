// Original file: proto/csi.proto

import type { Long } from '../../long.js';

export interface NodeExpandVolumeResponse {
  /**
   * New size in bytes.
   */
  'capacity_bytes'?: (number | string | Long);
}

export interface NodeExpandVolumeResponse__Output {
  /**
   * New size in bytes.
   */
  'capacity_bytes': (string);
}
