// Original file: proto/csi.proto

import type { Long } from '../../long.js';

/**
 * Size bounds in bytes; 0 means "not set".
 */
export interface CapacityRange {
  /**
   * Lower bound.
   */
  'required_bytes'?: (number | string | Long);
  /**
   * Upper bound.
   */
  'limit_bytes'?: (number | string | Long);
}

/**
 * Size bounds in bytes; 0 means "not set".
 */
export interface CapacityRange__Output {
  /**
   * Lower bound.
   */
  'required_bytes': (string);
  /**
   * Upper bound.
   */
  'limit_bytes': (string);
}
