// What the Go operator of PMEM-CSI v1.x (intel/pmem-csi, pkg/pmem-csi-operator/controller/deployment,
// pkg/apis/pmemcsi/v1beta1) left in a cluster for one PmemCSIDeployment, built from the facts in
// docs/migration.md ("Operator objects"): object names `<prefix>-<suffix>` (prefix = CR name with
// '.' replaced by '-'), its labels and selectors (app.kubernetes.io/name pmem-csi-node /
// pmem-csi-controller / pmem-csi-node-setup, instance = CR name), a controller owner reference to
// the CR on every object, the driver's arguments in the containers' command (-deviceManager,
// -mode=node / -mode=webhooks / -mode=force-convert-raw-namespaces), its per-node
// external-provisioner (distributed provisioning), the scheduler Service (443 -> 8000, a NodePort
// with spec.schedulerNodePort), the MutatingWebhookConfiguration only with controllerTLSSecret and
// mutatePods != Never (failurePolicy Fail for Always, else Ignore), RBAC and ServiceAccounts, the
// CSIDriver (storage.k8s.io/v1); and its CRD (the v1.x spec fields, conditions with reason and
// lastUpdateTime) and status. Written for this test from those facts; no code of the Go project.
import { API_GROUP, API_GROUP_VERSION, CRD_NAME, KIND, LIST_KIND, PLURAL, SHORT_NAMES, SINGULAR } from '@pmem-csi/api';
import type { KubeObject } from '../kube.js';

/** The Go operator's sidecar images of v1.0 (its DefaultProvisionerImage / DefaultRegistrarImage). */
export const GO_PROVISIONER_IMAGE = 'k8s.gcr.io/sig-storage/csi-provisioner:v2.2.1';
export const GO_REGISTRAR_IMAGE = 'k8s.gcr.io/sig-storage/csi-node-driver-registrar:v2.2.0';
export const GO_DRIVER_IMAGE = 'intel/pmem-csi-driver:v1.0.2';

/** The PmemCSIDeployment spec as a Go v1.x user wrote it (only the fields this test sets). */
export interface GoSpec {
  readonly deviceMode?: 'lvm' | 'direct';
  readonly nodeSelector?: Readonly<Record<string, string>>;
  readonly controllerTLSSecret?: string;
  readonly mutatePods?: 'Always' | 'Try' | 'Never';
  readonly schedulerNodePort?: number;
  readonly pmemPercentage?: number;
  readonly logLevel?: number;
}

export interface GoDeployment {
  readonly crName: string;
  readonly crUid: string;
  /** The namespace the Go operator ran in: where it made the namespaced objects. */
  readonly namespace: string;
  readonly spec: GoSpec;
  /** base64 of the controllerTLSSecret's ca.crt (the webhook's caBundle), when that is set. */
  readonly caBundle?: string;
}

const prefixOf = (crName: string): string => crName.replaceAll('.', '-');

/** The names of the objects only the Go operator made (no counterpart of ours), as "Kind name". */
export function goOnlyObjectNames(crName: string): string[] {
  const p = prefixOf(crName);
  return [
    `MutatingWebhookConfiguration ${p}-hook`,
    `StatefulSet ${p}-controller`,
    `DaemonSet ${p}-node-setup`,
    `Service ${p}-scheduler`,
    `ServiceAccount ${p}-webhooks`,
    `Role ${p}-webhooks-cfg`,
    `RoleBinding ${p}-webhooks-role-cfg`,
    `ClusterRole ${p}-webhooks-runner`,
    `ClusterRoleBinding ${p}-webhooks-role`,
    `ServiceAccount ${p}-node-setup`,
    `ClusterRole ${p}-node-setup-runner`,
    `ClusterRoleBinding ${p}-node-setup-role`,
  ];
}

