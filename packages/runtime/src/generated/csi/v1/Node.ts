// Original file: proto/csi.proto

import type { csi } from '@pmem-csi/csi';
import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
type _csi_v1_NodeExpandVolumeRequest = csi.NodeExpandVolumeRequest;
type _csi_v1_NodeExpandVolumeRequest__Output = csi.NodeExpandVolumeRequest__Output;
type _csi_v1_NodeExpandVolumeResponse = csi.NodeExpandVolumeResponse;
type _csi_v1_NodeExpandVolumeResponse__Output = csi.NodeExpandVolumeResponse__Output;
type _csi_v1_NodeGetCapabilitiesRequest = csi.NodeGetCapabilitiesRequest;
type _csi_v1_NodeGetCapabilitiesRequest__Output = csi.NodeGetCapabilitiesRequest__Output;
type _csi_v1_NodeGetCapabilitiesResponse = csi.NodeGetCapabilitiesResponse;
type _csi_v1_NodeGetCapabilitiesResponse__Output = csi.NodeGetCapabilitiesResponse__Output;
type _csi_v1_NodeGetInfoRequest = csi.NodeGetInfoRequest;
type _csi_v1_NodeGetInfoRequest__Output = csi.NodeGetInfoRequest__Output;
type _csi_v1_NodeGetInfoResponse = csi.NodeGetInfoResponse;
type _csi_v1_NodeGetInfoResponse__Output = csi.NodeGetInfoResponse__Output;
type _csi_v1_NodeGetVolumeStatsRequest = csi.NodeGetVolumeStatsRequest;
type _csi_v1_NodeGetVolumeStatsRequest__Output = csi.NodeGetVolumeStatsRequest__Output;
type _csi_v1_NodeGetVolumeStatsResponse = csi.NodeGetVolumeStatsResponse;
type _csi_v1_NodeGetVolumeStatsResponse__Output = csi.NodeGetVolumeStatsResponse__Output;
type _csi_v1_NodePublishVolumeRequest = csi.NodePublishVolumeRequest;
type _csi_v1_NodePublishVolumeRequest__Output = csi.NodePublishVolumeRequest__Output;
type _csi_v1_NodePublishVolumeResponse = csi.NodePublishVolumeResponse;
type _csi_v1_NodePublishVolumeResponse__Output = csi.NodePublishVolumeResponse__Output;
type _csi_v1_NodeStageVolumeRequest = csi.NodeStageVolumeRequest;
type _csi_v1_NodeStageVolumeRequest__Output = csi.NodeStageVolumeRequest__Output;
type _csi_v1_NodeStageVolumeResponse = csi.NodeStageVolumeResponse;
type _csi_v1_NodeStageVolumeResponse__Output = csi.NodeStageVolumeResponse__Output;
type _csi_v1_NodeUnpublishVolumeRequest = csi.NodeUnpublishVolumeRequest;
type _csi_v1_NodeUnpublishVolumeRequest__Output = csi.NodeUnpublishVolumeRequest__Output;
type _csi_v1_NodeUnpublishVolumeResponse = csi.NodeUnpublishVolumeResponse;
type _csi_v1_NodeUnpublishVolumeResponse__Output = csi.NodeUnpublishVolumeResponse__Output;
type _csi_v1_NodeUnstageVolumeRequest = csi.NodeUnstageVolumeRequest;
type _csi_v1_NodeUnstageVolumeRequest__Output = csi.NodeUnstageVolumeRequest__Output;
type _csi_v1_NodeUnstageVolumeResponse = csi.NodeUnstageVolumeResponse;
type _csi_v1_NodeUnstageVolumeResponse__Output = csi.NodeUnstageVolumeResponse__Output;

/**
 * Per-node staging, publishing and stats of volumes.
 */
