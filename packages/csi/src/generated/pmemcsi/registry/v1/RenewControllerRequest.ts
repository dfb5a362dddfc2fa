// Original file: proto/registry.proto

import type { Capacity as _pmemcsi_registry_v1_Capacity, Capacity__Output as _pmemcsi_registry_v1_Capacity__Output } from '../../../pmemcsi/registry/v1/Capacity.js';
import type { VolumeInventory as _pmemcsi_registry_v1_VolumeInventory, VolumeInventory__Output as _pmemcsi_registry_v1_VolumeInventory__Output } from '../../../pmemcsi/registry/v1/VolumeInventory.js';

export interface RenewControllerRequest {
  'node_id'?: (string);
  'registration_id'?: (string);
  /**
   * Current capacity; the controller places volumes by it.
   */
  'capacity'?: (_pmemcsi_registry_v1_Capacity | null);
  /**
   * The node's volumes, sent by a renewal that the node makes early, right after it created or
   * deleted a volume (absent on the periodic renewals). A node registers with every controller
   * replica; this is how a volume made through one replica becomes known to the others within
   * moments, so that a replica that takes over never places the same name on a second node.
   * Used like RegisterControllerRequest.inventory, except that the node stays available: a
   * controller that changed the node's volumes itself (its own create or delete may be missing
   * from it) and finds it different from what it knows lists the volumes instead. Older
   * controllers ignore the field.
   */
  'inventory'?: (_pmemcsi_registry_v1_VolumeInventory | null);
}

export interface RenewControllerRequest__Output {
  'node_id': (string);
  'registration_id': (string);
  /**
   * Current capacity; the controller places volumes by it.
   */
  'capacity': (_pmemcsi_registry_v1_Capacity__Output | null);
  /**
   * The node's volumes, sent by a renewal that the node makes early, right after it created or
   * deleted a volume (absent on the periodic renewals). A node registers with every controller
   * replica; this is how a volume made through one replica becomes known to the others within
   * moments, so that a replica that takes over never places the same name on a second node.
   * Used like RegisterControllerRequest.inventory, except that the node stays available: a
   * controller that changed the node's volumes itself (its own create or delete may be missing
   * from it) and finds it different from what it knows lists the volumes instead. Older
   * controllers ignore the field.
   */
  'inventory': (_pmemcsi_registry_v1_VolumeInventory__Output | null);
}