/** Every object the Go operator v1.x made for `d`, in the order it would have created them. */
export function goOperatorObjects(d: GoDeployment): KubeObject[] {
  const p = prefixOf(d.crName);
  const meta = (name: string, namespaced = true, labels?: Record<string, string>): KubeObject['metadata'] => ({
    name,
    ...(namespaced ? { namespace: d.namespace } : {}),
    ...(labels === undefined ? {} : { labels }),
    ownerReferences: [
      { apiVersion: API_GROUP_VERSION, kind: KIND, name: d.crName, uid: d.crUid, blockOwnerDeletion: true, controller: true },
    ],
  });
  const sa = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(name) });
  const rbac = 'rbac.authorization.k8s.io/v1';
  const subject = (name: string): Record<string, string> => ({ kind: 'ServiceAccount', name, namespace: d.namespace });
  const binding = (kind: 'RoleBinding' | 'ClusterRoleBinding', name: string, role: string, account: string): KubeObject => ({
    apiVersion: rbac,
    kind,
    metadata: meta(name, kind === 'RoleBinding'),
    subjects: [subject(account)],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: kind === 'RoleBinding' ? 'Role' : 'ClusterRole', name: role },
  } as KubeObject);
  const rule = (groups: string[], resources: string[], verbs: string[]): Record<string, string[]> => ({
    apiGroups: groups,
    resources,
    verbs,
  });
  const webhookEnabled = (d.spec.controllerTLSSecret ?? '') !== '' && d.spec.mutatePods !== 'Never';
  return [
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: meta(d.crName, false),
      spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ['Persistent', 'Ephemeral'] },
    } as KubeObject,
    sa(`${p}-controller`),
    sa(`${p}-webhooks`),
    sa(`${p}-node-setup`),
    {
      apiVersion: rbac,
      kind: 'Role',
      metadata: meta(`${p}-external-provisioner-cfg`),
      rules: [
        rule([''], ['endpoints'], ['get', 'watch', 'list', 'delete', 'update', 'create']),
        rule(['coordination.k8s.io'], ['leases'], ['get', 'watch', 'list', 'delete', 'update', 'create']),
        rule(['storage.k8s.io'], ['csistoragecapacities'], ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']),
        rule([''], ['pods'], ['get']),
        rule(['apps'], ['replicasets'], ['get']),
      ],
    } as KubeObject,
    binding('RoleBinding', `${p}-csi-provisioner-role-cfg`, `${p}-external-provisioner-cfg`, `${p}-controller`),
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: meta(`${p}-external-provisioner-runner`, false),
      rules: [
        rule([''], ['persistentvolumes'], ['get', 'list', 'watch', 'create', 'delete']),
        rule([''], ['persistentvolumeclaims'], ['get', 'list', 'watch', 'update']),
        rule(['storage.k8s.io'], ['storageclasses', 'csinodes'], ['get', 'list', 'watch']),
        rule([''], ['events'], ['list', 'watch', 'create', 'update', 'patch']),
        rule([''], ['nodes'], ['get', 'list', 'watch']),
      ],
    } as KubeObject,
    binding('ClusterRoleBinding', `${p}-csi-provisioner-role`, `${p}-external-provisioner-runner`, `${p}-controller`),
    { apiVersion: rbac, kind: 'Role', metadata: meta(`${p}-webhooks-cfg`), rules: [rule([''], ['pods'], ['get', 'watch', 'list'])] } as KubeObject,
    binding('RoleBinding', `${p}-webhooks-role-cfg`, `${p}-webhooks-cfg`, `${p}-webhooks`),
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: meta(`${p}-webhooks-runner`, false),
      rules: [
        rule([''], ['persistentvolumes', 'nodes'], ['get', 'list', 'watch']),
        rule([''], ['persistentvolumeclaims'], ['get', 'list', 'watch', 'patch', 'update']),
        rule(['storage.k8s.io'], ['storageclasses', 'csinodes'], ['get', 'list', 'watch']),
      ],
    } as KubeObject,
    binding('ClusterRoleBinding', `${p}-webhooks-role`, `${p}-webhooks-runner`, `${p}-webhooks`),
    { apiVersion: rbac, kind: 'ClusterRole', metadata: meta(`${p}-node-setup-runner`, false), rules: [rule([''], ['nodes'], ['patch'])] } as KubeObject,
    binding('ClusterRoleBinding', `${p}-node-setup-role`, `${p}-node-setup-runner`, `${p}-node-setup`),
    service(d, meta(`${p}-controller`), { type: 'ClusterIP', port: 10000, targetPort: 10000 }),
    service(d, meta(`${p}-metrics`), { type: 'NodePort', port: 10010, targetPort: 10010 }),
    schedulerService(d, meta(`${p}-scheduler`)),
    ...(webhookEnabled ? [webhook(d, meta(`${p}-hook`, false), `${p}-scheduler`)] : []),
    controllerStatefulSet(d, meta(`${p}-controller`, true, workloadLabels(d, 'pmem-csi-controller', 'controller'))),
    nodeDaemonSet(d, meta(`${p}-node`, true, workloadLabels(d, 'pmem-csi-node', 'node'))),
    nodeSetupDaemonSet(d, meta(`${p}-node-setup`, true, workloadLabels(d, 'pmem-csi-node-setup', 'node-setup'))),
  ];
}

