import type * as grpc from '@grpc/grpc-js';

import type { ControllerClient as _csi_v1_ControllerClient, ControllerDefinition as _csi_v1_ControllerDefinition } from './csi/v1/Controller.js';
import type { GroupControllerClient as _csi_v1_GroupControllerClient, GroupControllerDefinition as _csi_v1_GroupControllerDefinition } from './csi/v1/GroupController.js';
import type { IdentityClient as _csi_v1_IdentityClient, IdentityDefinition as _csi_v1_IdentityDefinition } from './csi/v1/Identity.js';
import type { NodeClient as _csi_v1_NodeClient, NodeDefinition as _csi_v1_NodeDefinition } from './csi/v1/Node.js';
import type { SnapshotMetadataClient as _csi_v1_SnapshotMetadataClient, SnapshotMetadataDefinition as _csi_v1_SnapshotMetadataDefinition } from './csi/v1/SnapshotMetadata.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  csi: {
    v1: {
      /**
       * Cluster-level volume and snapshot management.
       */
      Controller: SubtypeConstructor<typeof grpc.Client, _csi_v1_ControllerClient> & { service: _csi_v1_ControllerDefinition }
      /**
       * Operations on groups of volumes (group snapshots).
       */
      GroupController: SubtypeConstructor<typeof grpc.Client, _csi_v1_GroupControllerClient> & { service: _csi_v1_GroupControllerDefinition }
      /**
       * Plugin identity and readiness; served by every plugin endpoint.
       */
      Identity: SubtypeConstructor<typeof grpc.Client, _csi_v1_IdentityClient> & { service: _csi_v1_IdentityDefinition }
      /**
       * Per-node staging, publishing and stats of volumes.
       */
      Node: SubtypeConstructor<typeof grpc.Client, _csi_v1_NodeClient> & { service: _csi_v1_NodeDefinition }
      /**
       * Block-level metadata of snapshots (allocated / changed ranges); streaming.
       */
      SnapshotMetadata: SubtypeConstructor<typeof grpc.Client, _csi_v1_SnapshotMetadataClient> & { service: _csi_v1_SnapshotMetadataDefinition }
    }
  }
}

