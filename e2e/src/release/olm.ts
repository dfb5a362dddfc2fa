// The OLM bundle of a release (registry+v1 format): manifests/ with the ClusterServiceVersion and
// the CRD, metadata/annotations.yaml. The CSV is built from the operator's kustomize base (the
// same objects the chart installs): its ClusterRole becomes clusterPermissions, its Role (in the
// drivers' namespace) permissions, its Deployment the install strategy. Under OLM the operator
// and its drivers share the namespace the bundle is installed into (install mode OwnNamespace),
// because OLM grants a CSV's permissions in that namespace only: the driver namespace argument
// is the pod's own namespace.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { REPO_ROOT } from '../cluster/components.js';

export const OLM_PACKAGE = 'pmem-csi-operator';
/** Channel of a version (the naming OLM recommends): pre-releases on candidate, releases on stable. */
export function olmChannel(version: string): string {
  return version.includes('-') ? 'candidate' : 'stable';
}
export const CRD_FILE = 'pmem-csi.intel.com_pmemcsideployments.yaml';
const CRD_NAME = 'pmemcsideployments.pmem-csi.intel.com';
const OPERATOR_PACKAGE_SA = 'pmem-csi-operator';
const OPERATOR_YAML = join(REPO_ROOT, 'deploy/kustomize/operator/operator.yaml');
const CRD_SOURCE = join(REPO_ROOT, 'deploy/crd', CRD_FILE);
/** Minimum Kubernetes of the chart (Chart.yaml kubeVersion >=1.25.0-0). */
export const MIN_KUBE_VERSION = '1.25.0';

type Obj = Record<string, unknown>;

interface K8sDoc {
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  rules?: unknown[];
  spec?: DeploymentSpec;
}
interface Container {
  name?: string;
  image?: string;
  args?: string[];
}
interface DeploymentSpec {
  template?: { spec?: { serviceAccountName?: string; containers?: Container[] } };
  [key: string]: unknown;
}

export interface BundleInput {
  readonly version: string;
  /** repository@sha256:... of each image. */
  readonly operatorImage: string;
  readonly driverImage: string;
  /** ISO time of the release commit (reproducible, unlike the time of the run). */
  readonly createdAt: string;
  /** The previous release version, whose CSV this one replaces (upgrade edge). */
  readonly replaces?: string;
}

export function csvName(version: string): string {
  return `${OLM_PACKAGE}.v${version}`;
}

/** A plain icon (SVG) so that the console shows something; OperatorHub warns without one. */
const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="8" fill="#0068b5"/>' +
  '<text x="32" y="40" font-family="sans-serif" font-size="16" text-anchor="middle" fill="#fff">PMEM</text></svg>';

const DESCRIPTION = `PMEM-CSI is a Container Storage Interface driver for persistent memory (PMEM):
volumes are logical volumes (lvm mode) or namespaces (direct mode) on the PMEM of the node, with
DAX for applications that map them. The operator deploys, heals and upgrades drivers described by
PmemCSIDeployment objects (cluster-scoped); each driver runs in the namespace the operator is
installed in, which needs Pod Security "privileged" (the node driver manages devices and mounts).
Label the nodes that have PMEM (storage=pmem), then create a PmemCSIDeployment.`;

function operatorObjects(): { clusterRules: unknown[]; rules: unknown[]; deployment: K8sDoc } {
  let clusterRules: unknown[] | undefined;
  let rules: unknown[] | undefined;
  let deployment: K8sDoc | undefined;
  for (const doc of parseAllDocuments(readFileSync(OPERATOR_YAML, 'utf8'))) {
    const obj = doc.toJS() as K8sDoc | null;
    if (obj?.kind === 'ClusterRole') clusterRules = obj.rules;
    else if (obj?.kind === 'Role') rules = obj.rules;
    else if (obj?.kind === 'Deployment') deployment = obj;
  }
  if (clusterRules === undefined || rules === undefined || deployment?.spec === undefined)
    throw new Error(`${OPERATOR_YAML}: expected a ClusterRole, a Role and a Deployment`);
  return { clusterRules, rules, deployment };
}

/** The operator's Deployment spec with the release images and the driver namespace = its own. */
function deploymentSpec(deployment: K8sDoc, input: BundleInput): DeploymentSpec {
  const spec = structuredClone(deployment.spec) as DeploymentSpec;
  const container = spec.template?.spec?.containers?.[0];
  if (container?.args === undefined) throw new Error(`${OPERATOR_YAML}: the operator container has no args`);
  container.image = input.operatorImage;
  container.args = container.args.map((a) =>
    a.startsWith('--namespace=')
      ? '--namespace=$(POD_NAMESPACE)'
      : a.startsWith('--driver-image=')
        ? `--driver-image=${input.driverImage}`
        : a,
  );
  return spec;
}