export interface NodeClient extends grpc.Client {
  NodeExpandVolume(argument: _csi_v1_NodeExpandVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeExpandVolume(argument: _csi_v1_NodeExpandVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeExpandVolume(argument: _csi_v1_NodeExpandVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeExpandVolume(argument: _csi_v1_NodeExpandVolumeRequest, callback: grpc.requestCallback<_csi_v1_NodeExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeExpandVolume(argument: _csi_v1_NodeExpandVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeExpandVolume(argument: _csi_v1_NodeExpandVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeExpandVolume(argument: _csi_v1_NodeExpandVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeExpandVolume(argument: _csi_v1_NodeExpandVolumeRequest, callback: grpc.requestCallback<_csi_v1_NodeExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  NodeGetCapabilities(argument: _csi_v1_NodeGetCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  NodeGetCapabilities(argument: _csi_v1_NodeGetCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  NodeGetCapabilities(argument: _csi_v1_NodeGetCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  NodeGetCapabilities(argument: _csi_v1_NodeGetCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_NodeGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  nodeGetCapabilities(argument: _csi_v1_NodeGetCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  nodeGetCapabilities(argument: _csi_v1_NodeGetCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  nodeGetCapabilities(argument: _csi_v1_NodeGetCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  nodeGetCapabilities(argument: _csi_v1_NodeGetCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_NodeGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  
  NodeGetInfo(argument: _csi_v1_NodeGetInfoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetInfoResponse__Output>): grpc.ClientUnaryCall;
  NodeGetInfo(argument: _csi_v1_NodeGetInfoRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeGetInfoResponse__Output>): grpc.ClientUnaryCall;
  NodeGetInfo(argument: _csi_v1_NodeGetInfoRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetInfoResponse__Output>): grpc.ClientUnaryCall;
  NodeGetInfo(argument: _csi_v1_NodeGetInfoRequest, callback: grpc.requestCallback<_csi_v1_NodeGetInfoResponse__Output>): grpc.ClientUnaryCall;
  nodeGetInfo(argument: _csi_v1_NodeGetInfoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetInfoResponse__Output>): grpc.ClientUnaryCall;
  nodeGetInfo(argument: _csi_v1_NodeGetInfoRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeGetInfoResponse__Output>): grpc.ClientUnaryCall;
  nodeGetInfo(argument: _csi_v1_NodeGetInfoRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetInfoResponse__Output>): grpc.ClientUnaryCall;
  nodeGetInfo(argument: _csi_v1_NodeGetInfoRequest, callback: grpc.requestCallback<_csi_v1_NodeGetInfoResponse__Output>): grpc.ClientUnaryCall;
  
  NodeGetVolumeStats(argument: _csi_v1_NodeGetVolumeStatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetVolumeStatsResponse__Output>): grpc.ClientUnaryCall;
  NodeGetVolumeStats(argument: _csi_v1_NodeGetVolumeStatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeGetVolumeStatsResponse__Output>): grpc.ClientUnaryCall;
  NodeGetVolumeStats(argument: _csi_v1_NodeGetVolumeStatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetVolumeStatsResponse__Output>): grpc.ClientUnaryCall;
  NodeGetVolumeStats(argument: _csi_v1_NodeGetVolumeStatsRequest, callback: grpc.requestCallback<_csi_v1_NodeGetVolumeStatsResponse__Output>): grpc.ClientUnaryCall;
  nodeGetVolumeStats(argument: _csi_v1_NodeGetVolumeStatsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetVolumeStatsResponse__Output>): grpc.ClientUnaryCall;
  nodeGetVolumeStats(argument: _csi_v1_NodeGetVolumeStatsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeGetVolumeStatsResponse__Output>): grpc.ClientUnaryCall;
  nodeGetVolumeStats(argument: _csi_v1_NodeGetVolumeStatsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeGetVolumeStatsResponse__Output>): grpc.ClientUnaryCall;
  nodeGetVolumeStats(argument: _csi_v1_NodeGetVolumeStatsRequest, callback: grpc.requestCallback<_csi_v1_NodeGetVolumeStatsResponse__Output>): grpc.ClientUnaryCall;
  
  NodePublishVolume(argument: _csi_v1_NodePublishVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodePublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodePublishVolume(argument: _csi_v1_NodePublishVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodePublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodePublishVolume(argument: _csi_v1_NodePublishVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodePublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodePublishVolume(argument: _csi_v1_NodePublishVolumeRequest, callback: grpc.requestCallback<_csi_v1_NodePublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodePublishVolume(argument: _csi_v1_NodePublishVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodePublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodePublishVolume(argument: _csi_v1_NodePublishVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodePublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodePublishVolume(argument: _csi_v1_NodePublishVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodePublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodePublishVolume(argument: _csi_v1_NodePublishVolumeRequest, callback: grpc.requestCallback<_csi_v1_NodePublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  NodeStageVolume(argument: _csi_v1_NodeStageVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeStageVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeStageVolume(argument: _csi_v1_NodeStageVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeStageVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeStageVolume(argument: _csi_v1_NodeStageVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeStageVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeStageVolume(argument: _csi_v1_NodeStageVolumeRequest, callback: grpc.requestCallback<_csi_v1_NodeStageVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeStageVolume(argument: _csi_v1_NodeStageVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeStageVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeStageVolume(argument: _csi_v1_NodeStageVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeStageVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeStageVolume(argument: _csi_v1_NodeStageVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeStageVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeStageVolume(argument: _csi_v1_NodeStageVolumeRequest, callback: grpc.requestCallback<_csi_v1_NodeStageVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  NodeUnpublishVolume(argument: _csi_v1_NodeUnpublishVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeUnpublishVolume(argument: _csi_v1_NodeUnpublishVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeUnpublishVolume(argument: _csi_v1_NodeUnpublishVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeUnpublishVolume(argument: _csi_v1_NodeUnpublishVolumeRequest, callback: grpc.requestCallback<_csi_v1_NodeUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeUnpublishVolume(argument: _csi_v1_NodeUnpublishVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeUnpublishVolume(argument: _csi_v1_NodeUnpublishVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeUnpublishVolume(argument: _csi_v1_NodeUnpublishVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeUnpublishVolume(argument: _csi_v1_NodeUnpublishVolumeRequest, callback: grpc.requestCallback<_csi_v1_NodeUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  NodeUnstageVolume(argument: _csi_v1_NodeUnstageVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeUnstageVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeUnstageVolume(argument: _csi_v1_NodeUnstageVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeUnstageVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeUnstageVolume(argument: _csi_v1_NodeUnstageVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeUnstageVolumeResponse__Output>): grpc.ClientUnaryCall;
  NodeUnstageVolume(argument: _csi_v1_NodeUnstageVolumeRequest, callback: grpc.requestCallback<_csi_v1_NodeUnstageVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeUnstageVolume(argument: _csi_v1_NodeUnstageVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeUnstageVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeUnstageVolume(argument: _csi_v1_NodeUnstageVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_NodeUnstageVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeUnstageVolume(argument: _csi_v1_NodeUnstageVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_NodeUnstageVolumeResponse__Output>): grpc.ClientUnaryCall;
  nodeUnstageVolume(argument: _csi_v1_NodeUnstageVolumeRequest, callback: grpc.requestCallback<_csi_v1_NodeUnstageVolumeResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * Per-node staging, publishing and stats of volumes.
 */
export interface NodeHandlers extends grpc.UntypedServiceImplementation {
  NodeExpandVolume: grpc.handleUnaryCall<_csi_v1_NodeExpandVolumeRequest__Output, _csi_v1_NodeExpandVolumeResponse>;
  
  NodeGetCapabilities: grpc.handleUnaryCall<_csi_v1_NodeGetCapabilitiesRequest__Output, _csi_v1_NodeGetCapabilitiesResponse>;
  
  NodeGetInfo: grpc.handleUnaryCall<_csi_v1_NodeGetInfoRequest__Output, _csi_v1_NodeGetInfoResponse>;
  
  NodeGetVolumeStats: grpc.handleUnaryCall<_csi_v1_NodeGetVolumeStatsRequest__Output, _csi_v1_NodeGetVolumeStatsResponse>;
  
  NodePublishVolume: grpc.handleUnaryCall<_csi_v1_NodePublishVolumeRequest__Output, _csi_v1_NodePublishVolumeResponse>;
  
  NodeStageVolume: grpc.handleUnaryCall<_csi_v1_NodeStageVolumeRequest__Output, _csi_v1_NodeStageVolumeResponse>;
  
  NodeUnpublishVolume: grpc.handleUnaryCall<_csi_v1_NodeUnpublishVolumeRequest__Output, _csi_v1_NodeUnpublishVolumeResponse>;
  
  NodeUnstageVolume: grpc.handleUnaryCall<_csi_v1_NodeUnstageVolumeRequest__Output, _csi_v1_NodeUnstageVolumeResponse>;
  
}

export interface NodeDefinition extends grpc.ServiceDefinition {
  NodeExpandVolume: MethodDefinition<_csi_v1_NodeExpandVolumeRequest, _csi_v1_NodeExpandVolumeResponse, _csi_v1_NodeExpandVolumeRequest__Output, _csi_v1_NodeExpandVolumeResponse__Output>
  NodeGetCapabilities: MethodDefinition<_csi_v1_NodeGetCapabilitiesRequest, _csi_v1_NodeGetCapabilitiesResponse, _csi_v1_NodeGetCapabilitiesRequest__Output, _csi_v1_NodeGetCapabilitiesResponse__Output>
  NodeGetInfo: MethodDefinition<_csi_v1_NodeGetInfoRequest, _csi_v1_NodeGetInfoResponse, _csi_v1_NodeGetInfoRequest__Output, _csi_v1_NodeGetInfoResponse__Output>
  NodeGetVolumeStats: MethodDefinition<_csi_v1_NodeGetVolumeStatsRequest, _csi_v1_NodeGetVolumeStatsResponse, _csi_v1_NodeGetVolumeStatsRequest__Output, _csi_v1_NodeGetVolumeStatsResponse__Output>
  NodePublishVolume: MethodDefinition<_csi_v1_NodePublishVolumeRequest, _csi_v1_NodePublishVolumeResponse, _csi_v1_NodePublishVolumeRequest__Output, _csi_v1_NodePublishVolumeResponse__Output>
  NodeStageVolume: MethodDefinition<_csi_v1_NodeStageVolumeRequest, _csi_v1_NodeStageVolumeResponse, _csi_v1_NodeStageVolumeRequest__Output, _csi_v1_NodeStageVolumeResponse__Output>
  NodeUnpublishVolume: MethodDefinition<_csi_v1_NodeUnpublishVolumeRequest, _csi_v1_NodeUnpublishVolumeResponse, _csi_v1_NodeUnpublishVolumeRequest__Output, _csi_v1_NodeUnpublishVolumeResponse__Output>
  NodeUnstageVolume: MethodDefinition<_csi_v1_NodeUnstageVolumeRequest, _csi_v1_NodeUnstageVolumeResponse, _csi_v1_NodeUnstageVolumeRequest__Output, _csi_v1_NodeUnstageVolumeResponse__Output>
}
