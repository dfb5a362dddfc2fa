import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { Capacity as _pmemcsi_registry_v1_Capacity, Capacity__Output as _pmemcsi_registry_v1_Capacity__Output } from './pmemcsi/registry/v1/Capacity.js';
import type { InventoryVolume as _pmemcsi_registry_v1_InventoryVolume, InventoryVolume__Output as _pmemcsi_registry_v1_InventoryVolume__Output } from './pmemcsi/registry/v1/InventoryVolume.js';
import type { RegisterControllerReply as _pmemcsi_registry_v1_RegisterControllerReply, RegisterControllerReply__Output as _pmemcsi_registry_v1_RegisterControllerReply__Output } from './pmemcsi/registry/v1/RegisterControllerReply.js';
import type { RegisterControllerRequest as _pmemcsi_registry_v1_RegisterControllerRequest, RegisterControllerRequest__Output as _pmemcsi_registry_v1_RegisterControllerRequest__Output } from './pmemcsi/registry/v1/RegisterControllerRequest.js';
import type { RegistryClient as _pmemcsi_registry_v1_RegistryClient, RegistryDefinition as _pmemcsi_registry_v1_RegistryDefinition } from './pmemcsi/registry/v1/Registry.js';
import type { RenewControllerReply as _pmemcsi_registry_v1_RenewControllerReply, RenewControllerReply__Output as _pmemcsi_registry_v1_RenewControllerReply__Output } from './pmemcsi/registry/v1/RenewControllerReply.js';
import type { RenewControllerRequest as _pmemcsi_registry_v1_RenewControllerRequest, RenewControllerRequest__Output as _pmemcsi_registry_v1_RenewControllerRequest__Output } from './pmemcsi/registry/v1/RenewControllerRequest.js';
import type { UnregisterControllerReply as _pmemcsi_registry_v1_UnregisterControllerReply, UnregisterControllerReply__Output as _pmemcsi_registry_v1_UnregisterControllerReply__Output } from './pmemcsi/registry/v1/UnregisterControllerReply.js';
import type { UnregisterControllerRequest as _pmemcsi_registry_v1_UnregisterControllerRequest, UnregisterControllerRequest__Output as _pmemcsi_registry_v1_UnregisterControllerRequest__Output } from './pmemcsi/registry/v1/UnregisterControllerRequest.js';
import type { VolumeInventory as _pmemcsi_registry_v1_VolumeInventory, VolumeInventory__Output as _pmemcsi_registry_v1_VolumeInventory__Output } from './pmemcsi/registry/v1/VolumeInventory.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  pmemcsi: {
    registry: {
      v1: {
        Capacity: MessageTypeDefinition<_pmemcsi_registry_v1_Capacity, _pmemcsi_registry_v1_Capacity__Output>
        InventoryVolume: MessageTypeDefinition<_pmemcsi_registry_v1_InventoryVolume, _pmemcsi_registry_v1_InventoryVolume__Output>
        RegisterControllerReply: MessageTypeDefinition<_pmemcsi_registry_v1_RegisterControllerReply, _pmemcsi_registry_v1_RegisterControllerReply__Output>
        RegisterControllerRequest: MessageTypeDefinition<_pmemcsi_registry_v1_RegisterControllerRequest, _pmemcsi_registry_v1_RegisterControllerRequest__Output>
        Registry: SubtypeConstructor<typeof grpc.Client, _pmemcsi_registry_v1_RegistryClient> & { service: _pmemcsi_registry_v1_RegistryDefinition }
        RenewControllerReply: MessageTypeDefinition<_pmemcsi_registry_v1_RenewControllerReply, _pmemcsi_registry_v1_RenewControllerReply__Output>
        RenewControllerRequest: MessageTypeDefinition<_pmemcsi_registry_v1_RenewControllerRequest, _pmemcsi_registry_v1_RenewControllerRequest__Output>
        UnregisterControllerReply: MessageTypeDefinition<_pmemcsi_registry_v1_UnregisterControllerReply, _pmemcsi_registry_v1_UnregisterControllerReply__Output>
        UnregisterControllerRequest: MessageTypeDefinition<_pmemcsi_registry_v1_UnregisterControllerRequest, _pmemcsi_registry_v1_UnregisterControllerRequest__Output>
        VolumeInventory: MessageTypeDefinition<_pmemcsi_registry_v1_VolumeInventory, _pmemcsi_registry_v1_VolumeInventory__Output>
      }
    }
  }
}

