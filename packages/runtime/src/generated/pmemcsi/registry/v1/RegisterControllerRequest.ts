// Original file: proto/registry.proto

import type { Capacity as _pmemcsi_registry_v1_Capacity, Capacity__Output as _pmemcsi_registry_v1_Capacity__Output } from '../../../pmemcsi/registry/v1/Capacity.js';

export interface RegisterControllerRequest {
  /**
   * The node id, as reported by NodeGetInfo (the Kubernetes node name).
   */
  'node_id'?: (string);
  /**
   * host:port of the node's node-controller service (mutual TLS).
   */
  'endpoint'?: (string);
  /**
   * Capacity at registration time.
   */
  'capacity'?: (_pmemcsi_registry_v1_Capacity | null);
  /**
   * The node's device mode (lvm, direct, emulated, fake), for status and diagnostics.
   */
  'device_mode'?: (string);
  /**
   * The driver version of the node, for diagnostics during upgrades.
   */
  'version'?: (string);
}

export interface RegisterControllerRequest__Output {
  /**
   * The node id, as reported by NodeGetInfo (the Kubernetes node name).
   */
  'node_id': (string);
  /**
   * host:port of the node's node-controller service (mutual TLS).
   */
  'endpoint': (string);
  /**
   * Capacity at registration time.
   */
  'capacity': (_pmemcsi_registry_v1_Capacity__Output | null);
  /**
   * The node's device mode (lvm, direct, emulated, fake), for status and diagnostics.
   */
  'device_mode': (string);
  /**
   * The driver version of the node, for diagnostics during upgrades.
   */
  'version': (string);
}