/** The ClusterServiceVersion of a release. */
export function buildCsv(input: BundleInput): Obj {
  const { clusterRules, rules, deployment } = operatorObjects();
  const spec = deploymentSpec(deployment, input);
  const serviceAccountName = spec.template?.spec?.serviceAccountName ?? OPERATOR_PACKAGE_SA;
  const example = {
    apiVersion: 'pmem-csi.intel.com/v1beta1',
    kind: 'PmemCSIDeployment',
    metadata: { name: 'pmem-csi.intel.com' },
    spec: { deviceMode: 'lvm', nodeSelector: { storage: 'pmem' } },
  };
  const namespaceTemplate = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'pmem-csi', labels: { 'pod-security.kubernetes.io/enforce': 'privileged' } },
  };
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: {
      name: csvName(input.version),
      namespace: 'placeholder',
      annotations: {
        'alm-examples': JSON.stringify([example]),
        capabilities: 'Seamless Upgrades',
        categories: 'Storage',
        containerImage: input.operatorImage,
        createdAt: input.createdAt,
        description: 'Persistent memory (PMEM) volumes for Kubernetes: the PMEM-CSI driver and its operator.',
        'operatorframework.io/suggested-namespace-template': JSON.stringify(namespaceTemplate),
      },
    },
    spec: {
      displayName: 'PMEM-CSI',
      description: DESCRIPTION,
      version: input.version,
      ...(input.replaces === undefined ? {} : { replaces: csvName(input.replaces) }),
      maturity: 'alpha',
      minKubeVersion: MIN_KUBE_VERSION,
      keywords: ['csi', 'storage', 'pmem', 'persistent-memory'],
      provider: { name: 'PMEM-CSI' },
      icon: [{ base64data: Buffer.from(ICON_SVG).toString('base64'), mediatype: 'image/svg+xml' }],
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: false },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: false },
      ],
      customresourcedefinitions: {
        owned: [
          {
            name: CRD_NAME,
            version: 'v1beta1',
            kind: 'PmemCSIDeployment',
            displayName: 'PMEM-CSI deployment',
            description: 'One PMEM-CSI driver: its device mode, the nodes it runs on, its images and resources.',
          },
        ],
      },
      install: {
        strategy: 'deployment',
        spec: {
          clusterPermissions: [{ serviceAccountName, rules: clusterRules }],
          permissions: [{ serviceAccountName, rules }],
          deployments: [
            { name: deployment.metadata?.name ?? OPERATOR_PACKAGE_SA, label: deployment.metadata?.labels ?? {}, spec },
          ],
        },
      },
      relatedImages: [
        { name: 'pmem-csi-operator', image: input.operatorImage },
        { name: 'pmem-csi-driver', image: input.driverImage },
      ],
    },
  };
}

export function annotations(version: string): Record<string, string> {
  return {
    'operators.operatorframework.io.bundle.mediatype.v1': 'registry+v1',
    'operators.operatorframework.io.bundle.manifests.v1': 'manifests/',
    'operators.operatorframework.io.bundle.metadata.v1': 'metadata/',
    'operators.operatorframework.io.bundle.package.v1': OLM_PACKAGE,
    'operators.operatorframework.io.bundle.channels.v1': olmChannel(version),
    'operators.operatorframework.io.bundle.channel.default.v1': olmChannel(version),
  };
}

/** Write the bundle into `dir` (manifests/, metadata/); returns the CSV file. */
export function writeBundle(dir: string, input: BundleInput): string {
  mkdirSync(join(dir, 'manifests'), { recursive: true });
  mkdirSync(join(dir, 'metadata'), { recursive: true });
  const csvFile = join(dir, 'manifests', `${OLM_PACKAGE}.clusterserviceversion.yaml`);
  writeFileSync(csvFile, stringify(buildCsv(input), { lineWidth: 0 }));
  // The CRD file as generated (its header comment says where it comes from).
  copyFileSync(CRD_SOURCE, join(dir, 'manifests', CRD_FILE));
  writeFileSync(join(dir, 'metadata', 'annotations.yaml'), stringify({ annotations: annotations(input.version) }));
  return csvFile;
}
