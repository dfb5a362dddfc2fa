// Original file: proto/csi.proto

import type { Long } from '../../long.js';

/**
 * A byte range of a volume or snapshot.
 */
export interface BlockMetadata {
  /**
   * Start offset in bytes.
   */
  'byte_offset'?: (number | string | Long);
  /**
   * Length in bytes.
   */
  'size_bytes'?: (number | string | Long);
}

/**
 * A byte range of a volume or snapshot.
 */
export interface BlockMetadata__Output {
  /**
   * Start offset in bytes.
   */
  'byte_offset': (string);
  /**
   * Length in bytes.
   */
  'size_bytes': (string);
}
