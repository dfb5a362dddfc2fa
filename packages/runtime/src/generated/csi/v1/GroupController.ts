// Original file: proto/csi.proto

import type { csi } from '@pmem-csi/csi';
import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
type _csi_v1_CreateVolumeGroupSnapshotRequest = csi.CreateVolumeGroupSnapshotRequest;
type _csi_v1_CreateVolumeGroupSnapshotRequest__Output = csi.CreateVolumeGroupSnapshotRequest__Output;
type _csi_v1_CreateVolumeGroupSnapshotResponse = csi.CreateVolumeGroupSnapshotResponse;
type _csi_v1_CreateVolumeGroupSnapshotResponse__Output = csi.CreateVolumeGroupSnapshotResponse__Output;
type _csi_v1_DeleteVolumeGroupSnapshotRequest = csi.DeleteVolumeGroupSnapshotRequest;
type _csi_v1_DeleteVolumeGroupSnapshotRequest__Output = csi.DeleteVolumeGroupSnapshotRequest__Output;
type _csi_v1_DeleteVolumeGroupSnapshotResponse = csi.DeleteVolumeGroupSnapshotResponse;
type _csi_v1_DeleteVolumeGroupSnapshotResponse__Output = csi.DeleteVolumeGroupSnapshotResponse__Output;
type _csi_v1_GetVolumeGroupSnapshotRequest = csi.GetVolumeGroupSnapshotRequest;
type _csi_v1_GetVolumeGroupSnapshotRequest__Output = csi.GetVolumeGroupSnapshotRequest__Output;
type _csi_v1_GetVolumeGroupSnapshotResponse = csi.GetVolumeGroupSnapshotResponse;
type _csi_v1_GetVolumeGroupSnapshotResponse__Output = csi.GetVolumeGroupSnapshotResponse__Output;
type _csi_v1_GroupControllerGetCapabilitiesRequest = csi.GroupControllerGetCapabilitiesRequest;
type _csi_v1_GroupControllerGetCapabilitiesRequest__Output = csi.GroupControllerGetCapabilitiesRequest__Output;
type _csi_v1_GroupControllerGetCapabilitiesResponse = csi.GroupControllerGetCapabilitiesResponse;
type _csi_v1_GroupControllerGetCapabilitiesResponse__Output = csi.GroupControllerGetCapabilitiesResponse__Output;

/**
 * Operations on groups of volumes (group snapshots).
 */
export interface GroupControllerClient extends grpc.Client {
  CreateVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  CreateVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  CreateVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  CreateVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createVolumeGroupSnapshot(argument: _csi_v1_CreateVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_CreateVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  DeleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteVolumeGroupSnapshot(argument: _csi_v1_DeleteVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_DeleteVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  GetVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  GetVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  GetVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  GetVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getVolumeGroupSnapshot(argument: _csi_v1_GetVolumeGroupSnapshotRequest, callback: grpc.requestCallback<_csi_v1_GetVolumeGroupSnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  GroupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GroupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GroupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  GroupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  groupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  groupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  groupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  groupControllerGetCapabilities(argument: _csi_v1_GroupControllerGetCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_GroupControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * Operations on groups of volumes (group snapshots).
 */
export interface GroupControllerHandlers extends grpc.UntypedServiceImplementation {
  CreateVolumeGroupSnapshot: grpc.handleUnaryCall<_csi_v1_CreateVolumeGroupSnapshotRequest__Output, _csi_v1_CreateVolumeGroupSnapshotResponse>;
  
  DeleteVolumeGroupSnapshot: grpc.handleUnaryCall<_csi_v1_DeleteVolumeGroupSnapshotRequest__Output, _csi_v1_DeleteVolumeGroupSnapshotResponse>;
  
  GetVolumeGroupSnapshot: grpc.handleUnaryCall<_csi_v1_GetVolumeGroupSnapshotRequest__Output, _csi_v1_GetVolumeGroupSnapshotResponse>;
  
  GroupControllerGetCapabilities: grpc.handleUnaryCall<_csi_v1_GroupControllerGetCapabilitiesRequest__Output, _csi_v1_GroupControllerGetCapabilitiesResponse>;
  
}

export interface GroupControllerDefinition extends grpc.ServiceDefinition {
  CreateVolumeGroupSnapshot: MethodDefinition<_csi_v1_CreateVolumeGroupSnapshotRequest, _csi_v1_CreateVolumeGroupSnapshotResponse, _csi_v1_CreateVolumeGroupSnapshotRequest__Output, _csi_v1_CreateVolumeGroupSnapshotResponse__Output>
  DeleteVolumeGroupSnapshot: MethodDefinition<_csi_v1_DeleteVolumeGroupSnapshotRequest, _csi_v1_DeleteVolumeGroupSnapshotResponse, _csi_v1_DeleteVolumeGroupSnapshotRequest__Output, _csi_v1_DeleteVolumeGroupSnapshotResponse__Output>
  GetVolumeGroupSnapshot: MethodDefinition<_csi_v1_GetVolumeGroupSnapshotRequest, _csi_v1_GetVolumeGroupSnapshotResponse, _csi_v1_GetVolumeGroupSnapshotRequest__Output, _csi_v1_GetVolumeGroupSnapshotResponse__Output>
  GroupControllerGetCapabilities: MethodDefinition<_csi_v1_GroupControllerGetCapabilitiesRequest, _csi_v1_GroupControllerGetCapabilitiesResponse, _csi_v1_GroupControllerGetCapabilitiesRequest__Output, _csi_v1_GroupControllerGetCapabilitiesResponse__Output>
}
