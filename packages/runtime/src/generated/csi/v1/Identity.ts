// Original file: proto/csi.proto

import type { csi } from '@pmem-csi/csi';
import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
type _csi_v1_GetPluginCapabilitiesRequest = csi.GetPluginCapabilitiesRequest;
type _csi_v1_GetPluginCapabilitiesRequest__Output = csi.GetPluginCapabilitiesRequest__Output;
type _csi_v1_GetPluginCapabilitiesResponse = csi.GetPluginCapabilitiesResponse;
type _csi_v1_GetPluginCapabilitiesResponse__Output = csi.GetPluginCapabilitiesResponse__Output;
type _csi_v1_GetPluginInfoRequest = csi.GetPluginInfoRequest;
type _csi_v1_GetPluginInfoRequest__Output = csi.GetPluginInfoRequest__Output;
type _csi_v1_GetPluginInfoResponse = csi.GetPluginInfoResponse;
type _csi_v1_GetPluginInfoResponse__Output = csi.GetPluginInfoResponse__Output;
type _csi_v1_ProbeRequest = csi.ProbeRequest;
type _csi_v1_ProbeRequest__Output = csi.ProbeRequest__Output;
type _csi_v1_ProbeResponse = csi.ProbeResponse;
type _csi_v1_ProbeResponse__Output = csi.ProbeResponse__Output;

/**
 * Plugin identity and readiness; served by every plugin endpoint.
 */
export interface IdentityClient extends grpc.Client {
  GetPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GetPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GetPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GetPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  getPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  getPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  getPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  getPluginCapabilities(argument: _csi_v1_GetPluginCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_GetPluginCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  
  GetPluginInfo(argument: _csi_v1_GetPluginInfoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  GetPluginInfo(argument: _csi_v1_GetPluginInfoRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  GetPluginInfo(argument: _csi_v1_GetPluginInfoRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  GetPluginInfo(argument: _csi_v1_GetPluginInfoRequest, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  getPluginInfo(argument: _csi_v1_GetPluginInfoRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  getPluginInfo(argument: _csi_v1_GetPluginInfoRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  getPluginInfo(argument: _csi_v1_GetPluginInfoRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  getPluginInfo(argument: _csi_v1_GetPluginInfoRequest, callback: grpc.requestCallback<_csi_v1_GetPluginInfoResponse__Output>): grpc.ClientUnaryCall;
  
  Probe(argument: _csi_v1_ProbeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  Probe(argument: _csi_v1_ProbeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  Probe(argument: _csi_v1_ProbeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  Probe(argument: _csi_v1_ProbeRequest, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  probe(argument: _csi_v1_ProbeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  probe(argument: _csi_v1_ProbeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  probe(argument: _csi_v1_ProbeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  probe(argument: _csi_v1_ProbeRequest, callback: grpc.requestCallback<_csi_v1_ProbeResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * Plugin identity and readiness; served by every plugin endpoint.
 */
export interface IdentityHandlers extends grpc.UntypedServiceImplementation {
  GetPluginCapabilities: grpc.handleUnaryCall<_csi_v1_GetPluginCapabilitiesRequest__Output, _csi_v1_GetPluginCapabilitiesResponse>;
  
  GetPluginInfo: grpc.handleUnaryCall<_csi_v1_GetPluginInfoRequest__Output, _csi_v1_GetPluginInfoResponse>;
  
  Probe: grpc.handleUnaryCall<_csi_v1_ProbeRequest__Output, _csi_v1_ProbeResponse>;
  
}

export interface IdentityDefinition extends grpc.ServiceDefinition {
  GetPluginCapabilities: MethodDefinition<_csi_v1_GetPluginCapabilitiesRequest, _csi_v1_GetPluginCapabilitiesResponse, _csi_v1_GetPluginCapabilitiesRequest__Output, _csi_v1_GetPluginCapabilitiesResponse__Output>
  GetPluginInfo: MethodDefinition<_csi_v1_GetPluginInfoRequest, _csi_v1_GetPluginInfoResponse, _csi_v1_GetPluginInfoRequest__Output, _csi_v1_GetPluginInfoResponse__Output>
  Probe: MethodDefinition<_csi_v1_ProbeRequest, _csi_v1_ProbeResponse, _csi_v1_ProbeRequest__Output, _csi_v1_ProbeResponse__Output>
}
