// Public API of the operator package: the Kubernetes port and its adapter, the pure builders and
// planners (objects, certificates, status, upgrades), the control loop pieces and the binary.
export * from './kube/kube-client.js';
export * from './kube/kube-port.js';
export * from './kube/kube-errors.js';
export { ClientKubeApi, collectionPath, statusPatch, toKubeError } from './kube/kube-api.js';
export * from './kube/resources.js';
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
export { provisionerArgs, resizerArgs } from './objects/controller.js';
export { LEADER_ELECTION, PROVISIONER_CLIENT_LIMITS, provisionerClientLimitArgs } from './objects/controller-ha.js';
export * from './certs/certificates.js';
export { CA_COMMON_NAME, planOwnCa, type OwnCaInput, type OwnCaResult } from './certs/own-ca.js';
export * from './status/deployment-status.js';
export * from './status/driver-components.js';
export * from './plan/object-plan.js';
export * from './plan/device-mode-guard.js';
export * from './clock.js';
export * from './loop/queue.js';
export * from './kube/informer.js';
export * from './loop/control-loop.js';
export * from './loop/deployment-reconciler.js';
export * from './loop/leader.js';
export * from './status/events.js';
export * from './binary/flags.js';
export * from './binary/http-server.js';
export { runOperator, type MainDeps } from './main.js';
export * from './render/index.js';
