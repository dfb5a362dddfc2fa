// Original file: proto/registry.proto

import type { Capacity as _pmemcsi_registry_v1_Capacity, Capacity__Output as _pmemcsi_registry_v1_Capacity__Output } from '../../../pmemcsi/registry/v1/Capacity.js';

export interface RenewControllerRequest {
  'node_id'?: (string);
  'registration_id'?: (string);
  /**
   * Current capacity; the controller places volumes by it.
   */
  'capacity'?: (_pmemcsi_registry_v1_Capacity | null);
}

export interface RenewControllerRequest__Output {
  'node_id': (string);
  'registration_id': (string);
  /**
   * Current capacity; the controller places volumes by it.
   */
  'capacity': (_pmemcsi_registry_v1_Capacity__Output | null);
}
