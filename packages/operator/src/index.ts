// Public API of the operator package: the Kubernetes port and its adapter, the pure builders and
// planners (objects, certificates, status, upgrades), the control loop pieces and the binary.
export * from './kube-client.js';
export * from './kube-port.js';
export * from './kube-errors.js';
export { ClientKubeApi, collectionPath, statusPatch, toKubeError } from './kube-api.js';
export * from './resources.js';
export * from './version.js';
export type {
  BuildContext,
  Built,
  CertificateSecrets,
  ObjectBuilder,
  OwnerDeployment,
  TlsMaterial,
} from './objects/context.js';
export { BUILDERS, buildDesiredObjects, type DesiredObject } from './objects/registry.js';
export { EVER_CREATED_KINDS } from './objects/kinds.js';
export { PROVISIONER_CLUSTER_RULES, PROVISIONER_NAMESPACE_RULES } from './objects/rbac.js';
export { provisionerArgs } from './objects/controller.js';
export * from './certs.js';
export { CA_COMMON_NAME, planOwnCa, type OwnCaInput, type OwnCaResult } from './certs-own-ca.js';
export * from './status.js';
export * from './plan.js';
export * from './device-mode.js';
export * from './clock.js';
export * from './queue.js';
export * from './informer.js';
export * from './operator.js';
export * from './reconciler.js';
export * from './leader.js';
export * from './events.js';
export * from './flags.js';
export * from './http-server.js';
export { runOperator, type MainDeps } from './main.js';
export * from './render/index.js';
