// Original file: proto/registry.proto


export interface UnregisterControllerReply {
}

export interface UnregisterControllerReply__Output {
}
