// Original file: proto/csi.proto


/**
 * Health condition of a volume.
 */
export interface VolumeCondition {
  /**
   * True if the volume is in an abnormal state.
   */
  'abnormal'?: (boolean);
  /**
   * Human-readable details.
   */
  'message'?: (string);
}

/**
 * Health condition of a volume.
 */
export interface VolumeCondition__Output {
  /**
   * True if the volume is in an abnormal state.
   */
  'abnormal': (boolean);
  /**
   * Human-readable details.
   */
  'message': (string);
}
