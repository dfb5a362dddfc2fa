// Original file: proto/csi.proto

import type { Topology as _csi_v1_Topology, Topology__Output as _csi_v1_Topology__Output } from '../../csi/v1/Topology.js';
import type { Long } from '../../long.js';

export interface NodeGetInfoResponse {
  /**
   * Node ID used in ControllerPublish/Unpublish.
   */
  'node_id'?: (string);
  /**
   * Max volumes publishable on this node; 0 means no limit.
   */
  'max_volumes_per_node'?: (number | string | Long);
  /**
   * Topology segment of this node.
   */
  'accessible_topology'?: (_csi_v1_Topology | null);
}

export interface NodeGetInfoResponse__Output {
  /**
   * Node ID used in ControllerPublish/Unpublish.
   */
  'node_id': (string);
  /**
   * Max volumes publishable on this node; 0 means no limit.
   */
  'max_volumes_per_node': (string);
  /**
   * Topology segment of this node.
   */
  'accessible_topology': (_csi_v1_Topology__Output | null);
}
