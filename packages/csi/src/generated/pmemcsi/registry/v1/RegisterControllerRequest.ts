// Original file: proto/registry.proto

import type { Capacity as _pmemcsi_registry_v1_Capacity, Capacity__Output as _pmemcsi_registry_v1_Capacity__Output } from '../../../pmemcsi/registry/v1/Capacity.js';
import type { VolumeInventory as _pmemcsi_registry_v1_VolumeInventory, VolumeInventory__Output as _pmemcsi_registry_v1_VolumeInventory__Output } from '../../../pmemcsi/registry/v1/VolumeInventory.js';

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
  /**
   * The node's volumes when it registers, as its node-controller's ListVolumes would report them.
   * Absent (older nodes): the controller lists them with ListVolumes. Present and complete (count
   * equals the number of volumes sent; count 0 = no volumes): the controller may use it instead
   * of dialling the node back, which makes a node available at once — it still lists when it may
   * have changed the node's volumes itself while the inventory was on its way.
   */
  'inventory'?: (_pmemcsi_registry_v1_VolumeInventory | null);
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
  /**
   * The node's volumes when it registers, as its node-controller's ListVolumes would report them.
   * Absent (older nodes): the controller lists them with ListVolumes. Present and complete (count
   * equals the number of volumes sent; count 0 = no volumes): the controller may use it instead
   * of dialling the node back, which makes a node available at once — it still lists when it may
   * have changed the node's volumes itself while the inventory was on its way.
   */
  'inventory': (_pmemcsi_registry_v1_VolumeInventory__Output | null);
}
