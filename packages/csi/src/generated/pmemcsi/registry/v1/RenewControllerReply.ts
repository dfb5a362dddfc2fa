// Original file: proto/registry.proto

import type { Long } from '../../../long.js';

export interface RenewControllerReply {
  /**
   * The lease granted by this renewal; it may differ from the last one (it grows with the cluster).
   */
  'lease_seconds'?: (number | string | Long);
}

export interface RenewControllerReply__Output {
  /**
   * The lease granted by this renewal; it may differ from the last one (it grows with the cluster).
   */
  'lease_seconds': (string);
}
