// How the real-node and k8s-storage tiers install the stack as users do: `helm install` of the
// chart with the operator, the PmemCSIDeployment created by the chart, our images (never pulled).
// One place for the chart's values, so that both tiers test the same install.
import { join } from 'node:path';
import { DEFAULT_DRIVER_NAME } from '@pmem-csi/api';
import { REPO_ROOT } from '../cluster/components.js';
import { clusterHelm, type KwokCluster } from '../cluster/harness.js';
import { crRef } from '../cluster/pmem-deployment.js';
import { waitFor } from '../cluster/wait.js';

export const CHART = join(REPO_ROOT, 'deploy/helm/pmem-csi');
export const RELEASE = 'pmem-csi';
export const OPERATOR_NAMESPACE = 'pmem-csi-operator';
export const DRIVER_NAMESPACE = 'pmem-csi';
/** The PmemCSIDeployment the chart creates: named after the driver, as the README's install does. */
export const CR_NAME = DEFAULT_DRIVER_NAME;

/** "repo/name:tag" -> ["repo/name", "tag"] (the registry part may carry a port: the last colon splits). */
export function splitRef(ref: string): [string, string] {
  const at = ref.lastIndexOf(':');
  return [ref.slice(0, at), ref.slice(at + 1)];
}

/** The stack's images by their e2e/tools/images.sh names. */
export type StackImage = 'operator' | 'driver' | 'csi-provisioner' | 'csi-resizer' | 'registrar';

/**
 * The PmemCSIDeployment spec of the tiers: emulated mode on nodes labelled storage=pmem, our
 * sidecar images (pull policy Never); the driver image is the operator's default.
 */
export function deploymentSpec(ref: (name: StackImage) => string, emulatedSize: string): Record<string, unknown> {
  return {
    deviceMode: 'emulated',
    emulatedSize,
    nodeSelector: { storage: 'pmem' },
    provisionerImage: ref('csi-provisioner'),
    resizerImage: ref('csi-resizer'),
    nodeRegistrarImage: ref('registrar'),
    imagePullPolicy: 'Never',
    logLevel: 4,
  };
}

/**
 * `helm install` arguments: the operator and driver images (pull policy Never), the
 * PmemCSIDeployment in emulated mode on nodes labelled storage=pmem with our sidecar images;
 * `ref` gives an image's reference as built.
 */
export function helmInstallArgs(
  ref: (name: StackImage) => string,
  emulatedSize: string,
  options: {
    /** false: the chart creates no PmemCSIDeployment (one exists already, e.g. the Go operator's user's). */
    readonly createDeployment?: boolean;
    /** driver.createNamespace false: the driver namespace exists already (e.g. the Go operator's). */
    readonly driverNamespaceExists?: boolean;
  } = {},
): string[] {
  const [opRepo, opTag] = splitRef(ref('operator'));
  const [drvRepo, drvTag] = splitRef(ref('driver'));
  const spec = deploymentSpec(ref, emulatedSize);
  const values: Array<[string, string]> = [
    ['operator.image.repository', opRepo],
    ['operator.image.tag', opTag],
    ['operator.image.pullPolicy', 'Never'],
    ['driver.image.repository', drvRepo],
    ['driver.image.tag', drvTag],
    ['deployment.create', String(options.createDeployment ?? true)],
    ['deployment.name', CR_NAME],
    ...(options.driverNamespaceExists === true
      ? ([
          ['driver.namespace', DRIVER_NAMESPACE],
          ['driver.createNamespace', 'false'],
        ] as Array<[string, string]>)
      : []),
  ];
  return [
    'install',
    RELEASE,
    CHART,
    '--namespace',
    OPERATOR_NAMESPACE,
    '--create-namespace',
    ...values.flatMap(([k, v]) => ['--set', `${k}=${v}`]),
    ...(options.createDeployment === false ? [] : ['--set-json', `deployment.spec=${JSON.stringify(spec)}`]),
    '--wait',
    '--timeout',
    '180s',
  ];
}

/**
 * Remove the stack as a user would: `helm uninstall` (the operator), then the PmemCSIDeployment,
 * which helm keeps (resource-policy keep) and whose deletion removes the driver; waits for the
 * driver's pods to be gone. Best effort: the teardown's own checks judge what is left.
 */
export async function uninstallStack(cluster: KwokCluster): Promise<void> {
  await clusterHelm(cluster)(
    ['uninstall', RELEASE, '--namespace', OPERATOR_NAMESPACE, '--wait', '--timeout', '120s'],
    180_000,
  ).catch(() => '');
  await cluster.kube.delete(crRef(CR_NAME)).catch(() => false);
  await waitFor(
    'the driver pods to be gone',
    async () =>
      (await cluster.kube.list('v1', 'Pod', { namespace: DRIVER_NAMESPACE })).length === 0 ? true : undefined,
    { timeoutMs: 120_000 },
  ).catch(() => undefined);
}
