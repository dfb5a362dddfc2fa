// The objects that install the operator itself (not the driver: that is what the operator builds):
// its ServiceAccount, ClusterRole + binding, a Role + binding in the driver namespace, and its
// Deployment. The kustomize base deploy/kustomize/operator is generated from this; the Helm chart's
// templates render the same objects (e2e/src/deploy/agreement.test.ts compares them field by field).
// The operator runs in its own namespace and writes drivers into another one, so that deleting the
// operator (or its namespace) leaves every driver running: their owner is the cluster-scoped CR.
import type { V1Deployment, V1Namespace, V1ResourceRequirements } from '@kubernetes/client-node';
import { LABEL_KEYS } from '@pmem-csi/api';
import { DEFAULT_METRICS_ADDRESS, DEFAULT_NAMESPACE } from '../binary/flags.js';
import type { KubeObject } from '../kube/kube-port.js';
import { RESOURCES } from '../kube/resources.js';
import { OPERATOR_VERSION } from '../version.js';
import { DEFAULT_DRIVER_IMAGE, DEFAULT_OPERATOR_IMAGE } from './images.js';
import { operatorRbacRules } from './operator-rbac.js';

/** Name of the operator's ServiceAccount, ClusterRole(Binding), Role(Binding) and Deployment. */
export const OPERATOR_NAME = 'pmem-csi-operator';
export const DEFAULT_OPERATOR_NAMESPACE = 'pmem-csi-operator';
/** Where the operator puts drivers (and its leader-election Lease): its --namespace. */
export const DEFAULT_DRIVER_NAMESPACE = DEFAULT_NAMESPACE;
/** Port of /healthz, /readyz and /metrics in the operator pod (--metrics-address=:PORT). */
export const OPERATOR_HTTP_PORT = Number(DEFAULT_METRICS_ADDRESS.split(':')[1]);
/** UID/GID of the operator process: "nonroot" of distroless images, also set in operator.Dockerfile. */
export const OPERATOR_RUN_AS = 65532;
/** Value of app.kubernetes.io/part-of on every object of every install path. */
export const PART_OF = 'pmem-csi';
/** Pod Security admission: the node driver is privileged (devices, mounts); the operator is not. */
export const POD_SECURITY_ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';

export const OPERATOR_DEFAULT_RESOURCES: V1ResourceRequirements = {
  requests: { cpu: '50m', memory: '128Mi' },
  limits: { memory: '512Mi' },
};

export interface OperatorInstallOptions {
  readonly operatorNamespace: string;
  readonly driverNamespace: string;
  readonly image: string;
  /** Default driver image of PmemCSIDeployments that do not pin one (--driver-image). */
  readonly driverImage: string;
  /** app.kubernetes.io/managed-by of the install objects: "kustomize", "Helm". */
  readonly managedBy: string;
  readonly imagePullPolicy?: string;
  readonly replicas?: number;
  readonly logFormat?: 'text' | 'json';
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  readonly resources?: V1ResourceRequirements;
}

export const DEFAULT_OPERATOR_INSTALL: OperatorInstallOptions = {
  operatorNamespace: DEFAULT_OPERATOR_NAMESPACE,
  driverNamespace: DEFAULT_DRIVER_NAMESPACE,
  image: DEFAULT_OPERATOR_IMAGE,
  driverImage: DEFAULT_DRIVER_IMAGE,
  managedBy: 'kustomize',
};

/** Selector of the operator pods. */
export function operatorSelectorLabels(): Record<string, string> {
  return { [LABEL_KEYS.name]: OPERATOR_NAME, [LABEL_KEYS.component]: 'operator' };
}

/** Labels of every install object of the operator. */
export function operatorLabels(managedBy: string): Record<string, string> {
  return {
    ...operatorSelectorLabels(),
    [LABEL_KEYS.partOf]: PART_OF,
    'app.kubernetes.io/version': OPERATOR_VERSION,
    [LABEL_KEYS.managedBy]: managedBy,
  };
}

/** A Namespace with a Pod Security level (the driver's must be privileged). */
export function namespaceObject(
  name: string,
  podSecurity: 'privileged' | 'restricted',
  managedBy: string,
): V1Namespace & KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      labels: {
        [LABEL_KEYS.partOf]: PART_OF,
        [LABEL_KEYS.managedBy]: managedBy,
        [POD_SECURITY_ENFORCE_LABEL]: podSecurity,
      },
    },
  };
}

