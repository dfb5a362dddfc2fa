// The PmemCSIDeployment side of the cluster tier: installing the CRD, building CRs, reading their
// status, and the list of objects the operator must have built for a CR (from the api package's
// names, so that a renamed object is a test failure, not a silent pass).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import {
  API_GROUP_VERSION,
  CRD_NAME,
  KIND,
  LABEL_KEYS,
  FIELD_MANAGER,
  deploymentObjectNames,
  type PmemCSIDeploymentSpec,
  type PmemCSIDeploymentStatus,
} from '@pmem-csi/api';
import { REPO_ROOT, DRIVER_NAMESPACE } from './components.js';
import { describeRef, readYamlObjects, type Kube, type KubeObject, type Ref } from './kube.js';
import { WaitTimeoutError, waitFor } from './wait.js';

export const CRD_FILE = join(REPO_ROOT, 'deploy/crd/pmem-csi.intel.com_pmemcsideployments.yaml');

/** The annotation every built object carries with the version of the operator that built it. */
export const VERSION_ANNOTATION = 'pmem-csi.intel.com/operator-version';

export interface PmemDeployment extends KubeObject {
  spec?: PmemCSIDeploymentSpec;
  status?: PmemCSIDeploymentStatus;
}

export const crRef = (name: string): Ref => ({ apiVersion: API_GROUP_VERSION, kind: KIND, name });

export function pmemDeployment(name: string, spec: PmemCSIDeploymentSpec = {}): PmemDeployment {
  return { apiVersion: API_GROUP_VERSION, kind: KIND, metadata: { name }, spec };
}

/** Apply the generated CRD and wait until the apiserver serves it. */
export async function installCrd(kube: Kube): Promise<void> {
  for (const o of readYamlObjects(CRD_FILE)) await kube.apply(o);
  await waitCrdEstablished(kube);
}

/** Wait until the apiserver serves the PmemCSIDeployment CRD (ours or the Go operator's: one name). */
export async function waitCrdEstablished(kube: Kube, which = 'CRD'): Promise<void> {
  await waitFor(
    `${which} ${CRD_NAME} to be Established`,
    async () => {
      const crd = await kube.get<KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }>({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: CRD_NAME,
      });
      return crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    },
    { timeoutMs: 30_000 },
  );
}

/**
 * Wait until the control plane's garbage collector deletes dependents of PmemCSIDeployments. Right
 * after the CRD is installed it cannot yet map the kind (it learns new resources from discovery,
 * about every 30 s); a dependent whose owner it cannot look up is retried with a per-object backoff
 * that doubles, so one deleted owner's objects may linger for minutes — long enough to fail a test
 * that times the takeover of a deleted CR's objects. The probe: a ConfigMap owned by a
 * PmemCSIDeployment that does not exist, which the collector deletes once it can tell; each probe
 * gets `probeMs`, then it is removed and a new one (with a backoff of its own) made, until one is
 * collected or `timeoutMs` has passed.
 */
export async function waitGcKnowsPmemDeployments(
  kube: Kube,
  o: { namespace?: string; timeoutMs?: number; probeMs?: number } = {},
): Promise<number> {
  const { namespace = 'default', timeoutMs = 240_000, probeMs = 35_000 } = o;
  const started = Date.now();
  for (let probe = 1; Date.now() - started < timeoutMs; probe++) {
    const ref: Ref = { apiVersion: 'v1', kind: 'ConfigMap', name: `gc-probe-${probe}-${Date.now()}`, namespace };
    await kube.create({
      ...ref,
      metadata: {
        name: ref.name,
        namespace,
        ownerReferences: [{ apiVersion: API_GROUP_VERSION, kind: KIND, name: 'gc-probe-absent', uid: randomUUID() }],
      },
    });
    const window = Math.min(probeMs, timeoutMs - (Date.now() - started));
    const gone = await waitFor(
      `the garbage collector to delete ${describeRef(ref)} (owned by a PmemCSIDeployment that does not exist)`,
      async () => ((await kube.get(ref)) === undefined ? true : undefined),
      { timeoutMs: Math.max(window, 1000), intervalMs: 250 },
    ).catch((e: unknown) => {
      if (e instanceof WaitTimeoutError) return false;
      throw e;
    });
    if (gone) return Date.now() - started;
    await kube.delete(ref);
  }
  throw new WaitTimeoutError(
    'the garbage collector to delete a dependent of a PmemCSIDeployment that does not exist',
    timeoutMs,
    'every probe ConfigMap outlived its window',
  );
}

/**
 * Every object the operator builds for CR `name` (namespaced ones in `namespace`); with two or more
 * controller replicas also the controller's PodDisruptionBudget.
 */
