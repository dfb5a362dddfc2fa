// Original file: proto/csi.proto

/**
 * How block metadata ranges are expressed.
 */
export const BlockMetadataType = {
  UNKNOWN: 'UNKNOWN',
  /**
   * Ranges all have the same size.
   */
  FIXED_LENGTH: 'FIXED_LENGTH',
  /**
   * Ranges (extents) may differ in size.
   */
  VARIABLE_LENGTH: 'VARIABLE_LENGTH',
} as const;

/**
 * How block metadata ranges are expressed.
 */
export type BlockMetadataType =
  | 'UNKNOWN'
  | 0
  /**
   * Ranges all have the same size.
   */
  | 'FIXED_LENGTH'
  | 1
  /**
   * Ranges (extents) may differ in size.
   */
  | 'VARIABLE_LENGTH'
  | 2

/**
 * How block metadata ranges are expressed.
 */
export type BlockMetadataType__Output = typeof BlockMetadataType[keyof typeof BlockMetadataType]
