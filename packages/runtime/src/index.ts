// Shared runtime of the driver: errors, logging, locks, the command runner, gRPC and mTLS helpers.
export * from './errors.js';
export * from './logger.js';
export * from './locks.js';
export * from './exec.js';
export * from './grpc/status.js';
export * from './grpc/server.js';
export * from './grpc/client.js';
export * from './grpc/protos.js';
export * from './grpc/identity.js';
export type * as csi from './generated/csi-types.js';
export type * as registry from './generated/registry-types.js';
export type { ControllerHandlers, ControllerClient } from './generated/csi/v1/Controller.js';
export type { NodeHandlers, NodeClient } from './generated/csi/v1/Node.js';
export type { IdentityHandlers, IdentityClient } from './generated/csi/v1/Identity.js';
export type { RegistryHandlers, RegistryClient } from './generated/pmemcsi/registry/v1/Registry.js';
export * from './certs/index.js';
export * from './tls/index.js';
export * from './metrics/index.js';
