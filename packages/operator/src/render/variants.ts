// The install variants and where their manifests live (paths relative to the repository root).
// tools/gen-deploy.ts writes them; the e2e suites (kustomize build, Helm, a cluster's server-side
// dry-run) read them through renderedManifestPaths() and the variant lists.
import type { DeviceMode, PmemCSIDeploymentSpec } from '@pmem-csi/api';

/**
 * The operator-less driver profiles: testing logs at --v=5 (driver and sidecars); production-ha is
 * production with two controller replicas (issue 17: leader election picks the active one, rolling
 * updates, a PodDisruptionBudget).
 */
export type DriverProfile = 'production' | 'testing' | 'production-ha';

export interface DriverVariant {
  /** e.g. "lvm-production"; the directory name under deploy/kubernetes. */
  readonly id: string;
  readonly deviceMode: DeviceMode;
  readonly profile: DriverProfile;
  /** The PmemCSIDeployment spec the manifests are built from (an operator given it builds the same). */
  readonly spec: PmemCSIDeploymentSpec;
  /** The kustomize base. */
  readonly kustomizeDir: string;
  /** `kustomize build <kustomizeDir>`, committed. */
  readonly renderedFile: string;
}

export const DEPLOY_DIR = 'deploy';
export const KUSTOMIZE_DIR = `${DEPLOY_DIR}/kustomize`;
export const RENDERED_DIR = `${DEPLOY_DIR}/kubernetes`;
export const HELM_CHART_DIR = `${DEPLOY_DIR}/helm/pmem-csi`;
export const RENDERED_FILE_NAME = 'pmem-csi.yaml';

const PROFILE_SPEC: Readonly<Record<DriverProfile, PmemCSIDeploymentSpec>> = {
  production: {},
  testing: { logLevel: 5 },
  'production-ha': { controllerReplicas: 2 },
};

function driverVariant(deviceMode: DeviceMode, profile: DriverProfile): DriverVariant {
  const id = `${deviceMode}-${profile}`;
  return {
    id,
    deviceMode,
    profile,
    spec: { deviceMode, ...PROFILE_SPEC[profile] },
    kustomizeDir: `${KUSTOMIZE_DIR}/driver/${deviceMode}/${profile}`,
    renderedFile: `${RENDERED_DIR}/${id}/${RENDERED_FILE_NAME}`,
  };
}

export const DRIVER_VARIANTS: readonly DriverVariant[] = [
  ...(['lvm', 'direct'] as const).flatMap((mode) =>
    (['production', 'testing'] as const).map((profile) => driverVariant(mode, profile)),
  ),
  // NOT persistent memory: volumes are loop-backed sparse files in /var/lib/<driver>/emulated on the
  // node's disk. For trying the stack on nodes without PMEM and for the real-node tests, so only
  // the testing profile (there is no production use).
  driverVariant('emulated', 'testing'),
  // A highly available controller, in the device mode that production clusters use.
  driverVariant('lvm', 'production-ha'),
];

/** The kustomize bases that are not driver variants. */
export const KUSTOMIZE_BASES = {
  /** The CRD (a copy of deploy/crd): apply once, never delete while drivers exist. */
  crd: `${KUSTOMIZE_DIR}/crd`,
  /** The drivers' namespace, separate so that removing the operator never deletes it. */
  driverNamespace: `${KUSTOMIZE_DIR}/driver-namespace`,
  /** The operator: its namespace, ServiceAccount, RBAC and Deployment. */
  operator: `${KUSTOMIZE_DIR}/operator`,
  /** StorageClasses, PVCs and pods (hand-written). */
  examples: `${KUSTOMIZE_DIR}/examples`,
  /** Overlay of the operator base with images from another registry (hand-written). */
  operatorRegistryExample: `${KUSTOMIZE_DIR}/examples/operator-registry`,
} as const;

export const OPERATOR_RENDERED_FILE = `${RENDERED_DIR}/operator/${RENDERED_FILE_NAME}`;

/** Every committed `kustomize build` output: the operator's and each driver variant's. */
export function renderedManifestPaths(): string[] {
  return [OPERATOR_RENDERED_FILE, ...DRIVER_VARIANTS.map((v) => v.renderedFile)];
}

/** Every kustomize directory that must build, with its committed output where there is one. */
export function kustomizeTargets(): { readonly dir: string; readonly renderedFile?: string }[] {
  return [
    { dir: KUSTOMIZE_BASES.crd },
    { dir: KUSTOMIZE_BASES.driverNamespace },
    { dir: KUSTOMIZE_BASES.operator, renderedFile: OPERATOR_RENDERED_FILE },
    ...DRIVER_VARIANTS.map((v) => ({ dir: v.kustomizeDir, renderedFile: v.renderedFile })),
    { dir: KUSTOMIZE_BASES.examples },
    { dir: KUSTOMIZE_BASES.operatorRegistryExample },
  ];
}
