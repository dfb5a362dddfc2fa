// Original file: proto/csi.proto


export interface _csi_v1_NodeServiceCapability_RPC {
  'type'?: (_csi_v1_NodeServiceCapability_RPC_Type);
}

export interface _csi_v1_NodeServiceCapability_RPC__Output {
  'type': (_csi_v1_NodeServiceCapability_RPC_Type__Output);
}

// Original file: proto/csi.proto

export const _csi_v1_NodeServiceCapability_RPC_Type = {
  UNKNOWN: 'UNKNOWN',
  /**
   * NodeStageVolume / NodeUnstageVolume.
   */
  STAGE_UNSTAGE_VOLUME: 'STAGE_UNSTAGE_VOLUME',
  /**
   * NodeGetVolumeStats.
   */
  GET_VOLUME_STATS: 'GET_VOLUME_STATS',
  /**
   * NodeExpandVolume.
   */
  EXPAND_VOLUME: 'EXPAND_VOLUME',
  /**
   * Volume conditions are reported by the node.
   */
  VOLUME_CONDITION: 'VOLUME_CONDITION',
  /**
   * SINGLE_NODE_{SINGLE,MULTI}_WRITER access modes.
   */
  SINGLE_NODE_MULTI_WRITER: 'SINGLE_NODE_MULTI_WRITER',
  /**
   * MountVolume.volume_mount_group is honoured.
   */
  VOLUME_MOUNT_GROUP: 'VOLUME_MOUNT_GROUP',
} as const;

export type _csi_v1_NodeServiceCapability_RPC_Type =
  | 'UNKNOWN'
  | 0
  /**
   * NodeStageVolume / NodeUnstageVolume.
   */
  | 'STAGE_UNSTAGE_VOLUME'
  | 1
  /**
   * NodeGetVolumeStats.
   */
  | 'GET_VOLUME_STATS'
  | 2
  /**
   * NodeExpandVolume.
   */
  | 'EXPAND_VOLUME'
  | 3
  /**
   * Volume conditions are reported by the node.
   */
  | 'VOLUME_CONDITION'
  | 4
  /**
   * SINGLE_NODE_{SINGLE,MULTI}_WRITER access modes.
   */
  | 'SINGLE_NODE_MULTI_WRITER'
  | 5
  /**
   * MountVolume.volume_mount_group is honoured.
   */
  | 'VOLUME_MOUNT_GROUP'
  | 6

export type _csi_v1_NodeServiceCapability_RPC_Type__Output = typeof _csi_v1_NodeServiceCapability_RPC_Type[keyof typeof _csi_v1_NodeServiceCapability_RPC_Type]

/**
 * One node capability.
 */
export interface NodeServiceCapability {
  'rpc'?: (_csi_v1_NodeServiceCapability_RPC | null);
  'type'?: "rpc";
}

/**
 * One node capability.
 */
export interface NodeServiceCapability__Output {
  'rpc'?: (_csi_v1_NodeServiceCapability_RPC__Output | null);
  'type'?: "rpc";
}
