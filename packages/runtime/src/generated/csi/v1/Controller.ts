// Original file: proto/csi.proto

import type { csi } from '@pmem-csi/csi';
import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
type _csi_v1_ControllerExpandVolumeRequest = csi.ControllerExpandVolumeRequest;
type _csi_v1_ControllerExpandVolumeRequest__Output = csi.ControllerExpandVolumeRequest__Output;
type _csi_v1_ControllerExpandVolumeResponse = csi.ControllerExpandVolumeResponse;
type _csi_v1_ControllerExpandVolumeResponse__Output = csi.ControllerExpandVolumeResponse__Output;
type _csi_v1_ControllerGetCapabilitiesRequest = csi.ControllerGetCapabilitiesRequest;
type _csi_v1_ControllerGetCapabilitiesRequest__Output = csi.ControllerGetCapabilitiesRequest__Output;
type _csi_v1_ControllerGetCapabilitiesResponse = csi.ControllerGetCapabilitiesResponse;
type _csi_v1_ControllerGetCapabilitiesResponse__Output = csi.ControllerGetCapabilitiesResponse__Output;
type _csi_v1_ControllerGetVolumeRequest = csi.ControllerGetVolumeRequest;
type _csi_v1_ControllerGetVolumeRequest__Output = csi.ControllerGetVolumeRequest__Output;
type _csi_v1_ControllerGetVolumeResponse = csi.ControllerGetVolumeResponse;
type _csi_v1_ControllerGetVolumeResponse__Output = csi.ControllerGetVolumeResponse__Output;
type _csi_v1_ControllerModifyVolumeRequest = csi.ControllerModifyVolumeRequest;
type _csi_v1_ControllerModifyVolumeRequest__Output = csi.ControllerModifyVolumeRequest__Output;
type _csi_v1_ControllerModifyVolumeResponse = csi.ControllerModifyVolumeResponse;
type _csi_v1_ControllerModifyVolumeResponse__Output = csi.ControllerModifyVolumeResponse__Output;
type _csi_v1_ControllerPublishVolumeRequest = csi.ControllerPublishVolumeRequest;
type _csi_v1_ControllerPublishVolumeRequest__Output = csi.ControllerPublishVolumeRequest__Output;
type _csi_v1_ControllerPublishVolumeResponse = csi.ControllerPublishVolumeResponse;
type _csi_v1_ControllerPublishVolumeResponse__Output = csi.ControllerPublishVolumeResponse__Output;
type _csi_v1_ControllerUnpublishVolumeRequest = csi.ControllerUnpublishVolumeRequest;
type _csi_v1_ControllerUnpublishVolumeRequest__Output = csi.ControllerUnpublishVolumeRequest__Output;
type _csi_v1_ControllerUnpublishVolumeResponse = csi.ControllerUnpublishVolumeResponse;
type _csi_v1_ControllerUnpublishVolumeResponse__Output = csi.ControllerUnpublishVolumeResponse__Output;
type _csi_v1_CreateSnapshotRequest = csi.CreateSnapshotRequest;
type _csi_v1_CreateSnapshotRequest__Output = csi.CreateSnapshotRequest__Output;
type _csi_v1_CreateSnapshotResponse = csi.CreateSnapshotResponse;
type _csi_v1_CreateSnapshotResponse__Output = csi.CreateSnapshotResponse__Output;
type _csi_v1_CreateVolumeRequest = csi.CreateVolumeRequest;
type _csi_v1_CreateVolumeRequest__Output = csi.CreateVolumeRequest__Output;
type _csi_v1_CreateVolumeResponse = csi.CreateVolumeResponse;
type _csi_v1_CreateVolumeResponse__Output = csi.CreateVolumeResponse__Output;
type _csi_v1_DeleteSnapshotRequest = csi.DeleteSnapshotRequest;
type _csi_v1_DeleteSnapshotRequest__Output = csi.DeleteSnapshotRequest__Output;
type _csi_v1_DeleteSnapshotResponse = csi.DeleteSnapshotResponse;
type _csi_v1_DeleteSnapshotResponse__Output = csi.DeleteSnapshotResponse__Output;
type _csi_v1_DeleteVolumeRequest = csi.DeleteVolumeRequest;
type _csi_v1_DeleteVolumeRequest__Output = csi.DeleteVolumeRequest__Output;
type _csi_v1_DeleteVolumeResponse = csi.DeleteVolumeResponse;
type _csi_v1_DeleteVolumeResponse__Output = csi.DeleteVolumeResponse__Output;
type _csi_v1_GetCapacityRequest = csi.GetCapacityRequest;
type _csi_v1_GetCapacityRequest__Output = csi.GetCapacityRequest__Output;
type _csi_v1_GetCapacityResponse = csi.GetCapacityResponse;
type _csi_v1_GetCapacityResponse__Output = csi.GetCapacityResponse__Output;
type _csi_v1_GetSnapshotRequest = csi.GetSnapshotRequest;
type _csi_v1_GetSnapshotRequest__Output = csi.GetSnapshotRequest__Output;
type _csi_v1_GetSnapshotResponse = csi.GetSnapshotResponse;
type _csi_v1_GetSnapshotResponse__Output = csi.GetSnapshotResponse__Output;
type _csi_v1_ListSnapshotsRequest = csi.ListSnapshotsRequest;
type _csi_v1_ListSnapshotsRequest__Output = csi.ListSnapshotsRequest__Output;
type _csi_v1_ListSnapshotsResponse = csi.ListSnapshotsResponse;
type _csi_v1_ListSnapshotsResponse__Output = csi.ListSnapshotsResponse__Output;
type _csi_v1_ListVolumesRequest = csi.ListVolumesRequest;
type _csi_v1_ListVolumesRequest__Output = csi.ListVolumesRequest__Output;
type _csi_v1_ListVolumesResponse = csi.ListVolumesResponse;
type _csi_v1_ListVolumesResponse__Output = csi.ListVolumesResponse__Output;
type _csi_v1_ValidateVolumeCapabilitiesRequest = csi.ValidateVolumeCapabilitiesRequest;
type _csi_v1_ValidateVolumeCapabilitiesRequest__Output = csi.ValidateVolumeCapabilitiesRequest__Output;
type _csi_v1_ValidateVolumeCapabilitiesResponse = csi.ValidateVolumeCapabilitiesResponse;
type _csi_v1_ValidateVolumeCapabilitiesResponse__Output = csi.ValidateVolumeCapabilitiesResponse__Output;

