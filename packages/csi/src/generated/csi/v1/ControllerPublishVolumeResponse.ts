// Original file: proto/csi.proto


export interface ControllerPublishVolumeResponse {
  /**
   * Opaque data passed on to NodeStage/NodePublish.
   */
  'publish_context'?: ({[key: string]: string});
}

export interface ControllerPublishVolumeResponse__Output {
  /**
   * Opaque data passed on to NodeStage/NodePublish.
   */
  'publish_context': ({[key: string]: string});
}
