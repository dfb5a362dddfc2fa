// Original file: proto/csi.proto

import type { csi } from '@pmem-csi/csi';
import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
type _csi_v1_GetMetadataAllocatedRequest = csi.GetMetadataAllocatedRequest;
type _csi_v1_GetMetadataAllocatedRequest__Output = csi.GetMetadataAllocatedRequest__Output;
type _csi_v1_GetMetadataAllocatedResponse = csi.GetMetadataAllocatedResponse;
type _csi_v1_GetMetadataAllocatedResponse__Output = csi.GetMetadataAllocatedResponse__Output;
type _csi_v1_GetMetadataDeltaRequest = csi.GetMetadataDeltaRequest;
type _csi_v1_GetMetadataDeltaRequest__Output = csi.GetMetadataDeltaRequest__Output;
type _csi_v1_GetMetadataDeltaResponse = csi.GetMetadataDeltaResponse;
type _csi_v1_GetMetadataDeltaResponse__Output = csi.GetMetadataDeltaResponse__Output;

/**
 * Block-level metadata of snapshots (allocated / changed ranges); streaming.
 */
export interface SnapshotMetadataClient extends grpc.Client {
  GetMetadataAllocated(argument: _csi_v1_GetMetadataAllocatedRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_csi_v1_GetMetadataAllocatedResponse__Output>;
  GetMetadataAllocated(argument: _csi_v1_GetMetadataAllocatedRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_csi_v1_GetMetadataAllocatedResponse__Output>;
  getMetadataAllocated(argument: _csi_v1_GetMetadataAllocatedRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_csi_v1_GetMetadataAllocatedResponse__Output>;
  getMetadataAllocated(argument: _csi_v1_GetMetadataAllocatedRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_csi_v1_GetMetadataAllocatedResponse__Output>;
  
  GetMetadataDelta(argument: _csi_v1_GetMetadataDeltaRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_csi_v1_GetMetadataDeltaResponse__Output>;
  GetMetadataDelta(argument: _csi_v1_GetMetadataDeltaRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_csi_v1_GetMetadataDeltaResponse__Output>;
  getMetadataDelta(argument: _csi_v1_GetMetadataDeltaRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_csi_v1_GetMetadataDeltaResponse__Output>;
  getMetadataDelta(argument: _csi_v1_GetMetadataDeltaRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_csi_v1_GetMetadataDeltaResponse__Output>;
  
}

/**
 * Block-level metadata of snapshots (allocated / changed ranges); streaming.
 */
export interface SnapshotMetadataHandlers extends grpc.UntypedServiceImplementation {
  GetMetadataAllocated: grpc.handleServerStreamingCall<_csi_v1_GetMetadataAllocatedRequest__Output, _csi_v1_GetMetadataAllocatedResponse>;
  
  GetMetadataDelta: grpc.handleServerStreamingCall<_csi_v1_GetMetadataDeltaRequest__Output, _csi_v1_GetMetadataDeltaResponse>;
  
}

export interface SnapshotMetadataDefinition extends grpc.ServiceDefinition {
  GetMetadataAllocated: MethodDefinition<_csi_v1_GetMetadataAllocatedRequest, _csi_v1_GetMetadataAllocatedResponse, _csi_v1_GetMetadataAllocatedRequest__Output, _csi_v1_GetMetadataAllocatedResponse__Output>
  GetMetadataDelta: MethodDefinition<_csi_v1_GetMetadataDeltaRequest, _csi_v1_GetMetadataDeltaResponse, _csi_v1_GetMetadataDeltaRequest__Output, _csi_v1_GetMetadataDeltaResponse__Output>
}
