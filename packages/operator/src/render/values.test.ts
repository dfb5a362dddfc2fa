// values.yaml documents every value (a comment right above each key) and lists exactly the keys
// of the generated values.schema.json; the schema's deployment.spec is the CRD's spec schema.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, isScalar, parseDocument, type YAMLMap } from 'yaml';
import { pmemCsiDeploymentSchema } from '@pmem-csi/api';
import { HELM_VALUES_SCHEMA } from './files.js';
import { helmValuesSchema, plainJsonSchema } from './values-schema.js';
import { HELM_CHART_DIR } from './variants.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const valuesDoc = parseDocument(readFileSync(join(ROOT, HELM_CHART_DIR, 'values.yaml'), 'utf8'));

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: unknown;
}

/** The CR spec: empty in values.yaml (unset fields take the operator's defaults), its fields listed in one comment. */
const PASSED_THROUGH = new Set(['deployment.spec']);

/** Paths of the schema: objects with fixed properties are walked, everything else is a leaf. */
function schemaPaths(node: SchemaNode, prefix = ''): string[] {
  if (node.properties === undefined || node.additionalProperties !== false || PASSED_THROUGH.has(prefix))
    return prefix === '' ? [] : [prefix];
  return Object.entries(node.properties).flatMap(([k, v]) => schemaPaths(v, prefix === '' ? k : `${prefix}.${k}`));
}

/** Paths of values.yaml, with the comment above each key; maps that the schema treats as leaves are not entered. */
function valuePaths(
  map: YAMLMap,
  leaves: ReadonlySet<string>,
  prefix = '',
): { path: string; comment: string | undefined }[] {
  return map.items.flatMap((pair, index) => {
    const key = isScalar(pair.key) ? String(pair.key.value) : '?';
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const comment =
      (isScalar(pair.key) ? pair.key.commentBefore : undefined) ??
      (index === 0 ? (map.commentBefore ?? undefined) : undefined);
    const self = { path, comment: comment ?? undefined };
    if (isMap(pair.value) && !leaves.has(path)) {
      const first = pair.value.items[0]?.key;
      // The first key's comment is attached to the map (or, at the top, to the document).
      const children = valuePaths(pair.value, leaves, path);
      if (children[0] !== undefined && children[0].comment === undefined && isScalar(first))
        children[0].comment = pair.value.commentBefore ?? undefined;
      return [self, ...children];
    }
    return [self];
  });
}

const schema = helmValuesSchema() as SchemaNode;
const leafPaths = schemaPaths(schema).filter((p) => p !== 'global');
const values = valuePaths(valuesDoc.contents as YAMLMap, new Set(leafPaths));

describe('Helm values', () => {
  it('values.yaml sets exactly the keys of values.schema.json', () => {
    const set = values.map((v) => v.path).filter((p) => !values.some((o) => o.path.startsWith(`${p}.`)));
    expect(set.sort()).toEqual([...leafPaths].sort());
  });

  it('documents every key with a comment above it', () => {
    const first =
      valuesDoc.contents !== null && isMap(valuesDoc.contents) ? valuesDoc.contents.items[0]?.key : undefined;
    const undocumented = values
      .filter(
        (v, i) => (v.comment ?? (i === 0 && isScalar(first) ? valuesDoc.commentBefore : undefined) ?? '').trim() === '',
      )
      .map((v) => v.path);
    expect(undocumented).toEqual([]);
  });

  it('checks deployment.spec with the CRD schema, refusing unknown fields', () => {
    const spec = (schema.properties?.['deployment']?.properties?.['spec'] ?? {}) as SchemaNode;
    const crdSpec = pmemCsiDeploymentSchema.properties?.['spec'];
    expect(crdSpec).toBeDefined();
    expect(spec).toEqual({ ...plainJsonSchema(crdSpec ?? {}), additionalProperties: false });
    expect(Object.keys(spec.properties ?? {})).toEqual(Object.keys(crdSpec?.properties ?? {}));
    expect(JSON.stringify(spec)).not.toMatch(/x-kubernetes-/);
  });

  it('names every spec field in the comment of deployment.spec', () => {
    const comment = values.find((v) => v.path === 'deployment.spec')?.comment ?? '';
    const missing = Object.keys(pmemCsiDeploymentSchema.properties?.['spec']?.properties ?? {}).filter(
      (field) => !new RegExp(`\\b${field}\\b`).test(comment),
    );
    expect(missing).toEqual([]);
  });

  it(`${HELM_VALUES_SCHEMA} refuses unknown top-level and operator keys, but lets a parent chart pass global`, () => {
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties?.['operator']?.additionalProperties).toBe(false);
    expect(schema.properties?.['global']).toEqual({ type: 'object', description: expect.any(String) });
  });
});