/**
 * Cluster-level volume and snapshot management.
 */
export interface ControllerClient extends grpc.Client {
  ControllerExpandVolume(argument: _csi_v1_ControllerExpandVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerExpandVolume(argument: _csi_v1_ControllerExpandVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerExpandVolume(argument: _csi_v1_ControllerExpandVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerExpandVolume(argument: _csi_v1_ControllerExpandVolumeRequest, callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerExpandVolume(argument: _csi_v1_ControllerExpandVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerExpandVolume(argument: _csi_v1_ControllerExpandVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerExpandVolume(argument: _csi_v1_ControllerExpandVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerExpandVolume(argument: _csi_v1_ControllerExpandVolumeRequest, callback: grpc.requestCallback<_csi_v1_ControllerExpandVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  ControllerGetCapabilities(argument: _csi_v1_ControllerGetCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  ControllerGetCapabilities(argument: _csi_v1_ControllerGetCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  ControllerGetCapabilities(argument: _csi_v1_ControllerGetCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  ControllerGetCapabilities(argument: _csi_v1_ControllerGetCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  controllerGetCapabilities(argument: _csi_v1_ControllerGetCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  controllerGetCapabilities(argument: _csi_v1_ControllerGetCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  controllerGetCapabilities(argument: _csi_v1_ControllerGetCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  controllerGetCapabilities(argument: _csi_v1_ControllerGetCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_ControllerGetCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  
  ControllerGetVolume(argument: _csi_v1_ControllerGetVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerGetVolume(argument: _csi_v1_ControllerGetVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerGetVolume(argument: _csi_v1_ControllerGetVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerGetVolume(argument: _csi_v1_ControllerGetVolumeRequest, callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerGetVolume(argument: _csi_v1_ControllerGetVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerGetVolume(argument: _csi_v1_ControllerGetVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerGetVolume(argument: _csi_v1_ControllerGetVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerGetVolume(argument: _csi_v1_ControllerGetVolumeRequest, callback: grpc.requestCallback<_csi_v1_ControllerGetVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  ControllerModifyVolume(argument: _csi_v1_ControllerModifyVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerModifyVolume(argument: _csi_v1_ControllerModifyVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerModifyVolume(argument: _csi_v1_ControllerModifyVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerModifyVolume(argument: _csi_v1_ControllerModifyVolumeRequest, callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerModifyVolume(argument: _csi_v1_ControllerModifyVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerModifyVolume(argument: _csi_v1_ControllerModifyVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerModifyVolume(argument: _csi_v1_ControllerModifyVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerModifyVolume(argument: _csi_v1_ControllerModifyVolumeRequest, callback: grpc.requestCallback<_csi_v1_ControllerModifyVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  ControllerPublishVolume(argument: _csi_v1_ControllerPublishVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerPublishVolume(argument: _csi_v1_ControllerPublishVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerPublishVolume(argument: _csi_v1_ControllerPublishVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerPublishVolume(argument: _csi_v1_ControllerPublishVolumeRequest, callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerPublishVolume(argument: _csi_v1_ControllerPublishVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerPublishVolume(argument: _csi_v1_ControllerPublishVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerPublishVolume(argument: _csi_v1_ControllerPublishVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerPublishVolume(argument: _csi_v1_ControllerPublishVolumeRequest, callback: grpc.requestCallback<_csi_v1_ControllerPublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  ControllerUnpublishVolume(argument: _csi_v1_ControllerUnpublishVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerUnpublishVolume(argument: _csi_v1_ControllerUnpublishVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerUnpublishVolume(argument: _csi_v1_ControllerUnpublishVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  ControllerUnpublishVolume(argument: _csi_v1_ControllerUnpublishVolumeRequest, callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerUnpublishVolume(argument: _csi_v1_ControllerUnpublishVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerUnpublishVolume(argument: _csi_v1_ControllerUnpublishVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerUnpublishVolume(argument: _csi_v1_ControllerUnpublishVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  controllerUnpublishVolume(argument: _csi_v1_ControllerUnpublishVolumeRequest, callback: grpc.requestCallback<_csi_v1_ControllerUnpublishVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  CreateSnapshot(argument: _csi_v1_CreateSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>): grpc.ClientUnaryCall;
  CreateSnapshot(argument: _csi_v1_CreateSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>): grpc.ClientUnaryCall;
  CreateSnapshot(argument: _csi_v1_CreateSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>): grpc.ClientUnaryCall;
  CreateSnapshot(argument: _csi_v1_CreateSnapshotRequest, callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createSnapshot(argument: _csi_v1_CreateSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createSnapshot(argument: _csi_v1_CreateSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createSnapshot(argument: _csi_v1_CreateSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>): grpc.ClientUnaryCall;
  createSnapshot(argument: _csi_v1_CreateSnapshotRequest, callback: grpc.requestCallback<_csi_v1_CreateSnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  CreateVolume(argument: _csi_v1_CreateVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>): grpc.ClientUnaryCall;
  CreateVolume(argument: _csi_v1_CreateVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>): grpc.ClientUnaryCall;
  CreateVolume(argument: _csi_v1_CreateVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>): grpc.ClientUnaryCall;
  CreateVolume(argument: _csi_v1_CreateVolumeRequest, callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>): grpc.ClientUnaryCall;
  createVolume(argument: _csi_v1_CreateVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>): grpc.ClientUnaryCall;
  createVolume(argument: _csi_v1_CreateVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>): grpc.ClientUnaryCall;
  createVolume(argument: _csi_v1_CreateVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>): grpc.ClientUnaryCall;
  createVolume(argument: _csi_v1_CreateVolumeRequest, callback: grpc.requestCallback<_csi_v1_CreateVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  DeleteSnapshot(argument: _csi_v1_DeleteSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteSnapshot(argument: _csi_v1_DeleteSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteSnapshot(argument: _csi_v1_DeleteSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  DeleteSnapshot(argument: _csi_v1_DeleteSnapshotRequest, callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteSnapshot(argument: _csi_v1_DeleteSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteSnapshot(argument: _csi_v1_DeleteSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteSnapshot(argument: _csi_v1_DeleteSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  deleteSnapshot(argument: _csi_v1_DeleteSnapshotRequest, callback: grpc.requestCallback<_csi_v1_DeleteSnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  DeleteVolume(argument: _csi_v1_DeleteVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>): grpc.ClientUnaryCall;
  DeleteVolume(argument: _csi_v1_DeleteVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>): grpc.ClientUnaryCall;
  DeleteVolume(argument: _csi_v1_DeleteVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>): grpc.ClientUnaryCall;
  DeleteVolume(argument: _csi_v1_DeleteVolumeRequest, callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>): grpc.ClientUnaryCall;
  deleteVolume(argument: _csi_v1_DeleteVolumeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>): grpc.ClientUnaryCall;
  deleteVolume(argument: _csi_v1_DeleteVolumeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>): grpc.ClientUnaryCall;
  deleteVolume(argument: _csi_v1_DeleteVolumeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>): grpc.ClientUnaryCall;
  deleteVolume(argument: _csi_v1_DeleteVolumeRequest, callback: grpc.requestCallback<_csi_v1_DeleteVolumeResponse__Output>): grpc.ClientUnaryCall;
  
  GetCapacity(argument: _csi_v1_GetCapacityRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>): grpc.ClientUnaryCall;
  GetCapacity(argument: _csi_v1_GetCapacityRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>): grpc.ClientUnaryCall;
  GetCapacity(argument: _csi_v1_GetCapacityRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>): grpc.ClientUnaryCall;
  GetCapacity(argument: _csi_v1_GetCapacityRequest, callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>): grpc.ClientUnaryCall;
  getCapacity(argument: _csi_v1_GetCapacityRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>): grpc.ClientUnaryCall;
  getCapacity(argument: _csi_v1_GetCapacityRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>): grpc.ClientUnaryCall;
  getCapacity(argument: _csi_v1_GetCapacityRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>): grpc.ClientUnaryCall;
  getCapacity(argument: _csi_v1_GetCapacityRequest, callback: grpc.requestCallback<_csi_v1_GetCapacityResponse__Output>): grpc.ClientUnaryCall;
  
  GetSnapshot(argument: _csi_v1_GetSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetSnapshotResponse__Output>): grpc.ClientUnaryCall;
  GetSnapshot(argument: _csi_v1_GetSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetSnapshotResponse__Output>): grpc.ClientUnaryCall;
  GetSnapshot(argument: _csi_v1_GetSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetSnapshotResponse__Output>): grpc.ClientUnaryCall;
  GetSnapshot(argument: _csi_v1_GetSnapshotRequest, callback: grpc.requestCallback<_csi_v1_GetSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getSnapshot(argument: _csi_v1_GetSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getSnapshot(argument: _csi_v1_GetSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_GetSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getSnapshot(argument: _csi_v1_GetSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_GetSnapshotResponse__Output>): grpc.ClientUnaryCall;
  getSnapshot(argument: _csi_v1_GetSnapshotRequest, callback: grpc.requestCallback<_csi_v1_GetSnapshotResponse__Output>): grpc.ClientUnaryCall;
  
  ListSnapshots(argument: _csi_v1_ListSnapshotsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>): grpc.ClientUnaryCall;
  ListSnapshots(argument: _csi_v1_ListSnapshotsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>): grpc.ClientUnaryCall;
  ListSnapshots(argument: _csi_v1_ListSnapshotsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>): grpc.ClientUnaryCall;
  ListSnapshots(argument: _csi_v1_ListSnapshotsRequest, callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>): grpc.ClientUnaryCall;
  listSnapshots(argument: _csi_v1_ListSnapshotsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>): grpc.ClientUnaryCall;
  listSnapshots(argument: _csi_v1_ListSnapshotsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>): grpc.ClientUnaryCall;
  listSnapshots(argument: _csi_v1_ListSnapshotsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>): grpc.ClientUnaryCall;
  listSnapshots(argument: _csi_v1_ListSnapshotsRequest, callback: grpc.requestCallback<_csi_v1_ListSnapshotsResponse__Output>): grpc.ClientUnaryCall;
  
  ListVolumes(argument: _csi_v1_ListVolumesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>): grpc.ClientUnaryCall;
  ListVolumes(argument: _csi_v1_ListVolumesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>): grpc.ClientUnaryCall;
  ListVolumes(argument: _csi_v1_ListVolumesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>): grpc.ClientUnaryCall;
  ListVolumes(argument: _csi_v1_ListVolumesRequest, callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>): grpc.ClientUnaryCall;
  listVolumes(argument: _csi_v1_ListVolumesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>): grpc.ClientUnaryCall;
  listVolumes(argument: _csi_v1_ListVolumesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>): grpc.ClientUnaryCall;
  listVolumes(argument: _csi_v1_ListVolumesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>): grpc.ClientUnaryCall;
  listVolumes(argument: _csi_v1_ListVolumesRequest, callback: grpc.requestCallback<_csi_v1_ListVolumesResponse__Output>): grpc.ClientUnaryCall;
  
  ValidateVolumeCapabilities(argument: _csi_v1_ValidateVolumeCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  ValidateVolumeCapabilities(argument: _csi_v1_ValidateVolumeCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  ValidateVolumeCapabilities(argument: _csi_v1_ValidateVolumeCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  ValidateVolumeCapabilities(argument: _csi_v1_ValidateVolumeCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  validateVolumeCapabilities(argument: _csi_v1_ValidateVolumeCapabilitiesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  validateVolumeCapabilities(argument: _csi_v1_ValidateVolumeCapabilitiesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  validateVolumeCapabilities(argument: _csi_v1_ValidateVolumeCapabilitiesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  validateVolumeCapabilities(argument: _csi_v1_ValidateVolumeCapabilitiesRequest, callback: grpc.requestCallback<_csi_v1_ValidateVolumeCapabilitiesResponse__Output>): grpc.ClientUnaryCall;
  
}

/**
 * Cluster-level volume and snapshot management.
 */
export interface ControllerHandlers extends grpc.UntypedServiceImplementation {
  ControllerExpandVolume: grpc.handleUnaryCall<_csi_v1_ControllerExpandVolumeRequest__Output, _csi_v1_ControllerExpandVolumeResponse>;
  
  ControllerGetCapabilities: grpc.handleUnaryCall<_csi_v1_ControllerGetCapabilitiesRequest__Output, _csi_v1_ControllerGetCapabilitiesResponse>;
  
  ControllerGetVolume: grpc.handleUnaryCall<_csi_v1_ControllerGetVolumeRequest__Output, _csi_v1_ControllerGetVolumeResponse>;
  
  ControllerModifyVolume: grpc.handleUnaryCall<_csi_v1_ControllerModifyVolumeRequest__Output, _csi_v1_ControllerModifyVolumeResponse>;
  
  ControllerPublishVolume: grpc.handleUnaryCall<_csi_v1_ControllerPublishVolumeRequest__Output, _csi_v1_ControllerPublishVolumeResponse>;
  
  ControllerUnpublishVolume: grpc.handleUnaryCall<_csi_v1_ControllerUnpublishVolumeRequest__Output, _csi_v1_ControllerUnpublishVolumeResponse>;
  
  CreateSnapshot: grpc.handleUnaryCall<_csi_v1_CreateSnapshotRequest__Output, _csi_v1_CreateSnapshotResponse>;
  
  CreateVolume: grpc.handleUnaryCall<_csi_v1_CreateVolumeRequest__Output, _csi_v1_CreateVolumeResponse>;
  
  DeleteSnapshot: grpc.handleUnaryCall<_csi_v1_DeleteSnapshotRequest__Output, _csi_v1_DeleteSnapshotResponse>;
  
  DeleteVolume: grpc.handleUnaryCall<_csi_v1_DeleteVolumeRequest__Output, _csi_v1_DeleteVolumeResponse>;
  
  GetCapacity: grpc.handleUnaryCall<_csi_v1_GetCapacityRequest__Output, _csi_v1_GetCapacityResponse>;
  
  GetSnapshot: grpc.handleUnaryCall<_csi_v1_GetSnapshotRequest__Output, _csi_v1_GetSnapshotResponse>;
  
  ListSnapshots: grpc.handleUnaryCall<_csi_v1_ListSnapshotsRequest__Output, _csi_v1_ListSnapshotsResponse>;
  
  ListVolumes: grpc.handleUnaryCall<_csi_v1_ListVolumesRequest__Output, _csi_v1_ListVolumesResponse>;
  
  ValidateVolumeCapabilities: grpc.handleUnaryCall<_csi_v1_ValidateVolumeCapabilitiesRequest__Output, _csi_v1_ValidateVolumeCapabilitiesResponse>;
  
}

export interface ControllerDefinition extends grpc.ServiceDefinition {
  ControllerExpandVolume: MethodDefinition<_csi_v1_ControllerExpandVolumeRequest, _csi_v1_ControllerExpandVolumeResponse, _csi_v1_ControllerExpandVolumeRequest__Output, _csi_v1_ControllerExpandVolumeResponse__Output>
  ControllerGetCapabilities: MethodDefinition<_csi_v1_ControllerGetCapabilitiesRequest, _csi_v1_ControllerGetCapabilitiesResponse, _csi_v1_ControllerGetCapabilitiesRequest__Output, _csi_v1_ControllerGetCapabilitiesResponse__Output>
  ControllerGetVolume: MethodDefinition<_csi_v1_ControllerGetVolumeRequest, _csi_v1_ControllerGetVolumeResponse, _csi_v1_ControllerGetVolumeRequest__Output, _csi_v1_ControllerGetVolumeResponse__Output>
  ControllerModifyVolume: MethodDefinition<_csi_v1_ControllerModifyVolumeRequest, _csi_v1_ControllerModifyVolumeResponse, _csi_v1_ControllerModifyVolumeRequest__Output, _csi_v1_ControllerModifyVolumeResponse__Output>
  ControllerPublishVolume: MethodDefinition<_csi_v1_ControllerPublishVolumeRequest, _csi_v1_ControllerPublishVolumeResponse, _csi_v1_ControllerPublishVolumeRequest__Output, _csi_v1_ControllerPublishVolumeResponse__Output>
  ControllerUnpublishVolume: MethodDefinition<_csi_v1_ControllerUnpublishVolumeRequest, _csi_v1_ControllerUnpublishVolumeResponse, _csi_v1_ControllerUnpublishVolumeRequest__Output, _csi_v1_ControllerUnpublishVolumeResponse__Output>
  CreateSnapshot: MethodDefinition<_csi_v1_CreateSnapshotRequest, _csi_v1_CreateSnapshotResponse, _csi_v1_CreateSnapshotRequest__Output, _csi_v1_CreateSnapshotResponse__Output>
  CreateVolume: MethodDefinition<_csi_v1_CreateVolumeRequest, _csi_v1_CreateVolumeResponse, _csi_v1_CreateVolumeRequest__Output, _csi_v1_CreateVolumeResponse__Output>
  DeleteSnapshot: MethodDefinition<_csi_v1_DeleteSnapshotRequest, _csi_v1_DeleteSnapshotResponse, _csi_v1_DeleteSnapshotRequest__Output, _csi_v1_DeleteSnapshotResponse__Output>
  DeleteVolume: MethodDefinition<_csi_v1_DeleteVolumeRequest, _csi_v1_DeleteVolumeResponse, _csi_v1_DeleteVolumeRequest__Output, _csi_v1_DeleteVolumeResponse__Output>
  GetCapacity: MethodDefinition<_csi_v1_GetCapacityRequest, _csi_v1_GetCapacityResponse, _csi_v1_GetCapacityRequest__Output, _csi_v1_GetCapacityResponse__Output>
  GetSnapshot: MethodDefinition<_csi_v1_GetSnapshotRequest, _csi_v1_GetSnapshotResponse, _csi_v1_GetSnapshotRequest__Output, _csi_v1_GetSnapshotResponse__Output>
  ListSnapshots: MethodDefinition<_csi_v1_ListSnapshotsRequest, _csi_v1_ListSnapshotsResponse, _csi_v1_ListSnapshotsRequest__Output, _csi_v1_ListSnapshotsResponse__Output>
  ListVolumes: MethodDefinition<_csi_v1_ListVolumesRequest, _csi_v1_ListVolumesResponse, _csi_v1_ListVolumesRequest__Output, _csi_v1_ListVolumesResponse__Output>
  ValidateVolumeCapabilities: MethodDefinition<_csi_v1_ValidateVolumeCapabilitiesRequest, _csi_v1_ValidateVolumeCapabilitiesResponse, _csi_v1_ValidateVolumeCapabilitiesRequest__Output, _csi_v1_ValidateVolumeCapabilitiesResponse__Output>
}