/** The operator's command line (see binary/flags.ts). */
export function operatorArgs(o: OperatorInstallOptions): string[] {
  return [
    `--namespace=${o.driverNamespace}`,
    '--leader-elect',
    `--metrics-address=:${OPERATOR_HTTP_PORT}`,
    `--log-format=${o.logFormat ?? 'text'}`,
    `--log-level=${o.logLevel ?? 'info'}`,
    `--driver-image=${o.driverImage}`,
  ];
}

function operatorDeployment(o: OperatorInstallOptions): V1Deployment & KubeObject {
  const fieldEnv = (
    name: string,
    fieldPath: string,
  ): { name: string; valueFrom: { fieldRef: { apiVersion: string; fieldPath: string } } } => ({
    name,
    valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } },
  });
  return {
    apiVersion: RESOURCES.deployment.apiVersion,
    kind: RESOURCES.deployment.kind,
    metadata: { name: OPERATOR_NAME, namespace: o.operatorNamespace, labels: operatorLabels(o.managedBy) },
    spec: {
      // More than one replica only adds standbys: --leader-elect lets one reconcile at a time.
      replicas: o.replicas ?? 1,
      selector: { matchLabels: operatorSelectorLabels() },
      template: {
        metadata: { labels: { ...operatorSelectorLabels(), [LABEL_KEYS.partOf]: PART_OF } },
        spec: {
          serviceAccountName: OPERATOR_NAME,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: OPERATOR_RUN_AS,
            runAsGroup: OPERATOR_RUN_AS,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: OPERATOR_NAME,
              image: o.image,
              imagePullPolicy: o.imagePullPolicy ?? 'IfNotPresent',
              args: operatorArgs(o),
              // POD_NAME makes the leader-election identity readable; POD_NAMESPACE is informational.
              env: [fieldEnv('POD_NAME', 'metadata.name'), fieldEnv('POD_NAMESPACE', 'metadata.namespace')],
              ports: [{ name: 'http', containerPort: OPERATOR_HTTP_PORT, protocol: 'TCP' }],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'http' },
                initialDelaySeconds: 10,
                periodSeconds: 10,
                failureThreshold: 3,
              },
              // A standby replica (not leader) reports ready too, see binary/http-server.ts.
              readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 5, failureThreshold: 3 },
              resources: o.resources ?? OPERATOR_DEFAULT_RESOURCES,
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              terminationMessagePolicy: 'FallbackToLogsOnError',
            },
          ],
        },
      },
    },
  };
}

/** ServiceAccount, ClusterRole, ClusterRoleBinding, Role, RoleBinding and Deployment of the operator. */
export function operatorInstallObjects(o: OperatorInstallOptions = DEFAULT_OPERATOR_INSTALL): KubeObject[] {
  const labels = operatorLabels(o.managedBy);
  const rules = operatorRbacRules();
  const rbac = RESOURCES.clusterRole.apiVersion;
  const subjects = [{ kind: 'ServiceAccount', name: OPERATOR_NAME, namespace: o.operatorNamespace }];
  const roleRef = (kind: string): { apiGroup: string; kind: string; name: string } => ({
    apiGroup: rbac.split('/')[0] ?? '',
    kind,
    name: OPERATOR_NAME,
  });
  const objects: (KubeObject & Record<string, unknown>)[] = [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: OPERATOR_NAME, namespace: o.operatorNamespace, labels },
    },
    { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: OPERATOR_NAME, labels }, rules: rules.cluster },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: OPERATOR_NAME, labels },
      subjects,
      roleRef: roleRef('ClusterRole'),
    },
    {
      apiVersion: rbac,
      kind: 'Role',
      metadata: { name: OPERATOR_NAME, namespace: o.driverNamespace, labels },
      rules: rules.namespace,
    },
    {
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name: OPERATOR_NAME, namespace: o.driverNamespace, labels },
      subjects,
      roleRef: roleRef('Role'),
    },
  ];
  return [...objects, operatorDeployment(o)];
}
