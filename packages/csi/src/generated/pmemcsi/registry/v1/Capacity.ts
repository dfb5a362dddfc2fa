// Original file: proto/registry.proto

import type { Long } from '../../../long.js';

/**
 * Capacity of one node, in bytes.
 */
export interface Capacity {
  /**
   * The largest single volume the node can create now (after alignment and fragmentation).
   */
  'max_volume_size'?: (number | string | Long);
  /**
   * Free bytes in total.
   */
  'available'?: (number | string | Long);
  /**
   * Bytes under the driver's management.
   */
  'managed'?: (number | string | Long);
  /**
   * All PMEM bytes of the node.
   */
  'total'?: (number | string | Long);
}

/**
 * Capacity of one node, in bytes.
 */
export interface Capacity__Output {
  /**
   * The largest single volume the node can create now (after alignment and fragmentation).
   */
  'max_volume_size': (string);
  /**
   * Free bytes in total.
   */
  'available': (string);
  /**
   * Bytes under the driver's management.
   */
  'managed': (string);
  /**
   * All PMEM bytes of the node.
   */
  'total': (string);
}
