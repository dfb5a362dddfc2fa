// The hand-written examples in deploy/kustomize/examples use this driver's name and parameters
// that the driver accepts, and refer to each other consistently.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_DRIVER_NAME, parseVolumeParameters } from '@pmem-csi/api';
import { KUSTOMIZE_BASES } from './variants.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const DIR = join(ROOT, KUSTOMIZE_BASES.examples);

interface Doc {
  kind: string;
  metadata: { name: string };
  [key: string]: unknown;
}
interface StorageClass extends Doc {
  provisioner: string;
  volumeBindingMode: string;
  allowVolumeExpansion?: boolean;
  parameters: Record<string, string>;
}
interface PodVolume {
  persistentVolumeClaim?: { claimName: string };
  csi?: { driver: string; fsType?: string; volumeAttributes: Record<string, string> };
  ephemeral?: { volumeClaimTemplate: { spec: { storageClassName: string } } };
}

const yamlFiles = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
  .sort();
const docs: Doc[] = yamlFiles.flatMap((f) =>
  parseAllDocuments(readFileSync(join(DIR, f), 'utf8')).map((d) => d.toJS() as Doc),
);
const ofKind = <T extends Doc>(kind: string): T[] => docs.filter((d) => d.kind === kind) as T[];
const classes = ofKind<StorageClass>('StorageClass');
const claims = ofKind<Doc & { spec: { storageClassName: string } }>('PersistentVolumeClaim');
const podVolumes = ofKind<Doc & { spec: { volumes: PodVolume[] } }>('Pod').flatMap((p) => p.spec.volumes);

describe('deploy/kustomize/examples', () => {
  it('are all listed in kustomization.yaml', () => {
    const kustomization = parseAllDocuments(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8'))[0]?.toJS() as {
      resources: string[];
    };
    expect([...kustomization.resources].sort()).toEqual(yamlFiles);
  });

  it('offer ext4, xfs, late-binding and FileIO StorageClasses of this driver', () => {
    expect(classes.map((c) => c.provisioner)).toEqual(classes.map(() => DEFAULT_DRIVER_NAME));
    const byName = new Map(classes.map((c) => [c.metadata.name, c]));
    expect(byName.get('pmem-csi-sc-ext4')?.parameters['csi.storage.k8s.io/fstype']).toBe('ext4');
    expect(byName.get('pmem-csi-sc-xfs')?.parameters['csi.storage.k8s.io/fstype']).toBe('xfs');
    expect(byName.get('pmem-csi-sc-late-binding')?.volumeBindingMode).toBe('WaitForFirstConsumer');
    expect(byName.get('pmem-csi-sc-fileio')?.parameters['usage']).toBe('FileIO');
  });

  it('let volumes grow (lvm and emulated mode) and say that direct mode cannot; Kata volumes never grow', () => {
    const kata = (c: StorageClass): boolean => c.parameters['kataContainers'] === 'true';
    expect(classes.filter(kata).map((c) => c.metadata.name)).toEqual(['pmem-csi-sc-kata']);
    expect(classes.map((c) => [c.metadata.name, c.allowVolumeExpansion])).toEqual(
      classes.map((c) => [c.metadata.name, !kata(c)]),
    );
    for (const f of yamlFiles.filter((name) => name.startsWith('storageclass-')))
      expect([f, readFileSync(join(DIR, f), 'utf8')]).toEqual([f, expect.stringContaining('direct mode')]);
  });

  it('use only StorageClass parameters the driver accepts', () => {
    for (const c of classes) {
      const result = parseVolumeParameters(c.parameters, 'createVolume');
      expect({ name: c.metadata.name, ok: result.ok, message: result.ok ? '' : result.message }).toEqual({
        name: c.metadata.name,
        ok: true,
        message: '',
      });
      expect(['ext4', 'xfs']).toContain(c.parameters['csi.storage.k8s.io/fstype']);
    }
  });

  it('refer only to example StorageClasses and PVCs', () => {
    const classNames = classes.map((c) => c.metadata.name);
    const claimNames = claims.map((c) => c.metadata.name);
    for (const c of claims) expect(classNames).toContain(c.spec.storageClassName);
    for (const v of podVolumes) {
      if (v.persistentVolumeClaim) expect(claimNames).toContain(v.persistentVolumeClaim.claimName);
      if (v.ephemeral) expect(classNames).toContain(v.ephemeral.volumeClaimTemplate.spec.storageClassName);
    }
    expect(claimNames.filter((n) => !podVolumes.some((v) => v.persistentVolumeClaim?.claimName === n))).toEqual([]);
  });

  it('have inline ephemeral volumes of this driver with attributes it accepts, and a generic ephemeral volume', () => {
    const inline = podVolumes.filter((v) => v.csi !== undefined);
    expect(inline.length).toBeGreaterThan(0);
    for (const v of inline) {
      expect(v.csi?.driver).toBe(DEFAULT_DRIVER_NAME);
      expect(parseVolumeParameters(v.csi?.volumeAttributes ?? {}, 'ephemeral').ok).toBe(true);
    }
    expect(podVolumes.some((v) => v.ephemeral !== undefined)).toBe(true);
  });
});
