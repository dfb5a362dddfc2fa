// The CRD must load into a real kube-apiserver: these tests apply the structural-schema rules of
// apiextensions.k8s.io/v1 (and check every default against its own schema), check that the
// schema, the validator and the generated types agree, and that the committed files are current.
import { OFFERED_DEVICE_MODES, VOLUME_DEVICE_MODES, type OfferedDeviceMode } from '../device-modes.js';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { DeviceMode, ImagePullPolicy, LogFormat } from '../generated/pmemcsideployment.js';
import { validateSpec } from '../validate.js';
import { SPEC_FIELD_CHECKS } from '../validation/spec-fields.js';
import { pmemCsiDeploymentCrd } from './definition.js';
import type { JSONSchemaProps, JSONValue } from './json-schema.js';
import { pmemCsiDeploymentSchema } from './schema.js';
import { specSchema } from './spec-schema.js';
import { GO_OPERATOR_FIELDS, IMAGE_PULL_POLICIES, LOG_FORMATS, SPEC_DEFAULTS } from './values.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CRD_FILE = 'deploy/crd/pmem-csi.intel.com_pmemcsideployments.yaml';
const TYPES_FILE = 'packages/api/src/generated/pmemcsideployment.ts';
const TSX = join(ROOT, 'node_modules/tsx/dist/cli.mjs');
const KNOWN_FORMATS = ['int32', 'int64', 'date-time'];
const SCALAR_TYPES = ['string', 'integer', 'number', 'boolean'];

// Violations of the structural-schema rules, by path (empty when the schema is structural).
function structuralProblems(s: JSONSchemaProps, path: string): string[] {
  const problems: string[] = [];
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (intOrString) {
    if (s.type !== undefined) problems.push(`${path}: int-or-string must not set type`);
    if (JSON.stringify(s.anyOf) !== JSON.stringify([{ type: 'integer' }, { type: 'string' }]))
      problems.push(`${path}: int-or-string anyOf must be [integer, string]`);
  } else {
    if (s.type === undefined && s['x-kubernetes-preserve-unknown-fields'] !== true)
      problems.push(`${path}: type missing`);
    if (s.anyOf !== undefined) problems.push(`${path}: anyOf only for int-or-string`);
  }
  if (s.properties !== undefined && s.additionalProperties !== undefined)
    problems.push(`${path}: properties and additionalProperties are exclusive`);
  if ((s.properties !== undefined || s.additionalProperties !== undefined) && s.type !== 'object')
    problems.push(`${path}: properties need type object`);
  if (
    s.type === 'object' &&
    s.properties === undefined &&
    s.additionalProperties === undefined &&
    s['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    problems.push(`${path}: object without fields would be pruned to {}`);
  }
  if ((s.type === 'array') !== (s.items !== undefined)) problems.push(`${path}: arrays and only arrays have items`);
  if (s.format !== undefined && !KNOWN_FORMATS.includes(s.format)) problems.push(`${path}: unknown format ${s.format}`);
  for (const key of s.required ?? [])
    if (s.properties?.[key] === undefined) problems.push(`${path}: required ${key} is not a property`);
  for (const value of s.enum ?? []) problems.push(...valueProblems(value, { ...s, enum: undefined }, `${path}.enum`));
  if (s.default !== undefined) problems.push(...valueProblems(s.default, s, `${path}.default`));
  problems.push(...listMapProblems(s, path));
  for (const [key, child] of Object.entries(s.properties ?? {}))
    problems.push(...structuralProblems(child, `${path}.${key}`));
  if (s.additionalProperties !== undefined) problems.push(...structuralProblems(s.additionalProperties, `${path}{}`));
  if (s.items !== undefined) problems.push(...structuralProblems(s.items, `${path}[]`));
  return problems;
}

function listMapProblems(s: JSONSchemaProps, path: string): string[] {
  if (s['x-kubernetes-list-type'] !== 'map')
    return s['x-kubernetes-list-map-keys'] === undefined ? [] : [`${path}: map keys without list-type map`];
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  const items = s.items;
  if (keys.length === 0 || items?.type !== 'object') return [`${path}: list-type map needs keys and object items`];
  return keys
    .filter(
      (k) =>
        !SCALAR_TYPES.includes(items.properties?.[k]?.type ?? '') ||
        (!(items.required ?? []).includes(k) && items.properties?.[k]?.default === undefined),
    )
    .map((k) => `${path}: map key ${k} must be a required (or defaulted) scalar`);
}

// What the apiserver checks when it validates a default (or an enum value) against the schema.
function valueProblems(value: JSONValue, s: JSONSchemaProps, path: string): string[] {
  const problems: string[] = [];
  const type = s['x-kubernetes-int-or-string'] === true ? (typeof value === 'string' ? 'string' : 'integer') : s.type;
  const ok = {
    string: typeof value === 'string',
    integer: Number.isInteger(value),
    number: typeof value === 'number',
    boolean: typeof value === 'boolean',
    object: typeof value === 'object' && value !== null && !Array.isArray(value),
    array: Array.isArray(value),
  };
  if (type !== undefined && !ok[type]) return [`${path}: ${JSON.stringify(value)} is not of type ${type}`];
  if (s.enum !== undefined && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)))
    problems.push(`${path}: not in enum`);
  if (
    typeof value === 'number' &&
    ((s.minimum !== undefined && value < s.minimum) || (s.maximum !== undefined && value > s.maximum))
  )
    problems.push(`${path}: out of range`);
  if (typeof value === 'string' && s.pattern !== undefined && !new RegExp(s.pattern).test(value))
    problems.push(`${path}: does not match ${s.pattern}`);
  if (
    typeof value === 'string' &&
    ((s.maxLength !== undefined && value.length > s.maxLength) ||
      (s.minLength !== undefined && value.length < s.minLength))
  )
    problems.push(`${path}: bad length`);
  if (ok.object) {
    for (const [k, v] of Object.entries(value as Record<string, JSONValue>)) {
      const child = s.properties?.[k] ?? s.additionalProperties;
      problems.push(
        ...(child === undefined ? [`${path}.${k}: would be pruned`] : valueProblems(v, child, `${path}.${k}`)),
      );
    }
  }
  return problems;
}

