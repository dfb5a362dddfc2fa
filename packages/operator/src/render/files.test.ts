// The committed deploy/ files are exactly what tools/gen-deploy.ts generates (the same check as
// `npx tsx tools/gen-deploy.ts --check`, in the unit tests so that a stale file fails `npm test`).
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  CRD_SOURCE_FILE,
  GENERATED_DIRS,
  HELM_RULES_TEMPLATE,
  HELM_VALUES_SCHEMA,
  renderDeployFiles,
} from './files.js';
import { DRIVER_VARIANTS, OPERATOR_RENDERED_FILE, renderedManifestPaths } from './variants.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const REGENERATE = 'regenerate with: npx tsx tools/gen-deploy.ts';

const files = renderDeployFiles({ crdYaml: readFileSync(join(ROOT, CRD_SOURCE_FILE), 'utf8') });

function listFiles(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { recursive: true })
    .map((f) => join(abs, String(f)))
    .filter((f) => statSync(f).isFile())
    .map((f) => relative(ROOT, f));
}

describe('generated deploy files', () => {
  it('are all committed and up to date', () => {
    const stale = [...files]
      .filter(([file, content]) => !existsSync(join(ROOT, file)) || readFileSync(join(ROOT, file), 'utf8') !== content)
      .map(([f]) => f);
    expect({ stale, hint: REGENERATE }).toEqual({ stale: [], hint: REGENERATE });
  });

  it('leave no file in a generated directory that the generator does not write', () => {
    const extra = GENERATED_DIRS.flatMap(listFiles).filter((f) => !files.has(f));
    expect({ extra, hint: REGENERATE }).toEqual({ extra: [], hint: REGENERATE });
  });

  it('include the Helm rules template, the values schema and a rendered manifest per variant', () => {
    for (const f of [HELM_RULES_TEMPLATE, HELM_VALUES_SCHEMA, ...renderedManifestPaths()])
      expect(files.has(f)).toBe(true);
    expect(renderedManifestPaths()).toEqual([OPERATOR_RENDERED_FILE, ...DRIVER_VARIANTS.map((v) => v.renderedFile)]);
  });

  it('copy the CRD byte for byte below a one-line header', () => {
    const crd = readFileSync(join(ROOT, CRD_SOURCE_FILE), 'utf8');
    const copies = [...files].filter(([f]) => f.endsWith('pmem-csi.intel.com_pmemcsideployments.yaml'));
    expect(copies.map(([f]) => f).sort()).toEqual([
      'deploy/helm/pmem-csi/crds/pmem-csi.intel.com_pmemcsideployments.yaml',
      'deploy/kustomize/crd/pmem-csi.intel.com_pmemcsideployments.yaml',
    ]);
    for (const [, content] of copies) expect(content.slice(content.indexOf('\n') + 1)).toBe(crd);
  });

  it('are valid YAML (every .yaml) and JSON (the schema), each with a do-not-edit header', () => {
    for (const [file, content] of files) {
      if (file.endsWith('.json'))
        expect(JSON.parse(content)).toHaveProperty('$comment', expect.stringContaining('DO NOT EDIT'));
      else expect(content).toMatch(/DO NOT EDIT/);
      if (!file.endsWith('.yaml')) continue;
      const errors = parseAllDocuments(content).flatMap((d) =>
        'errors' in d ? d.errors.map((e) => e.message) : ['not a document'],
      );
      expect({ file, errors }).toEqual({ file, errors: [] });
    }
  });

  it('are deterministic', () => {
    const again = renderDeployFiles({ crdYaml: readFileSync(join(ROOT, CRD_SOURCE_FILE), 'utf8') });
    expect([...again]).toEqual([...files]);
  });
});
