// Original file: proto/csi.proto


export interface _csi_v1_GroupControllerServiceCapability_RPC {
  'type'?: (_csi_v1_GroupControllerServiceCapability_RPC_Type);
}

export interface _csi_v1_GroupControllerServiceCapability_RPC__Output {
  'type': (_csi_v1_GroupControllerServiceCapability_RPC_Type__Output);
}

// Original file: proto/csi.proto

export const _csi_v1_GroupControllerServiceCapability_RPC_Type = {
  UNKNOWN: 'UNKNOWN',
  /**
   * Create/Delete/GetVolumeGroupSnapshot.
   */
  CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT: 'CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT',
} as const;

export type _csi_v1_GroupControllerServiceCapability_RPC_Type =
  | 'UNKNOWN'
  | 0
  /**
   * Create/Delete/GetVolumeGroupSnapshot.
   */
  | 'CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT'
  | 1

export type _csi_v1_GroupControllerServiceCapability_RPC_Type__Output = typeof _csi_v1_GroupControllerServiceCapability_RPC_Type[keyof typeof _csi_v1_GroupControllerServiceCapability_RPC_Type]

/**
 * One group-controller capability.
 */
export interface GroupControllerServiceCapability {
  'rpc'?: (_csi_v1_GroupControllerServiceCapability_RPC | null);
  'type'?: "rpc";
}

/**
 * One group-controller capability.
 */
export interface GroupControllerServiceCapability__Output {
  'rpc'?: (_csi_v1_GroupControllerServiceCapability_RPC__Output | null);
  'type'?: "rpc";
}
