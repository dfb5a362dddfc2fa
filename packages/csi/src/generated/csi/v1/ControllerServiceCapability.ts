// Original file: proto/csi.proto


export interface _csi_v1_ControllerServiceCapability_RPC {
  'type'?: (_csi_v1_ControllerServiceCapability_RPC_Type);
}

export interface _csi_v1_ControllerServiceCapability_RPC__Output {
  'type': (_csi_v1_ControllerServiceCapability_RPC_Type__Output);
}

// Original file: proto/csi.proto

export const _csi_v1_ControllerServiceCapability_RPC_Type = {
  UNKNOWN: 'UNKNOWN',
  CREATE_DELETE_VOLUME: 'CREATE_DELETE_VOLUME',
  PUBLISH_UNPUBLISH_VOLUME: 'PUBLISH_UNPUBLISH_VOLUME',
  LIST_VOLUMES: 'LIST_VOLUMES',
  GET_CAPACITY: 'GET_CAPACITY',
  /**
   * CreateSnapshot / DeleteSnapshot (and restore from snapshot).
   */
  CREATE_DELETE_SNAPSHOT: 'CREATE_DELETE_SNAPSHOT',
  LIST_SNAPSHOTS: 'LIST_SNAPSHOTS',
  /**
   * Create a volume from another volume.
   */
  CLONE_VOLUME: 'CLONE_VOLUME',
  /**
   * ControllerPublishVolume honours readonly.
   */
  PUBLISH_READONLY: 'PUBLISH_READONLY',
  /**
   * ControllerExpandVolume.
   */
  EXPAND_VOLUME: 'EXPAND_VOLUME',
  /**
   * ListVolumes / ControllerGetVolume report published_node_ids.
   */
  LIST_VOLUMES_PUBLISHED_NODES: 'LIST_VOLUMES_PUBLISHED_NODES',
  /**
   * Volume conditions are reported by the controller.
   */
  VOLUME_CONDITION: 'VOLUME_CONDITION',
  /**
   * ControllerGetVolume.
   */
  GET_VOLUME: 'GET_VOLUME',
  /**
   * SINGLE_NODE_{SINGLE,MULTI}_WRITER access modes.
   */
  SINGLE_NODE_MULTI_WRITER: 'SINGLE_NODE_MULTI_WRITER',
  /**
   * ControllerModifyVolume.
   */
  MODIFY_VOLUME: 'MODIFY_VOLUME',
  /**
   * GetSnapshot.
   */
  GET_SNAPSHOT: 'GET_SNAPSHOT',
} as const;

export type _csi_v1_ControllerServiceCapability_RPC_Type =
  | 'UNKNOWN'
  | 0
  | 'CREATE_DELETE_VOLUME'
  | 1
  | 'PUBLISH_UNPUBLISH_VOLUME'
  | 2
  | 'LIST_VOLUMES'
  | 3
  | 'GET_CAPACITY'
  | 4
  /**
   * CreateSnapshot / DeleteSnapshot (and restore from snapshot).
   */
  | 'CREATE_DELETE_SNAPSHOT'
  | 5
  | 'LIST_SNAPSHOTS'
  | 6
  /**
   * Create a volume from another volume.
   */
  | 'CLONE_VOLUME'
  | 7
  /**
   * ControllerPublishVolume honours readonly.
   */
  | 'PUBLISH_READONLY'
  | 8
  /**
   * ControllerExpandVolume.
   */
  | 'EXPAND_VOLUME'
  | 9
  /**
   * ListVolumes / ControllerGetVolume report published_node_ids.
   */
  | 'LIST_VOLUMES_PUBLISHED_NODES'
  | 10
  /**
   * Volume conditions are reported by the controller.
   */
  | 'VOLUME_CONDITION'
  | 11
  /**
   * ControllerGetVolume.
   */
  | 'GET_VOLUME'
  | 12
  /**
   * SINGLE_NODE_{SINGLE,MULTI}_WRITER access modes.
   */
  | 'SINGLE_NODE_MULTI_WRITER'
  | 13
  /**
   * ControllerModifyVolume.
   */
  | 'MODIFY_VOLUME'
  | 14
  /**
   * GetSnapshot.
   */
  | 'GET_SNAPSHOT'
  | 15

export type _csi_v1_ControllerServiceCapability_RPC_Type__Output = typeof _csi_v1_ControllerServiceCapability_RPC_Type[keyof typeof _csi_v1_ControllerServiceCapability_RPC_Type]

/**
 * One controller capability.
 */
export interface ControllerServiceCapability {
  'rpc'?: (_csi_v1_ControllerServiceCapability_RPC | null);
  'type'?: "rpc";
}

/**
 * One controller capability.
 */
export interface ControllerServiceCapability__Output {
  'rpc'?: (_csi_v1_ControllerServiceCapability_RPC__Output | null);
  'type'?: "rpc";
}