describe('the CRD schema', () => {
  it('is structural, and every default and enum value is valid against it', () => {
    expect(structuralProblems(pmemCsiDeploymentSchema, 'openAPIV3Schema')).toEqual([]);
  });

  it('restricts only name in metadata and preserves no unknown fields anywhere', () => {
    expect(pmemCsiDeploymentSchema.properties?.metadata).toEqual({
      type: 'object',
      properties: { name: expect.any(Object) },
    });
    expect(JSON.stringify(pmemCsiDeploymentSchema)).not.toContain('x-kubernetes-preserve-unknown-fields');
  });

  it('the structural check itself finds violations', () => {
    const bad: JSONSchemaProps = {
      type: 'object',
      properties: {
        untyped: { description: 'x' },
        both: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } },
        empty: { type: 'object' },
        list: {
          type: 'array',
          items: { type: 'object', properties: { k: { type: 'string' } } },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['k'],
        },
        def: { type: 'integer', minimum: 1, default: 0 },
        enumed: { type: 'string', enum: ['a', 1] },
      },
    };
    expect(structuralProblems(bad, 'x')).toEqual([
      'x.untyped: type missing',
      'x.both: properties and additionalProperties are exclusive',
      'x.empty: object without fields would be pruned to {}',
      'x.list: map key k must be a required (or defaulted) scalar',
      'x.def.default: out of range',
      'x.enumed.enum: 1 is not of type string',
    ]);
  });

  it('has the identity, scope, names, status subresource and printer columns of PmemCSIDeployment', () => {
    const { spec } = pmemCsiDeploymentCrd;
    expect(pmemCsiDeploymentCrd.metadata.name).toBe('pmemcsideployments.pmem-csi.intel.com');
    expect(spec.group).toBe('pmem-csi.intel.com');
    expect(spec.scope).toBe('Cluster');
    expect(spec.names).toEqual({
      kind: 'PmemCSIDeployment',
      listKind: 'PmemCSIDeploymentList',
      plural: 'pmemcsideployments',
      singular: 'pmemcsideployment',
      shortNames: ['pcd'],
    });
    expect(spec.versions.map((v) => [v.name, v.served, v.storage, v.subresources])).toEqual([
      ['v1beta1', true, true, { status: {} }],
    ]);
    expect(spec.versions[0]?.additionalPrinterColumns.map((c) => [c.name, c.type, c.jsonPath])).toEqual([
      ['DeviceMode', 'string', '.spec.deviceMode'],
      ['NodeSelector', 'string', '.spec.nodeSelector'],
      ['Image', 'string', '.spec.image'],
      ['Status', 'string', '.status.phase'],
      ['Age', 'date', '.metadata.creationTimestamp'],
    ]);
  });

  it('offers lvm, direct and emulated (never fake), and says emulated is not persistent memory', () => {
    const deviceMode = specSchema.properties?.deviceMode;
    expect(deviceMode?.enum).toEqual(['lvm', 'direct', 'emulated']);
    expect(deviceMode?.description).toMatch(
      /emulated, which is NOT persistent memory: each volume is a sparse file .* loop device/,
    );
    expect(deviceMode?.description).toMatch(/EmulatedPmem=True/);
  });

  it('documents emulatedSize as an emulated-only quantity with its range and default', () => {
    const field = specSchema.properties?.emulatedSize;
    expect(field).toMatchObject({ 'x-kubernetes-int-or-string': true, default: '4Gi' });
    expect(field?.description).toMatch(/^emulated mode only: .* from 64Mi to 1Ti/);
  });

  it("declares the Go operator's fields with its types and no default, so that a Go user's value is stored, not pruned", () => {
    expect({
      controllerTLSSecret: specSchema.properties?.controllerTLSSecret?.type,
      mutatePods: [specSchema.properties?.mutatePods?.type, specSchema.properties?.mutatePods?.enum],
      schedulerNodePort: [
        specSchema.properties?.schedulerNodePort?.type,
        specSchema.properties?.schedulerNodePort?.format,
      ],
    }).toEqual({
      controllerTLSSecret: 'string',
      mutatePods: ['string', ['Always', 'Try', 'Never']],
      schedulerNodePort: ['integer', 'int32'],
    });
    for (const field of GO_OPERATOR_FIELDS) {
      expect(specSchema.properties?.[field]?.default).toBeUndefined();
      expect(specSchema.properties?.[field]?.description).toMatch(/^Go operator \(PMEM-CSI v1\.x\) only: .*accepted/);
    }
  });

  it('agrees with the validator and the generated types', () => {
    expect(Object.keys(SPEC_FIELD_CHECKS)).toEqual(Object.keys(specSchema.properties ?? {}));
    expect(validateSpec(structuredClone(SPEC_DEFAULTS))).toEqual([]);
    // Compile-time: the value lists are exactly the generated unions.
    const modes: readonly DeviceMode[] = OFFERED_DEVICE_MODES;
    // ...and the generated union is exactly the CRD's subset of the one device-mode list.
    const generated: readonly OfferedDeviceMode[] = [] as DeviceMode[];
    expect(generated).toEqual([]);
    expect(OFFERED_DEVICE_MODES).toEqual(VOLUME_DEVICE_MODES.filter((m) => m !== 'fake'));
    const policies: readonly ImagePullPolicy[] = IMAGE_PULL_POLICIES;
    const formats: readonly LogFormat[] = LOG_FORMATS;
    expect([modes, policies, formats]).toEqual([
      specSchema.properties?.deviceMode?.enum,
      specSchema.properties?.imagePullPolicy?.enum,
      specSchema.properties?.logFormat?.enum,
    ]);
  });
});

