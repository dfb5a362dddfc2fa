// Original file: proto/csi.proto

import type { ControllerServiceCapability as _csi_v1_ControllerServiceCapability, ControllerServiceCapability__Output as _csi_v1_ControllerServiceCapability__Output } from '../../csi/v1/ControllerServiceCapability.js';

export interface ControllerGetCapabilitiesResponse {
  /**
   * Optional controller RPCs / features that are supported.
   */
  'capabilities'?: (_csi_v1_ControllerServiceCapability)[];
}

export interface ControllerGetCapabilitiesResponse__Output {
  /**
   * Optional controller RPCs / features that are supported.
   */
  'capabilities': (_csi_v1_ControllerServiceCapability__Output)[];
}