function workloadLabels(d: GoDeployment, name: string, component: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': name,
    'app.kubernetes.io/part-of': 'pmem-csi',
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/instance': d.crName,
  };
}

/** Its pod template labels: the workload's, plus the label that keeps its own pods out of its webhook. */
const podLabels = (d: GoDeployment, name: string, component: string): Record<string, string> => ({
  ...workloadLabels(d, name, component),
  'pmem-csi.intel.com/webhook': 'ignore',
});

const selector = (d: GoDeployment, name: string): Record<string, unknown> => ({
  matchLabels: { 'app.kubernetes.io/name': name, 'app.kubernetes.io/instance': d.crName },
});

interface ServicePort {
  readonly type: 'ClusterIP' | 'NodePort';
  readonly port: number;
  readonly targetPort: number;
  readonly nodePort?: number;
}

function service(d: GoDeployment, metadata: KubeObject['metadata'], { type, port, targetPort, nodePort }: ServicePort): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: {
      type,
      ports: [{ port, targetPort, ...(nodePort === undefined ? {} : { nodePort }) }],
      selector: { 'app.kubernetes.io/name': 'pmem-csi-controller', 'app.kubernetes.io/instance': d.crName },
    },
  } as KubeObject;
}

function schedulerService(d: GoDeployment, metadata: KubeObject['metadata']): KubeObject {
  const port = d.spec.schedulerNodePort ?? 0;
  return port === 0
    ? service(d, metadata, { type: 'ClusterIP', port: 443, targetPort: 8000 })
    : service(d, metadata, { type: 'NodePort', port: 443, targetPort: 8000, nodePort: port });
}

function webhook(d: GoDeployment, metadata: KubeObject['metadata'], serviceName: string): KubeObject {
  const ignore = { matchExpressions: [{ key: 'pmem-csi.intel.com/webhook', operator: 'NotIn', values: ['ignore'] }] };
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata,
    webhooks: [
      {
        name: 'pod-hook.pmem-csi.intel.com',
        namespaceSelector: ignore,
        objectSelector: ignore,
        failurePolicy: d.spec.mutatePods === 'Always' ? 'Fail' : 'Ignore',
        clientConfig: {
          service: { name: serviceName, namespace: d.namespace, path: '/pod/mutate' },
          caBundle: d.caBundle ?? '',
        },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  } as KubeObject;
}

const env = (name: string, value: string): Record<string, string> => ({ name, value });
const fieldEnv = (name: string, fieldPath: string): Record<string, unknown> => ({
  name,
  valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } },
});
const requests = (cpu: string, memory: string): Record<string, unknown> => ({ requests: { cpu, memory } });
const nodeSelectorArg = (d: GoDeployment): string => JSON.stringify(d.spec.nodeSelector ?? { storage: 'pmem' });

