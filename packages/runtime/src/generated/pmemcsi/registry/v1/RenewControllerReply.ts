// Original file: proto/registry.proto

import type { Long } from '@grpc/proto-loader';

export interface RenewControllerReply {
  'lease_seconds'?: (number | string | Long);
}

export interface RenewControllerReply__Output {
  'lease_seconds': (string);
}
