// Original file: proto/csi.proto

import type { VolumeContentSource as _csi_v1_VolumeContentSource, VolumeContentSource__Output as _csi_v1_VolumeContentSource__Output } from '../../csi/v1/VolumeContentSource.js';
import type { Topology as _csi_v1_Topology, Topology__Output as _csi_v1_Topology__Output } from '../../csi/v1/Topology.js';
import type { Long } from '../../long.js';

/**
 * A provisioned volume.
 */
export interface Volume {
  /**
   * Size in bytes; 0 means unknown.
   */
  'capacity_bytes'?: (number | string | Long);
  /**
   * Plugin-assigned volume ID.
   */
  'volume_id'?: (string);
  /**
   * Static opaque attributes echoed back by the CO in later calls.
   */
  'volume_context'?: ({[key: string]: string});
  /**
   * Where the volume's initial data came from, if anywhere.
   */
  'content_source'?: (_csi_v1_VolumeContentSource | null);
  /**
   * Topology segments the volume is reachable from.
   */
  'accessible_topology'?: (_csi_v1_Topology)[];
}

/**
 * A provisioned volume.
 */
export interface Volume__Output {
  /**
   * Size in bytes; 0 means unknown.
   */
  'capacity_bytes': (string);
  /**
   * Plugin-assigned volume ID.
   */
  'volume_id': (string);
  /**
   * Static opaque attributes echoed back by the CO in later calls.
   */
  'volume_context': ({[key: string]: string});
  /**
   * Where the volume's initial data came from, if anywhere.
   */
  'content_source': (_csi_v1_VolumeContentSource__Output | null);
  /**
   * Topology segments the volume is reachable from.
   */
  'accessible_topology': (_csi_v1_Topology__Output)[];
}
