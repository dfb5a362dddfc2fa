// Original file: proto/csi.proto


export interface _csi_v1_VolumeContentSource_SnapshotSource {
  /**
   * Source snapshot.
   */
  'snapshot_id'?: (string);
}

export interface _csi_v1_VolumeContentSource_SnapshotSource__Output {
  /**
   * Source snapshot.
   */
  'snapshot_id': (string);
}

export interface _csi_v1_VolumeContentSource_VolumeSource {
  /**
   * Source volume (clone).
   */
  'volume_id'?: (string);
}

export interface _csi_v1_VolumeContentSource_VolumeSource__Output {
  /**
   * Source volume (clone).
   */
  'volume_id': (string);
}

/**
 * Data source for a new volume; exactly one member is set.
 */
export interface VolumeContentSource {
  'snapshot'?: (_csi_v1_VolumeContentSource_SnapshotSource | null);
  'volume'?: (_csi_v1_VolumeContentSource_VolumeSource | null);
  'type'?: "snapshot"|"volume";
}

/**
 * Data source for a new volume; exactly one member is set.
 */
export interface VolumeContentSource__Output {
  'snapshot'?: (_csi_v1_VolumeContentSource_SnapshotSource__Output | null);
  'volume'?: (_csi_v1_VolumeContentSource_VolumeSource__Output | null);
  'type'?: "snapshot"|"volume";
}
