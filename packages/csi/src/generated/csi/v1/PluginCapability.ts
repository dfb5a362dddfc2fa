// Original file: proto/csi.proto


/**
 * Which optional services / behaviours the plugin offers.
 */
export interface _csi_v1_PluginCapability_Service {
  'type'?: (_csi_v1_PluginCapability_Service_Type);
}

/**
 * Which optional services / behaviours the plugin offers.
 */
export interface _csi_v1_PluginCapability_Service__Output {
  'type': (_csi_v1_PluginCapability_Service_Type__Output);
}

// Original file: proto/csi.proto

export const _csi_v1_PluginCapability_Service_Type = {
  UNKNOWN: 'UNKNOWN',
  /**
   * The Controller service is implemented.
   */
  CONTROLLER_SERVICE: 'CONTROLLER_SERVICE',
  /**
   * Volumes are only reachable from some topology segments.
   */
  VOLUME_ACCESSIBILITY_CONSTRAINTS: 'VOLUME_ACCESSIBILITY_CONSTRAINTS',
  /**
   * The GroupController service is implemented.
   */
  GROUP_CONTROLLER_SERVICE: 'GROUP_CONTROLLER_SERVICE',
  /**
   * The SnapshotMetadata service is implemented.
   */
  SNAPSHOT_METADATA_SERVICE: 'SNAPSHOT_METADATA_SERVICE',
} as const;

export type _csi_v1_PluginCapability_Service_Type =
  | 'UNKNOWN'
  | 0
  /**
   * The Controller service is implemented.
   */
  | 'CONTROLLER_SERVICE'
  | 1
  /**
   * Volumes are only reachable from some topology segments.
   */
  | 'VOLUME_ACCESSIBILITY_CONSTRAINTS'
  | 2
  /**
   * The GroupController service is implemented.
   */
  | 'GROUP_CONTROLLER_SERVICE'
  | 3
  /**
   * The SnapshotMetadata service is implemented.
   */
  | 'SNAPSHOT_METADATA_SERVICE'
  | 4

export type _csi_v1_PluginCapability_Service_Type__Output = typeof _csi_v1_PluginCapability_Service_Type[keyof typeof _csi_v1_PluginCapability_Service_Type]

// Original file: proto/csi.proto

export const _csi_v1_PluginCapability_VolumeExpansion_Type = {
  UNKNOWN: 'UNKNOWN',
  /**
   * Volumes can grow while published to a node.
   */
  ONLINE: 'ONLINE',
  /**
   * Volumes can only grow while not published.
   */
  OFFLINE: 'OFFLINE',
} as const;

export type _csi_v1_PluginCapability_VolumeExpansion_Type =
  | 'UNKNOWN'
  | 0
  /**
   * Volumes can grow while published to a node.
   */
  | 'ONLINE'
  | 1
  /**
   * Volumes can only grow while not published.
   */
  | 'OFFLINE'
  | 2

export type _csi_v1_PluginCapability_VolumeExpansion_Type__Output = typeof _csi_v1_PluginCapability_VolumeExpansion_Type[keyof typeof _csi_v1_PluginCapability_VolumeExpansion_Type]

/**
 * Which kind of volume expansion the plugin supports.
 */
export interface _csi_v1_PluginCapability_VolumeExpansion {
  'type'?: (_csi_v1_PluginCapability_VolumeExpansion_Type);
}

/**
 * Which kind of volume expansion the plugin supports.
 */
export interface _csi_v1_PluginCapability_VolumeExpansion__Output {
  'type': (_csi_v1_PluginCapability_VolumeExpansion_Type__Output);
}

/**
 * One plugin-wide capability.
 */
export interface PluginCapability {
  'service'?: (_csi_v1_PluginCapability_Service | null);
  'volume_expansion'?: (_csi_v1_PluginCapability_VolumeExpansion | null);
  'type'?: "service"|"volume_expansion";
}

/**
 * One plugin-wide capability.
 */
export interface PluginCapability__Output {
  'service'?: (_csi_v1_PluginCapability_Service__Output | null);
  'volume_expansion'?: (_csi_v1_PluginCapability_VolumeExpansion__Output | null);
  'type'?: "service"|"volume_expansion";
}
