// Every kustomize directory builds with the real kustomize, its output is the committed rendered
// file where there is one, and the overlays and examples do what their comments say.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DEFAULT_DRIVER_IMAGE, DRIVER_VARIANTS, KUSTOMIZE_BASES, kustomizeTargets, renderedManifestPaths } from '@pmem-csi/operator';
import { REPO_ROOT, byIdentity, kustomizeBuild, parseManifests, renderAllOutputs } from './render.js';

describe('kustomize build', () => {
  for (const target of kustomizeTargets()) {
    it(`builds ${target.dir}${target.renderedFile === undefined ? '' : ` into ${target.renderedFile}`}`, () => {
      const built = parseManifests(kustomizeBuild(target.dir));
      expect(built.length).toBeGreaterThan(0);
      if (target.renderedFile !== undefined) {
        expect(byIdentity(built)).toEqual(byIdentity(parseManifests(readFileSync(join(REPO_ROOT, target.renderedFile), 'utf8'))));
      }
    });
  }

  it('the operator-registry overlay moves both images to the registry', () => {
    const built = parseManifests(kustomizeBuild(KUSTOMIZE_BASES.operatorRegistryExample));
    const container = (built.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { image: string; args: string[] }[] } } } }).spec.template.spec.containers[0];
    expect(container?.image).toBe('registry.example.com/pmem/pmem-csi-operator:0.1.0');
    expect(container?.args).toContain(`--driver-image=registry.example.com/pmem/${DEFAULT_DRIVER_IMAGE}`);
    expect(container?.args.filter((a) => a.startsWith('--driver-image='))).toHaveLength(1);
  });

  it('the examples are five StorageClasses (one for Kata Containers), four PVCs and four pods', () => {
    const kinds = parseManifests(kustomizeBuild(KUSTOMIZE_BASES.examples)).map((o) => o.kind);
    expect(kinds.filter((k) => k === 'StorageClass')).toHaveLength(5);
    expect(kinds.filter((k) => k === 'PersistentVolumeClaim')).toHaveLength(4);
    expect(kinds.filter((k) => k === 'Pod')).toHaveLength(4);
  });

  it('a driver base takes a registry with the images transformer (as the README says)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pmem-csi-overlay-'));
    try {
      const base = relative(dir, join(REPO_ROOT, DRIVER_VARIANTS[0]?.kustomizeDir ?? ''));
      writeFileSync(join(dir, 'kustomization.yaml'), `resources:\n  - ${base}\nimages:\n  - name: pmem-csi-driver\n    newName: registry.example.com/pmem/pmem-csi-driver\n`);
      const images = parseManifests(kustomizeBuild(dir)).flatMap(
        (o) => (o as unknown as { spec?: { template?: { spec: { containers: { image: string }[] } } } }).spec?.template?.spec.containers.map((c) => c.image) ?? [],
      );
      expect(images.filter((i) => i.startsWith('registry.example.com/pmem/'))).toEqual([`registry.example.com/pmem/${DEFAULT_DRIVER_IMAGE}`, `registry.example.com/pmem/${DEFAULT_DRIVER_IMAGE}`]);
      expect(images).not.toContain(DEFAULT_DRIVER_IMAGE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('renderAllOutputs() (for the cluster tier\'s dry-run) yields every output, each valid and non-empty', () => {
    const outputs = renderAllOutputs();
    expect(outputs.map((o) => o.id)).toEqual(expect.arrayContaining(['kustomize deploy/kustomize/operator', 'helm (default values)', 'file deploy/kubernetes/lvm-production/pmem-csi.yaml']));
    expect(outputs.length).toBe(renderedManifestPaths().length + kustomizeTargets().length + 3);
    for (const o of outputs) expect({ id: o.id, objects: parseManifests(o.yaml).length > 0 }).toEqual({ id: o.id, objects: true });
  });
});
