// Original file: proto/registry.proto

import type { Long } from '../../../long.js';

export interface RegisterControllerReply {
  /**
   * Identifies this registration; renewals must quote it.
   */
  'registration_id'?: (string);
  /**
   * How long the registration lives without renewal (the node renews at a third of it).
   */
  'lease_seconds'?: (number | string | Long);
}

export interface RegisterControllerReply__Output {
  /**
   * Identifies this registration; renewals must quote it.
   */
  'registration_id': (string);
  /**
   * How long the registration lives without renewal (the node renews at a third of it).
   */
  'lease_seconds': (string);
}
