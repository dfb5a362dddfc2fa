// kustomize bases of a release: the CRD, the driver namespace and the operator from
// deploy/kustomize, with the operator's image and its default driver image (an argument of the
// operator, which the images transformer does not see) pinned to the released digests.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { REPO_ROOT } from '../cluster/components.js';
import { runReleaseTool } from './release-tools.js';

export const KUSTOMIZE_BASES = ['crd', 'driver-namespace', 'operator'] as const;
const DRIVER_IMAGE_ARG = '--driver-image=';

export interface PinnedImages {
  readonly operator: { readonly repository: string; readonly digest: string };
  readonly driver: { readonly repository: string; readonly digest: string };
}

interface DeploymentDoc {
  kind?: string;
  spec?: { template?: { spec?: { containers?: { args?: string[] }[] } } };
}

/** Index and value of the operator's --driver-image argument in deploy/kustomize/operator/operator.yaml. */
export function driverImageArg(operatorYaml: string): { index: number; value: string } {
  for (const doc of parseAllDocuments(operatorYaml)) {
    const obj = doc.toJS() as DeploymentDoc | null;
    if (obj?.kind !== 'Deployment') continue;
    const args = obj.spec?.template?.spec?.containers?.[0]?.args ?? [];
    const index = args.findIndex((a) => a.startsWith(DRIVER_IMAGE_ARG));
    if (index >= 0) return { index, value: args[index] ?? '' };
  }
  throw new Error(`the operator Deployment has no ${DRIVER_IMAGE_ARG} argument`);
}

/** Write `<out>/<base>` for each base; the operator's kustomization pins both images by digest. */
export function writeKustomizeBases(out: string, version: string, images: PinnedImages): void {
  for (const base of KUSTOMIZE_BASES) {
    const dir = join(out, base);
    mkdirSync(dir, { recursive: true });
    cpSync(join(REPO_ROOT, 'deploy/kustomize', base), dir, { recursive: true });
  }
  const driverRef = `${images.driver.repository}@${images.driver.digest}`;
  const arg = driverImageArg(readFileSync(join(out, 'operator', 'operator.yaml'), 'utf8'));
  const argPath = `/spec/template/spec/containers/0/args/${arg.index}`;
  const kustomization = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: ['namespace.yaml', 'operator.yaml'],
    images: [{ name: 'pmem-csi-operator', newName: images.operator.repository, digest: images.operator.digest }],
    patches: [
      {
        target: { kind: 'Deployment', name: 'pmem-csi-operator' },
        patch: stringify([
          { op: 'test', path: argPath, value: arg.value },
          { op: 'replace', path: argPath, value: `${DRIVER_IMAGE_ARG}${driverRef}` },
        ]),
      },
    ],
  };
  writeFileSync(
    join(out, 'operator', 'kustomization.yaml'),
    `# PMEM-CSI ${version}: the operator with its image and default driver image pinned by digest.\n${stringify(kustomization, { lineWidth: 0 })}`,
  );
}

/** kustomize build of the operator base must name both images by digest and no image by tag. */
export async function checkOperatorBase(
  kustomize: string,
  env: Readonly<Record<string, string>>,
  out: string,
  images: PinnedImages,
): Promise<string> {
  const built = (await runReleaseTool(kustomize, ['build', join(out, 'operator')], env, 60_000)).stdout;
  const want = [
    `image: ${images.operator.repository}@${images.operator.digest}`,
    `${DRIVER_IMAGE_ARG}${images.driver.repository}@${images.driver.digest}`,
  ];
  const missing = want.filter((w) => !built.includes(w));
  if (missing.length > 0) throw new Error(`kustomize build ${join(out, 'operator')} lacks ${missing.join(' and ')}`);
  return built;
}
