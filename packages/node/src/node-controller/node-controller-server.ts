// The node-controller service: the CSI Controller service for the volumes of THIS node, which the
// central controller calls over mutual TLS (TCP port 10001 by default). This file only wires RPCs
// to their implementations; validation and locking live next to each RPC. Peer authorisation (the
// central controller's certificate) is injected, so this file knows nothing of TLS.
import type * as grpc from '@grpc/grpc-js';
import { adaptService, loadCsi, type AsyncService, type ControllerHandlers } from '@pmem-csi/runtime';
import { createVolumeRpc, deleteVolumeRpc } from './controller-create.js';
import { controllerExpandVolumeRpc } from './controller-expand.js';
import { listVolumesRpc } from './controller-list.js';
import { controllerCapabilities, getCapacityRpc, validateVolumeCapabilitiesRpc } from './controller-queries.js';
import type { NodeServiceDeps } from '../volumes/deps.js';

export interface NodeControllerServiceOptions {
  /** Refuses callers that are not the central controller (throws PermissionDenied/Unauthenticated). */
  readonly authorize?: (call: grpc.ServerUnaryCall<unknown, unknown>) => void;
}

/** The node-controller RPCs the node implements, as async functions of (request, call context). */
export type NodeControllerCalls = Required<
  Pick<
    AsyncService<ControllerHandlers>,
    | 'CreateVolume'
    | 'DeleteVolume'
    | 'ListVolumes'
    | 'GetCapacity'
    | 'ValidateVolumeCapabilities'
    | 'ControllerExpandVolume'
    | 'ControllerGetCapabilities'
  >
>;

/** The one table of the node-controller's methods: the service below serves it; test kits call it in process. */
export function nodeControllerCalls(deps: NodeServiceDeps): NodeControllerCalls {
  return {
    ControllerGetCapabilities: async () => controllerCapabilities(deps),
    CreateVolume: (req, ctx) => createVolumeRpc(deps, req, ctx),
    DeleteVolume: (req, ctx) => deleteVolumeRpc(deps, req, ctx),
    ListVolumes: (req) => listVolumesRpc(deps, req),
    GetCapacity: (req, ctx) => getCapacityRpc(deps, req, ctx.signal),
    ValidateVolumeCapabilities: (req, ctx) => validateVolumeCapabilitiesRpc(deps, req, ctx.signal),
    ControllerExpandVolume: (req, ctx) => controllerExpandVolumeRpc(deps, req, ctx),
  };
}

/** The grpc-js handlers of csi.v1.Controller for this node's volumes. */
export function createNodeControllerService(
  deps: NodeServiceDeps,
  options: NodeControllerServiceOptions = {},
): ControllerHandlers {
  return adaptService<ControllerHandlers>(
    'NodeController',
    loadCsi().csi.v1.Controller.service,
    nodeControllerCalls(deps),
    {
      log: deps.log.child({ service: 'node-controller' }),
      authorize: options.authorize,
      quietMethods: ['GetCapacity', 'ListVolumes', 'ControllerGetCapabilities'],
    },
  );
}
