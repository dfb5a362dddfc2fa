// Original file: proto/registry.proto

import type { Long } from '../../../long.js';

/**
 * One volume of a node: the fields of csi.v1.Volume that the controller keeps.
 */
export interface InventoryVolume {
  'volume_id'?: (string);
  'capacity_bytes'?: (number | string | Long);
  /**
   * The volume context (includes the CreateVolume name under "name").
   */
  'volume_context'?: ({[key: string]: string});
}

/**
 * One volume of a node: the fields of csi.v1.Volume that the controller keeps.
 */
export interface InventoryVolume__Output {
  'volume_id': (string);
  'capacity_bytes': (string);
  /**
   * The volume context (includes the CreateVolume name under "name").
   */
  'volume_context': ({[key: string]: string});
}
