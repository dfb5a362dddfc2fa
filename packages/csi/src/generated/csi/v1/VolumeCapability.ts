// Original file: proto/csi.proto


/**
 * Access mode of the volume.
 */
export interface _csi_v1_VolumeCapability_AccessMode {
  'mode'?: (_csi_v1_VolumeCapability_AccessMode_Mode);
}

/**
 * Access mode of the volume.
 */
export interface _csi_v1_VolumeCapability_AccessMode__Output {
  'mode': (_csi_v1_VolumeCapability_AccessMode_Mode__Output);
}

/**
 * Raw block device access.
 */
export interface _csi_v1_VolumeCapability_BlockVolume {
}

/**
 * Raw block device access.
 */
export interface _csi_v1_VolumeCapability_BlockVolume__Output {
}

// Original file: proto/csi.proto

export const _csi_v1_VolumeCapability_AccessMode_Mode = {
  UNKNOWN: 'UNKNOWN',
  /**
   * Read/write, one node at a time.
   */
  SINGLE_NODE_WRITER: 'SINGLE_NODE_WRITER',
  /**
   * Read-only, one node at a time.
   */
  SINGLE_NODE_READER_ONLY: 'SINGLE_NODE_READER_ONLY',
  /**
   * Read-only on many nodes.
   */
  MULTI_NODE_READER_ONLY: 'MULTI_NODE_READER_ONLY',
  /**
   * Many nodes, at most one of them writing.
   */
  MULTI_NODE_SINGLE_WRITER: 'MULTI_NODE_SINGLE_WRITER',
  /**
   * Read/write on many nodes.
   */
  MULTI_NODE_MULTI_WRITER: 'MULTI_NODE_MULTI_WRITER',
  /**
   * Read/write by a single workload on a single node.
   */
  SINGLE_NODE_SINGLE_WRITER: 'SINGLE_NODE_SINGLE_WRITER',
  /**
   * Read/write by several workloads on a single node.
   */
  SINGLE_NODE_MULTI_WRITER: 'SINGLE_NODE_MULTI_WRITER',
} as const;

export type _csi_v1_VolumeCapability_AccessMode_Mode =
  | 'UNKNOWN'
  | 0
  /**
   * Read/write, one node at a time.
   */
  | 'SINGLE_NODE_WRITER'
  | 1
  /**
   * Read-only, one node at a time.
   */
  | 'SINGLE_NODE_READER_ONLY'
  | 2
  /**
   * Read-only on many nodes.
   */
  | 'MULTI_NODE_READER_ONLY'
  | 3
  /**
   * Many nodes, at most one of them writing.
   */
  | 'MULTI_NODE_SINGLE_WRITER'
  | 4
  /**
   * Read/write on many nodes.
   */
  | 'MULTI_NODE_MULTI_WRITER'
  | 5
  /**
   * Read/write by a single workload on a single node.
   */
  | 'SINGLE_NODE_SINGLE_WRITER'
  | 6
  /**
   * Read/write by several workloads on a single node.
   */
  | 'SINGLE_NODE_MULTI_WRITER'
  | 7

export type _csi_v1_VolumeCapability_AccessMode_Mode__Output = typeof _csi_v1_VolumeCapability_AccessMode_Mode[keyof typeof _csi_v1_VolumeCapability_AccessMode_Mode]

/**
 * Mounted filesystem access.
 */
export interface _csi_v1_VolumeCapability_MountVolume {
  /**
   * Filesystem type; empty means driver default.
   */
  'fs_type'?: (string);
  /**
   * Extra mount options; may hold sensitive data.
   */
  'mount_flags'?: (string)[];
  /**
   * Group ID that should own the mounted volume.
   */
  'volume_mount_group'?: (string);
}

/**
 * Mounted filesystem access.
 */
export interface _csi_v1_VolumeCapability_MountVolume__Output {
  /**
   * Filesystem type; empty means driver default.
   */
  'fs_type': (string);
  /**
   * Extra mount options; may hold sensitive data.
   */
  'mount_flags': (string)[];
  /**
   * Group ID that should own the mounted volume.
   */
  'volume_mount_group': (string);
}

/**
 * How a volume is going to be used.
 */
export interface VolumeCapability {
  'block'?: (_csi_v1_VolumeCapability_BlockVolume | null);
  'mount'?: (_csi_v1_VolumeCapability_MountVolume | null);
  'access_mode'?: (_csi_v1_VolumeCapability_AccessMode | null);
  /**
   * Block or mount; exactly one is set.
   */
  'access_type'?: "block"|"mount";
}

/**
 * How a volume is going to be used.
 */
export interface VolumeCapability__Output {
  'block'?: (_csi_v1_VolumeCapability_BlockVolume__Output | null);
  'mount'?: (_csi_v1_VolumeCapability_MountVolume__Output | null);
  'access_mode': (_csi_v1_VolumeCapability_AccessMode__Output | null);
  /**
   * Block or mount; exactly one is set.
   */
  'access_type'?: "block"|"mount";
}