function controllerStatefulSet(d: GoDeployment, metadata: KubeObject['metadata']): KubeObject {
  const p = prefixOf(d.crName);
  const tls = (d.spec.controllerTLSSecret ?? '') !== '';
  const command = [
    '/usr/local/bin/pmem-csi-driver',
    `-v=${d.spec.logLevel ?? 3}`,
    '-logging-format=text',
    '-mode=webhooks',
    '-drivername=$(PMEM_CSI_DRIVER_NAME)',
    `-nodeSelector=${nodeSelectorArg(d)}`,
    ...(tls ? ['-caFile=/certs/ca.crt', '-certFile=/certs/tls.crt', '-keyFile=/certs/tls.key', '-schedulerListen=:8000'] : []),
    '-metricsListen=:10010',
  ];
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata,
    spec: {
      replicas: 1,
      serviceName: `${p}-controller`,
      selector: selector(d, 'pmem-csi-controller'),
      template: {
        metadata: { labels: podLabels(d, 'pmem-csi-controller', 'controller'), annotations: { 'pmem-csi.intel.com/scrape': 'containers' } },
        spec: {
          serviceAccountName: `${p}-webhooks`,
          securityContext: { runAsNonRoot: true, runAsUser: 1000 },
          tolerations: [{ key: 'node-role.kubernetes.io/master', effect: 'NoSchedule' }],
          containers: [
            {
              name: 'pmem-driver',
              image: GO_DRIVER_IMAGE,
              imagePullPolicy: 'IfNotPresent',
              command,
              env: [env('TERMINATION_LOG_PATH', '/dev/termination-log'), env('PMEM_CSI_DRIVER_NAME', d.crName), fieldEnv('POD_NAMESPACE', 'metadata.namespace')],
              ports: [{ name: 'metrics', containerPort: 10010, protocol: 'TCP' }],
              resources: requests('12m', '128Mi'),
              securityContext: { readOnlyRootFilesystem: true },
              ...(tls ? { volumeMounts: [{ name: 'webhook-cert', mountPath: '/certs' }] } : {}),
            },
          ],
          ...(tls ? { volumes: [{ name: 'webhook-cert', secret: { secretName: d.spec.controllerTLSSecret } }] } : {}),
        },
      },
    },
  } as KubeObject;
}

