// Original file: proto/registry.proto


export interface UnregisterControllerRequest {
  'node_id'?: (string);
  'registration_id'?: (string);
}

export interface UnregisterControllerRequest__Output {
  'node_id': (string);
  'registration_id': (string);
}
