// Original file: proto/registry.proto

import type { registry } from '@pmem-csi/csi';
import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
type _pmemcsi_registry_v1_RegisterControllerReply = registry.RegisterControllerReply;
type _pmemcsi_registry_v1_RegisterControllerReply__Output = registry.RegisterControllerReply__Output;
type _pmemcsi_registry_v1_RegisterControllerRequest = registry.RegisterControllerRequest;
type _pmemcsi_registry_v1_RegisterControllerRequest__Output = registry.RegisterControllerRequest__Output;
type _pmemcsi_registry_v1_RenewControllerReply = registry.RenewControllerReply;
type _pmemcsi_registry_v1_RenewControllerReply__Output = registry.RenewControllerReply__Output;
type _pmemcsi_registry_v1_RenewControllerRequest = registry.RenewControllerRequest;
type _pmemcsi_registry_v1_RenewControllerRequest__Output = registry.RenewControllerRequest__Output;
type _pmemcsi_registry_v1_UnregisterControllerReply = registry.UnregisterControllerReply;
type _pmemcsi_registry_v1_UnregisterControllerReply__Output = registry.UnregisterControllerReply__Output;
type _pmemcsi_registry_v1_UnregisterControllerRequest = registry.UnregisterControllerRequest;
type _pmemcsi_registry_v1_UnregisterControllerRequest__Output = registry.UnregisterControllerRequest__Output;