function nodeDaemonSet(d: GoDeployment, metadata: KubeObject['metadata']): KubeObject {
  const kubelet = '/var/lib/kubelet';
  const hostPath = (name: string, path: string): Record<string, unknown> => ({ name, hostPath: { path, type: 'DirectoryOrCreate' } });
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata,
    spec: {
      selector: selector(d, 'pmem-csi-node'),
      template: {
        metadata: { labels: podLabels(d, 'pmem-csi-node', 'node'), annotations: { 'pmem-csi.intel.com/scrape': 'containers' } },
        spec: {
          serviceAccountName: `${prefixOf(d.crName)}-controller`,
          tolerations: [{ key: 'node-role.kubernetes.io/master', effect: 'NoSchedule' }],
          nodeSelector: d.spec.nodeSelector ?? { storage: 'pmem' },
          containers: [
            {
              name: 'pmem-driver',
              image: GO_DRIVER_IMAGE,
              command: [
                '/usr/local/bin/pmem-csi-driver',
                `-deviceManager=${d.spec.deviceMode ?? 'lvm'}`,
                `-v=${d.spec.logLevel ?? 3}`,
                '-logging-format=text',
                '-mode=node',
                '-endpoint=unix:///csi/csi.sock',
                '-nodeid=$(KUBE_NODE_NAME)',
                '-statePath=/var/lib/$(PMEM_CSI_DRIVER_NAME)',
                '-drivername=$(PMEM_CSI_DRIVER_NAME)',
                `-pmemPercentage=${d.spec.pmemPercentage ?? 100}`,
                '-metricsListen=:10010',
              ],
              env: [fieldEnv('KUBE_NODE_NAME', 'spec.nodeName'), env('PMEM_CSI_DRIVER_NAME', d.crName), env('TERMINATION_LOG_PATH', '/tmp/termination-log')],
              volumeMounts: [
                { name: 'mountpoint-dir', mountPath: `${kubelet}/plugins/kubernetes.io/csi`, mountPropagation: 'Bidirectional' },
                { name: 'pods-dir', mountPath: `${kubelet}/pods`, mountPropagation: 'Bidirectional' },
                { name: 'dev-dir', mountPath: '/dev' },
                { name: 'sys-dir', mountPath: '/sys' },
                { name: 'socket-dir', mountPath: '/csi' },
                { name: 'pmem-state-dir', mountPath: `/var/lib/${d.crName}`, mountPropagation: 'Bidirectional' },
              ],
              ports: [{ name: 'metrics', containerPort: 10010, protocol: 'TCP' }],
              resources: requests('100m', '250Mi'),
              securityContext: { privileged: true, runAsUser: 0 },
            },
            {
              name: 'driver-registrar',
              image: GO_REGISTRAR_IMAGE,
              args: [`-v=${d.spec.logLevel ?? 3}`, `--kubelet-registration-path=${kubelet}/plugins/$(PMEM_CSI_DRIVER_NAME)/csi.sock`, '--csi-address=/csi/csi.sock'],
              env: [env('PMEM_CSI_DRIVER_NAME', d.crName)],
              volumeMounts: [
                { name: 'socket-dir', mountPath: '/csi' },
                { name: 'registration-dir', mountPath: '/registration' },
              ],
              resources: requests('12m', '128Mi'),
            },
            {
              name: 'external-provisioner',
              image: GO_PROVISIONER_IMAGE,
              args: [
                `-v=${d.spec.logLevel ?? 3}`,
                '--csi-address=/csi/csi.sock',
                '--feature-gates=Topology=true',
                '--node-deployment=true',
                '--strict-topology=true',
                '--immediate-topology=false',
                '--timeout=5m',
                '--default-fstype=ext4',
                '--worker-threads=5',
                '--metrics-address=:10011',
              ],
              env: [fieldEnv('NODE_NAME', 'spec.nodeName')],
              volumeMounts: [{ name: 'socket-dir', mountPath: '/csi' }],
              ports: [{ name: 'metrics', containerPort: 10011, protocol: 'TCP' }],
              resources: requests('12m', '128Mi'),
            },
          ],
          volumes: [
            hostPath('socket-dir', `${kubelet}/plugins/${d.crName}`),
            hostPath('registration-dir', `${kubelet}/plugins_registry/`),
            hostPath('mountpoint-dir', `${kubelet}/plugins/kubernetes.io/csi`),
            hostPath('pods-dir', `${kubelet}/pods`),
            hostPath('pmem-state-dir', `/var/lib/${d.crName}`),
            hostPath('dev-dir', '/dev'),
            hostPath('sys-dir', '/sys'),
          ],
        },
      },
    },
  } as KubeObject;
}

function nodeSetupDaemonSet(d: GoDeployment, metadata: KubeObject['metadata']): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata,
    spec: {
      selector: selector(d, 'pmem-csi-node-setup'),
      template: {
        metadata: { labels: podLabels(d, 'pmem-csi-node-setup', 'node-setup') },
        spec: {
          serviceAccountName: `${prefixOf(d.crName)}-node-setup`,
          // Runs only where an administrator asked for the conversion of raw namespaces.
          nodeSelector: { [`${d.crName}/convert-raw-namespaces`]: 'force' },
          containers: [
            {
              name: 'pmem-driver',
              image: GO_DRIVER_IMAGE,
              command: [
                '/usr/local/bin/pmem-csi-driver',
                `-v=${d.spec.logLevel ?? 3}`,
                '-logging-format=text',
                '-mode=force-convert-raw-namespaces',
                `-nodeSelector=${nodeSelectorArg(d)}`,
                '-nodeid=$(KUBE_NODE_NAME)',
              ],
              env: [fieldEnv('KUBE_NODE_NAME', 'spec.nodeName')],
              securityContext: { privileged: true, runAsUser: 0 },
            },
          ],
        },
      },
    },
  } as KubeObject;
}