export function expectedObjects(
  name: string,
  namespace: string = DRIVER_NAMESPACE,
  { controllerReplicas = 1 }: { controllerReplicas?: number } = {},
): Ref[] {
  const n = deploymentObjectNames(name);
  const ns = (apiVersion: string, kind: string, objectName: string): Ref => ({
    apiVersion,
    kind,
    name: objectName,
    namespace,
  });
  const cluster = (apiVersion: string, kind: string, objectName: string): Ref => ({
    apiVersion,
    kind,
    name: objectName,
  });
  return [
    ns('v1', 'Secret', n.caSecret),
    ns('v1', 'Secret', n.registrySecret),
    ns('v1', 'Secret', n.nodeSecret),
    ns('v1', 'ServiceAccount', n.controllerServiceAccount),
    ns('v1', 'ServiceAccount', n.nodeServiceAccount),
    cluster('rbac.authorization.k8s.io/v1', 'ClusterRole', n.provisionerClusterRole),
    cluster('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', n.provisionerClusterRoleBinding),
    ns('rbac.authorization.k8s.io/v1', 'Role', n.provisionerRole),
    ns('rbac.authorization.k8s.io/v1', 'RoleBinding', n.provisionerRoleBinding),
    cluster('rbac.authorization.k8s.io/v1', 'ClusterRole', n.resizerClusterRole),
    cluster('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', n.resizerClusterRoleBinding),
    ns('rbac.authorization.k8s.io/v1', 'Role', n.resizerRole),
    ns('rbac.authorization.k8s.io/v1', 'RoleBinding', n.resizerRoleBinding),
    ns('v1', 'Service', n.registryService),
    ns('v1', 'Service', n.metricsService),
    cluster('storage.k8s.io/v1', 'CSIDriver', n.csiDriver),
    ns('apps/v1', 'Deployment', n.controllerDeployment),
    ns('apps/v1', 'DaemonSet', n.nodeDaemonSet),
    ...(controllerReplicas >= 2 ? [ns('policy/v1', 'PodDisruptionBudget', n.controllerDisruptionBudget)] : []),
  ];
}

export const workloadRefs = (
  name: string,
  namespace: string = DRIVER_NAMESPACE,
): { deployment: Ref; daemonSet: Ref } => {
  const n = deploymentObjectNames(name);
  return {
    deployment: { apiVersion: 'apps/v1', kind: 'Deployment', name: n.controllerDeployment, namespace },
    daemonSet: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: n.nodeDaemonSet, namespace },
  };
};

/** The objects that exist of `refs`, by "Kind ns/name". */
export async function existing(kube: Kube, refs: readonly Ref[]): Promise<Map<string, KubeObject>> {
  const found = new Map<string, KubeObject>();
  for (const ref of refs) {
    const o = await kube.get(ref);
    if (o !== undefined) found.set(describeRef(ref), o);
  }
  return found;
}

/** The label selector of everything the operator built for CR `name`. */
export const ownedSelector = (name: string): string =>
  `${LABEL_KEYS.instance}=${name},${LABEL_KEYS.managedBy}=${FIELD_MANAGER}`;

const condition = (cr: PmemDeployment | undefined, type: string): { status: string; reason: string } | undefined =>
  cr?.status?.conditions?.find((c) => c.type === type);

/** A one-line view of a CR's status for wait messages. */
export function describeStatus(cr: PmemDeployment | undefined): string {
  if (cr === undefined) return 'CR absent';
  const s = cr.status;
  if (s === undefined) return 'no status yet';
  const conds = (s.conditions ?? []).map((c) => `${c.type}=${c.status}(${c.reason})`).join(' ');
  return `phase="${s.phase ?? ''}" ${conds}; ${s.reason ?? ''}`;
}

/** Wait until the CR's status satisfies `ok` (described by `what` in the timeout message). */
export async function waitStatus(
  kube: Kube,
  name: string,
  until: { what: string; ok: (cr: PmemDeployment) => boolean; timeoutMs?: number },
): Promise<PmemDeployment> {
  let last: PmemDeployment | undefined;
  return waitFor(
    `PmemCSIDeployment ${name}: ${until.what}`,
    async () => {
      last = await kube.get<PmemDeployment>(crRef(name));
      return last !== undefined && until.ok(last) ? last : undefined;
    },
    { timeoutMs: until.timeoutMs ?? 90_000, describe: () => describeStatus(last) },
  );
}

export const conditionIs = (cr: PmemDeployment, type: string, status: string): boolean =>
  condition(cr, type)?.status === status;
