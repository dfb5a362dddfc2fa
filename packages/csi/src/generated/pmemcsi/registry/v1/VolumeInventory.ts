// Original file: proto/registry.proto

import type { InventoryVolume as _pmemcsi_registry_v1_InventoryVolume, InventoryVolume__Output as _pmemcsi_registry_v1_InventoryVolume__Output } from '../../../pmemcsi/registry/v1/InventoryVolume.js';
import type { Long } from '../../../long.js';

/**
 * The volumes of a node (see RegisterControllerRequest.inventory).
 */
export interface VolumeInventory {
  /**
   * How many volumes the node holds.
   */
  'count'?: (number | string | Long);
  /**
   * Every one of them, or none when the node holds too many to send (the controller then lists).
   */
  'volumes'?: (_pmemcsi_registry_v1_InventoryVolume)[];
}

/**
 * The volumes of a node (see RegisterControllerRequest.inventory).
 */
export interface VolumeInventory__Output {
  /**
   * How many volumes the node holds.
   */
  'count': (string);
  /**
   * Every one of them, or none when the node holds too many to send (the controller then lists).
   */
  'volumes': (_pmemcsi_registry_v1_InventoryVolume__Output)[];
}
