// Original file: proto/csi.proto

import type { Long } from '../../long.js';

// Original file: proto/csi.proto

export const _csi_v1_VolumeUsage_Unit = {
  UNKNOWN: 'UNKNOWN',
  BYTES: 'BYTES',
  INODES: 'INODES',
} as const;

export type _csi_v1_VolumeUsage_Unit =
  | 'UNKNOWN'
  | 0
  | 'BYTES'
  | 1
  | 'INODES'
  | 2

export type _csi_v1_VolumeUsage_Unit__Output = typeof _csi_v1_VolumeUsage_Unit[keyof typeof _csi_v1_VolumeUsage_Unit]

/**
 * One usage figure.
 */
export interface VolumeUsage {
  /**
   * Free amount.
   */
  'available'?: (number | string | Long);
  /**
   * Total amount.
   */
  'total'?: (number | string | Long);
  /**
   * Used amount.
   */
  'used'?: (number | string | Long);
  /**
   * Unit of the three figures above.
   */
  'unit'?: (_csi_v1_VolumeUsage_Unit);
}

/**
 * One usage figure.
 */
export interface VolumeUsage__Output {
  /**
   * Free amount.
   */
  'available': (string);
  /**
   * Total amount.
   */
  'total': (string);
  /**
   * Used amount.
   */
  'used': (string);
  /**
   * Unit of the three figures above.
   */
  'unit': (_csi_v1_VolumeUsage_Unit__Output);
}
