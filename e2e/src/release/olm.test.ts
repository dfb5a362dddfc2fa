// The OLM bundle's content, built from the operator's kustomize base (the validators themselves
// run in release.e2e.test.ts, which needs the pinned validator).
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { annotations, buildCsv, csvName, OLM_PACKAGE, writeBundle } from './olm.js';

const D = (c: string): string => `sha256:${c.repeat(64)}`;
const input = {
  version: '1.2.3',
  operatorImage: `r.example/pmem-csi-operator@${D('a')}`,
  driverImage: `r.example/pmem-csi-driver@${D('b')}`,
  createdAt: '2026-12-07T05:00:00Z',
  replaces: '1.2.2',
};

interface Csv {
  metadata: { name: string; annotations: Record<string, string> };
  spec: {
    version: string;
    replaces?: string;
    installModes: { type: string; supported: boolean }[];
    customresourcedefinitions: { owned: { name: string; version: string; kind: string }[] };
    install: {
      strategy: string;
      spec: {
        clusterPermissions: { serviceAccountName: string; rules: unknown[] }[];
        permissions: { serviceAccountName: string; rules: unknown[] }[];
        deployments: {
          name: string;
          spec: { template: { spec: { containers: { image: string; args: string[] }[] } } };
        }[];
      };
    };
    relatedImages: { name: string; image: string }[];
  };
}

describe('OLM bundle', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('the CSV installs the operator by digest with its drivers in its own namespace', () => {
    const csv = buildCsv(input) as unknown as Csv;
    expect(csv.metadata.name).toBe('pmem-csi-operator.v1.2.3');
    expect(csv.spec.version).toBe('1.2.3');
    expect(csv.spec.replaces).toBe(csvName('1.2.2'));
    expect(csv.spec.installModes.filter((m) => m.supported).map((m) => m.type)).toEqual(['OwnNamespace']);
    expect(csv.spec.customresourcedefinitions.owned).toEqual([
      expect.objectContaining({
        name: 'pmemcsideployments.pmem-csi.intel.com',
        version: 'v1beta1',
        kind: 'PmemCSIDeployment',
      }),
    ]);
    const install = csv.spec.install.spec;
    expect(install.clusterPermissions[0]?.serviceAccountName).toBe('pmem-csi-operator');
    expect(install.clusterPermissions[0]?.rules.length).toBeGreaterThan(5);
    expect(install.permissions[0]?.rules.length).toBeGreaterThan(5);
    const container = install.deployments[0]?.spec.template.spec.containers[0];
    expect(container?.image).toBe(input.operatorImage);
    expect(container?.args).toContain('--namespace=$(POD_NAMESPACE)');
    expect(container?.args).toContain(`--driver-image=${input.driverImage}`);
    expect(container?.args.filter((a) => a.startsWith('--namespace=pmem-csi'))).toEqual([]);
    expect(csv.spec.relatedImages.map((i) => i.image)).toEqual([input.operatorImage, input.driverImage]);
    const examples = JSON.parse(csv.metadata.annotations['alm-examples'] ?? '[]') as { kind: string }[];
    expect(examples.map((e) => e.kind)).toEqual(['PmemCSIDeployment']);
    expect(csv.metadata.annotations['containerImage']).toBe(input.operatorImage);
  });

  it('writes manifests/ (CSV, CRD) and metadata/annotations.yaml', () => {
    const dir = mkdtempSync(join(tmpdir(), 'olm-test-'));
    dirs.push(dir);
    writeBundle(dir, input);
    expect(readdirSync(join(dir, 'manifests')).sort()).toEqual([
      `${OLM_PACKAGE}.clusterserviceversion.yaml`,
      'pmem-csi.intel.com_pmemcsideployments.yaml',
    ]);
    const ann = parse(readFileSync(join(dir, 'metadata', 'annotations.yaml'), 'utf8')) as {
      annotations: Record<string, string>;
    };
    expect(ann.annotations).toEqual(annotations('1.2.3'));
    expect(ann.annotations['operators.operatorframework.io.bundle.mediatype.v1']).toBe('registry+v1');
    expect(ann.annotations['operators.operatorframework.io.bundle.channels.v1']).toBe('stable');
    expect(annotations('1.3.0-rc.1')['operators.operatorframework.io.bundle.channel.default.v1']).toBe('candidate');
  });
});
