// Shared runtime of the driver (transport): logging, locks, the command runner, the gRPC services
// (clients, handlers, servers, status mapping), mTLS, certificates, metrics. The CSI vocabulary
// (message types, wire shapes, domain errors, byte units) is @pmem-csi/csi's: import it from there;
// nothing of it is passed on here (packages/csi/src/one-door.test.ts).
export * from './logger.js';
export * from './locks.js';
export * from './exec.js';
export * from './status.js';
export * from './grpc/server.js';
export * from './grpc/connections.js';
export * from './grpc/client.js';
export * from './grpc/protos.js';
export * from './grpc/identity.js';
export type { ControllerHandlers, ControllerClient } from './generated/csi/v1/Controller.js';
export type { NodeHandlers, NodeClient } from './generated/csi/v1/Node.js';
export type { IdentityHandlers, IdentityClient } from './generated/csi/v1/Identity.js';
export type { RegistryHandlers, RegistryClient } from './generated/pmemcsi/registry/v1/Registry.js';
export * from './certs/index.js';
export * from './tls/index.js';
export * from './metrics/index.js';
