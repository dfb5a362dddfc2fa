// Every kind that this operator or any older version (including the Go operator it replaces) ever
// created for a PmemCSIDeployment. Obsolete-object cleanup looks for leftovers of exactly these
// kinds, so the list may grow but must never shrink: a kind removed from it would leave objects
// of older versions behind forever.
import type { ResourceType } from '../kube/kube-port.js';
import { RESOURCES } from '../kube/resources.js';

export const EVER_CREATED_KINDS: readonly ResourceType[] = [
  RESOURCES.secret,
  RESOURCES.serviceAccount,
  RESOURCES.role,
  RESOURCES.roleBinding,
  RESOURCES.clusterRole,
  RESOURCES.clusterRoleBinding,
  RESOURCES.service,
  RESOURCES.csiDriver,
  RESOURCES.deployment,
  RESOURCES.daemonSet,
  // Only for two or more controller replicas (issue 17): deleted when the count drops to one.
  RESOURCES.podDisruptionBudget,
  // The Go operator ran the controller as a StatefulSet (v0.8/v0.9) and later added a mutating
  // webhook for its scheduler extender; neither exists in this operator.
  RESOURCES.statefulSet,
  RESOURCES.mutatingWebhookConfiguration,
];
