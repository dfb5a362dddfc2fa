import type * as grpc from '@grpc/grpc-js';

import type { RegistryClient as _pmemcsi_registry_v1_RegistryClient, RegistryDefinition as _pmemcsi_registry_v1_RegistryDefinition } from './pmemcsi/registry/v1/Registry.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  pmemcsi: {
    registry: {
      v1: {
        Registry: SubtypeConstructor<typeof grpc.Client, _pmemcsi_registry_v1_RegistryClient> & { service: _pmemcsi_registry_v1_RegistryDefinition }
      }
    }
  }
}

