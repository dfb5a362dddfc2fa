// Central CSI controller service, node registry and volume placement.
export {
  startController,
  type ControllerOptions,
  type ControllerStatus,
  type RegisteredNodeStatus,
  type RunningController,
} from './controller.js';
export { type NodeCredentialsFactory, type NodeConnectionOptions } from './nodes/grpc-node-port.js';
export { DEFAULT_LEASE_SECONDS, heldLeaseSecondsFor, leasePolicy } from './registry/lease-policy.js';
export { type NodeState } from './registry/node-view.js';
export { CONTROLLER_CAPABILITIES } from './csi/controller-server.js';
export { ControllerMetrics, usedBytes } from './metrics.js';