describe('the generated files', () => {
  it('deploy/crd holds exactly the CRD object', () => {
    expect(parse(readFileSync(join(ROOT, CRD_FILE), 'utf8'))).toEqual(pmemCsiDeploymentCrd);
  });

  it('are up to date (tools/gen-crd.ts --check)', () => {
    const res = spawnSync(process.execPath, [TSX, 'tools/gen-crd.ts', '--check'], { cwd: ROOT, encoding: 'utf8' });
    expect({ status: res.status, stderr: res.stderr }).toEqual({ status: 0, stderr: '' });
  }, 60_000);

  it('--check names a stale file and exits 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gen-crd-'));
    try {
      cpSync(join(ROOT, 'deploy'), join(dir, 'deploy'), { recursive: true });
      cpSync(join(ROOT, TYPES_FILE), join(dir, TYPES_FILE));
      writeFileSync(join(dir, TYPES_FILE), `${readFileSync(join(dir, TYPES_FILE), 'utf8')}// edited by hand\n`);
      const res = spawnSync(process.execPath, [TSX, 'tools/gen-crd.ts', '--check', '--root', dir], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      expect({ status: res.status, stderr: res.stderr }).toEqual({
        status: 1,
        stderr: `gen-crd: stale or missing generated file(s): ${TYPES_FILE}\n  regenerate with: npx tsx tools/gen-crd.ts\n`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