/** The PmemCSIDeployment as the Go user stored it (spec only; the status comes with goStatus). */
export function goCustomResource(name: string, spec: GoSpec): KubeObject {
  return { apiVersion: API_GROUP_VERSION, kind: KIND, metadata: { name }, spec } as KubeObject;
}

/** The status the Go operator v1.x wrote for a running deployment (its only condition: DriverDeployed). */
export function goStatus(now: Date, nodes: number): Record<string, unknown> {
  const at = now.toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    phase: 'Running',
    reason: 'All driver components are deployed successfully',
    conditions: [{ type: 'DriverDeployed', status: 'True', reason: 'Driver deployed successfully.', lastUpdateTime: at }],
    driverComponents: [
      { component: 'Controller', status: 'Ready', reason: '1 instance(s) of controller driver is running successfully', lastUpdated: at },
      { component: 'Node', status: 'Ready', reason: `All ${nodes} node driver pod(s) running successfully`, lastUpdated: at },
    ],
    lastUpdated: at,
  };
}

/**
 * The Go operator's CRD, reduced to what this test needs (same names, version and subresource; its
 * v1.x spec fields with their types; its condition shape with lastUpdateTime), so that the CRs and
 * their status are stored as the Go operator stored them before our CRD replaces it.
 */
export function goOperatorCrd(): KubeObject {
  const str = { type: 'string' };
  const int = { type: 'integer' };
  const resources = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: {
      group: API_GROUP,
      scope: 'Cluster',
      names: { kind: KIND, listKind: LIST_KIND, plural: PLURAL, singular: SINGULAR, shortNames: SHORT_NAMES },
      versions: [
        {
          name: API_GROUP_VERSION.split('/')[1],
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: str,
                kind: str,
                metadata: { type: 'object' },
                spec: {
                  type: 'object',
                  properties: {
                    image: str,
                    imagePullPolicy: str,
                    provisionerImage: str,
                    nodeRegistrarImage: str,
                    provisionerResources: resources,
                    nodeRegistrarResources: resources,
                    nodeDriverResources: resources,
                    controllerDriverResources: resources,
                    controllerTLSSecret: str,
                    mutatePods: { type: 'string', enum: ['Always', 'Try', 'Never'] },
                    schedulerNodePort: { type: 'integer', format: 'int32' },
                    deviceMode: { type: 'string', enum: ['lvm', 'direct'] },
                    logLevel: int,
                    logFormat: { type: 'string', enum: ['text', 'json'] },
                    nodeSelector: { type: 'object', additionalProperties: str },
                    pmemPercentage: { type: 'integer', minimum: 0, maximum: 100 },
                    labels: { type: 'object', additionalProperties: str },
                    kubeletDir: str,
                  },
                },
                status: {
                  type: 'object',
                  properties: {
                    phase: str,
                    reason: str,
                    conditions: {
                      type: 'array',
                      items: {
                        type: 'object',
                        required: ['type', 'status'],
                        properties: { type: str, status: str, reason: str, lastUpdateTime: { type: 'string', format: 'date-time', nullable: true } },
                      },
                    },
                    driverComponents: {
                      type: 'array',
                      items: {
                        type: 'object',
                        required: ['component', 'status', 'reason'],
                        properties: { component: str, status: str, reason: str, lastUpdated: { type: 'string', format: 'date-time', nullable: true } },
                      },
                    },
                    lastUpdated: { type: 'string', format: 'date-time', nullable: true },
                  },
                },
              },
            },
          },
        },
      ],
    },
  } as KubeObject;
}
