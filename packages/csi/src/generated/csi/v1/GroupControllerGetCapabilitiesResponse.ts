// Original file: proto/csi.proto

import type { GroupControllerServiceCapability as _csi_v1_GroupControllerServiceCapability, GroupControllerServiceCapability__Output as _csi_v1_GroupControllerServiceCapability__Output } from '../../csi/v1/GroupControllerServiceCapability.js';

export interface GroupControllerGetCapabilitiesResponse {
  /**
   * Optional group-controller RPCs that are supported.
   */
  'capabilities'?: (_csi_v1_GroupControllerServiceCapability)[];
}

export interface GroupControllerGetCapabilitiesResponse__Output {
  /**
   * Optional group-controller RPCs that are supported.
   */
  'capabilities': (_csi_v1_GroupControllerServiceCapability__Output)[];
}