export interface RegistryClient extends grpc.Client {
  /**
   * Registers (or re-registers) a node's node-controller endpoint; returns the lease to keep.
   */
  RegisterController(argument: _pmemcsi_registry_v1_RegisterControllerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_RegisterControllerReply__Output>): grpc.ClientUnaryCall;
  RegisterController(argument: _pmemcsi_registry_v1_RegisterControllerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_pmemcsi_registry_v1_RegisterControllerReply__Output>): grpc.ClientUnaryCall;
  RegisterController(argument: _pmemcsi_registry_v1_RegisterControllerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_RegisterControllerReply__Output>): grpc.ClientUnaryCall;
  RegisterController(argument: _pmemcsi_registry_v1_RegisterControllerRequest, callback: grpc.requestCallback<_pmemcsi_registry_v1_RegisterControllerReply__Output>): grpc.ClientUnaryCall;
  /**
   * Registers (or re-registers) a node's node-controller endpoint; returns the lease to keep.
   */
  registerController(argument: _pmemcsi_registry_v1_RegisterControllerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_RegisterControllerReply__Output>): grpc.ClientUnaryCall;
  registerController(argument: _pmemcsi_registry_v1_RegisterControllerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_pmemcsi_registry_v1_RegisterControllerReply__Output>): grpc.ClientUnaryCall;
  registerController(argument: _pmemcsi_registry_v1_RegisterControllerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_RegisterControllerReply__Output>): grpc.ClientUnaryCall;
  registerController(argument: _pmemcsi_registry_v1_RegisterControllerRequest, callback: grpc.requestCallback<_pmemcsi_registry_v1_RegisterControllerReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Keeps a registration alive and updates the node's capacity.
   */
  RenewController(argument: _pmemcsi_registry_v1_RenewControllerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_RenewControllerReply__Output>): grpc.ClientUnaryCall;
  RenewController(argument: _pmemcsi_registry_v1_RenewControllerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_pmemcsi_registry_v1_RenewControllerReply__Output>): grpc.ClientUnaryCall;
  RenewController(argument: _pmemcsi_registry_v1_RenewControllerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_RenewControllerReply__Output>): grpc.ClientUnaryCall;
  RenewController(argument: _pmemcsi_registry_v1_RenewControllerRequest, callback: grpc.requestCallback<_pmemcsi_registry_v1_RenewControllerReply__Output>): grpc.ClientUnaryCall;
  /**
   * Keeps a registration alive and updates the node's capacity.
   */
  renewController(argument: _pmemcsi_registry_v1_RenewControllerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_RenewControllerReply__Output>): grpc.ClientUnaryCall;
  renewController(argument: _pmemcsi_registry_v1_RenewControllerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_pmemcsi_registry_v1_RenewControllerReply__Output>): grpc.ClientUnaryCall;
  renewController(argument: _pmemcsi_registry_v1_RenewControllerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_RenewControllerReply__Output>): grpc.ClientUnaryCall;
  renewController(argument: _pmemcsi_registry_v1_RenewControllerRequest, callback: grpc.requestCallback<_pmemcsi_registry_v1_RenewControllerReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Removes a registration on an orderly shutdown; the node's volumes stay known to the controller.
   */
  UnregisterController(argument: _pmemcsi_registry_v1_UnregisterControllerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_UnregisterControllerReply__Output>): grpc.ClientUnaryCall;
  UnregisterController(argument: _pmemcsi_registry_v1_UnregisterControllerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_pmemcsi_registry_v1_UnregisterControllerReply__Output>): grpc.ClientUnaryCall;
  UnregisterController(argument: _pmemcsi_registry_v1_UnregisterControllerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_UnregisterControllerReply__Output>): grpc.ClientUnaryCall;
  UnregisterController(argument: _pmemcsi_registry_v1_UnregisterControllerRequest, callback: grpc.requestCallback<_pmemcsi_registry_v1_UnregisterControllerReply__Output>): grpc.ClientUnaryCall;
  /**
   * Removes a registration on an orderly shutdown; the node's volumes stay known to the controller.
   */
  unregisterController(argument: _pmemcsi_registry_v1_UnregisterControllerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_UnregisterControllerReply__Output>): grpc.ClientUnaryCall;
  unregisterController(argument: _pmemcsi_registry_v1_UnregisterControllerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_pmemcsi_registry_v1_UnregisterControllerReply__Output>): grpc.ClientUnaryCall;
  unregisterController(argument: _pmemcsi_registry_v1_UnregisterControllerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_pmemcsi_registry_v1_UnregisterControllerReply__Output>): grpc.ClientUnaryCall;
  unregisterController(argument: _pmemcsi_registry_v1_UnregisterControllerRequest, callback: grpc.requestCallback<_pmemcsi_registry_v1_UnregisterControllerReply__Output>): grpc.ClientUnaryCall;
  
}

export interface RegistryHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Registers (or re-registers) a node's node-controller endpoint; returns the lease to keep.
   */
  RegisterController: grpc.handleUnaryCall<_pmemcsi_registry_v1_RegisterControllerRequest__Output, _pmemcsi_registry_v1_RegisterControllerReply>;
  
  /**
   * Keeps a registration alive and updates the node's capacity.
   */
  RenewController: grpc.handleUnaryCall<_pmemcsi_registry_v1_RenewControllerRequest__Output, _pmemcsi_registry_v1_RenewControllerReply>;
  
  /**
   * Removes a registration on an orderly shutdown; the node's volumes stay known to the controller.
   */
  UnregisterController: grpc.handleUnaryCall<_pmemcsi_registry_v1_UnregisterControllerRequest__Output, _pmemcsi_registry_v1_UnregisterControllerReply>;
  
}

export interface RegistryDefinition extends grpc.ServiceDefinition {
  RegisterController: MethodDefinition<_pmemcsi_registry_v1_RegisterControllerRequest, _pmemcsi_registry_v1_RegisterControllerReply, _pmemcsi_registry_v1_RegisterControllerRequest__Output, _pmemcsi_registry_v1_RegisterControllerReply__Output>
  RenewController: MethodDefinition<_pmemcsi_registry_v1_RenewControllerRequest, _pmemcsi_registry_v1_RenewControllerReply, _pmemcsi_registry_v1_RenewControllerRequest__Output, _pmemcsi_registry_v1_RenewControllerReply__Output>
  UnregisterController: MethodDefinition<_pmemcsi_registry_v1_UnregisterControllerRequest, _pmemcsi_registry_v1_UnregisterControllerReply, _pmemcsi_registry_v1_UnregisterControllerRequest__Output, _pmemcsi_registry_v1_UnregisterControllerReply__Output>
}
