// Original file: proto/csi.proto

import type { Long } from '../../long.js';

export interface ControllerExpandVolumeResponse {
  /**
   * New size in bytes.
   */
  'capacity_bytes'?: (number | string | Long);
  /**
   * Whether NodeExpandVolume must follow.
   */
  'node_expansion_required'?: (boolean);
}

export interface ControllerExpandVolumeResponse__Output {
  /**
   * New size in bytes.
   */
  'capacity_bytes': (string);
  /**
   * Whether NodeExpandVolume must follow.
   */
  'node_expansion_required': (boolean);
}
