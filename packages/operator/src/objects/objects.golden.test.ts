import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { API_GROUP_VERSION, KIND, LABEL_KEYS } from '@pmem-csi/api';
import { OPERATOR_VERSION_ANNOTATION } from '@pmem-csi/api';
import { GOLDEN_VARIANTS, testContext, testDeployment } from '../testing/fixtures.js';
import { EVER_CREATED_KINDS } from './kinds.js';
import { BUILDERS, buildDesiredObjects } from './registry.js';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '__golden__');
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

function render(variant: string): string {
  const cr = testDeployment(GOLDEN_VARIANTS[variant]);
  const objects = buildDesiredObjects(cr, testContext(cr));
  const header = `# Golden output of the operator's builders for the "${variant}" spec variant.\n# Regenerate: UPDATE_GOLDEN=1 node tools/run-jest.mjs unit --selectProjects operator\n`;
  return (
    header +
    objects
      .map(({ object }) => stringify(object, { lineWidth: 0, sortMapEntries: false, aliasDuplicateObjects: false }))
      .join('---\n')
  );
}

describe('golden builder output', () => {
  for (const variant of Object.keys(GOLDEN_VARIANTS)) {
    it(`matches __golden__/${variant}.yaml`, () => {
      const file = join(GOLDEN_DIR, `${variant}.yaml`);
      const actual = render(variant);
      if (UPDATE) writeFileSync(file, actual);
      expect(actual).toBe(readFileSync(file, 'utf8'));
    });
  }
});

describe('every built object', () => {
  for (const variant of Object.keys(GOLDEN_VARIANTS)) {
    it(`carries labels, owner reference and version annotation (${variant})`, () => {
      const cr = testDeployment(GOLDEN_VARIANTS[variant]);
      for (const { object } of buildDesiredObjects(cr, testContext(cr, { operatorVersion: '9.8.7' }))) {
        expect(object.metadata.labels?.[LABEL_KEYS.instance]).toBe(cr.metadata.name);
        expect(object.metadata.annotations?.[OPERATOR_VERSION_ANNOTATION]).toBe('9.8.7');
        expect(object.metadata.ownerReferences).toEqual([
          {
            apiVersion: API_GROUP_VERSION,
            kind: KIND,
            name: cr.metadata.name,
            uid: cr.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ]);
        for (const [k, v] of Object.entries(GOLDEN_VARIANTS[variant]?.labels ?? {}))
          expect(object.metadata.labels?.[k]).toBe(v);
      }
    });
  }

  it('are of kinds in the grow-only list', () => {
    const listed = new Set(EVER_CREATED_KINDS.map((k) => `${k.apiVersion}/${k.kind}`));
    for (const b of BUILDERS) expect(listed).toContain(`${b.apiVersion}/${b.kind}`);
  });

  it('builds no CA Secret when the user supplies certificates', () => {
    const cr = testDeployment();
    const ctx = testContext(cr);
    const { ca: _ca, ...userCerts } = ctx.certs;
    const ids = buildDesiredObjects(cr, { ...ctx, certs: userCerts }).map((d) => d.builder.id);
    expect(ids).not.toContain('ca-secret');
    expect(ids).toContain('registry-secret');
  });
});
