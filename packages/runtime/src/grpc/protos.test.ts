// The per-service descriptors (generated/descriptors.ts) against the .proto files themselves: every
// service the .proto files declare has one; its methods have the same paths and streaming; every
// type a method carries is the .proto's type but for custom options; and every request and
// response encodes to the same bytes and decodes to the same object as protobufjs reading the
// .proto — so the pruned JSON changes nothing on the wire.
import { describe, expect, it } from '@jest/globals';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { SERVICE_DESCRIPTORS } from '../generated/descriptors.js';
import { loadCsi, loadRegistry, serviceDefinition } from './protos.js';

const PROTO_DIR = fileURLToPath(new URL('../../../../proto/', import.meta.url));
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

/** csi.proto and registry.proto as protobufjs parses them (google/protobuf/* from protobufjs's copies). */
function protoRoot(): protobuf.Root {
  const require = createRequire(import.meta.url);
  const protobufDir = join(require.resolve('protobufjs/package.json'), '..');
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) =>
    [join(PROTO_DIR, target), join(protobufDir, target)].find((f) => existsSync(f)) ?? target;
  root.loadSync(['csi.proto', 'registry.proto'], { keepCase: true });
  root.resolveAll();
  return root;
}

function services(ns: protobuf.NamespaceBase): protobuf.Service[] {
  return ns.nestedArray.flatMap((child) =>
    child instanceof protobuf.Service ? [child] : child instanceof protobuf.Namespace ? services(child) : [],
  );
}

/** JSON without the options in parentheses (CSI's extensions) and without option objects they emptied. */
function withoutCustomOptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCustomOptions);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (key.startsWith('(') || v === undefined) continue;
    const cleaned = withoutCustomOptions(v);
    const emptied = typeof cleaned === 'object' && cleaned !== null && Object.keys(cleaned).length === 0;
    if (emptied && typeof v === 'object' && v !== null && Object.keys(v).length > 0) continue;
    out[key] = cleaned;
  }
  return out;
}

/** Every type `type` reaches through its fields, itself included. */
function reached(type: protobuf.Type, seen = new Map<string, protobuf.Type | protobuf.Enum>()): typeof seen {
  if (seen.has(type.fullName)) return seen;
  seen.set(type.fullName, type);
  for (const field of type.fieldsArray) {
    field.resolve();
    if (field.resolvedType instanceof protobuf.Type) reached(field.resolvedType, seen);
    else if (field.resolvedType instanceof protobuf.Enum) seen.set(field.resolvedType.fullName, field.resolvedType);
  }
  return seen;
}

const SCALARS: Readonly<Record<string, unknown>> = {
  string: 's',
  bytes: Buffer.from([1, 2, 255]),
  bool: true,
  double: 1.5,
  float: 0.5,
  int32: -7,
  sint32: -9,
  sfixed32: -11,
  uint32: 13,
  fixed32: 17,
  int64: '-9007199254740993',
  sint64: '-19',
  sfixed64: '-23',
  uint64: '18446744073709551615',
  fixed64: '29',
};

/** A plain object with a non-default value in every field (one member per oneof), `depth` messages deep. */
function sample(type: protobuf.Type, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const oneofsSet = new Set<string>();
  for (const field of type.fieldsArray) {
    field.resolve();
    const oneof = field.partOf?.name;
    if (oneof !== undefined) {
      if (oneofsSet.has(oneof)) continue;
      oneofsSet.add(oneof);
    }
    let value: unknown;
    if (field.resolvedType instanceof protobuf.Type) {
      if (depth === 0) continue;
      value = sample(field.resolvedType, depth - 1);
    } else if (field.resolvedType instanceof protobuf.Enum) {
      const names = Object.keys(field.resolvedType.values);
      value = names[names.length - 1];
    } else value = SCALARS[field.type];
    if (value === undefined) throw new Error(`no sample for ${type.fullName}.${field.name} (${field.type})`);
    const mapField = field as protobuf.Field & { map?: boolean };
    out[field.name] = mapField.map === true ? { k1: value, k2: value } : field.repeated ? [value, value] : value;
  }
  return out;
}

describe('per-service descriptors', () => {
  const root = protoRoot();
  const declared = services(root);

  it('has one descriptor for every service of the .proto files', () => {
    expect(Object.keys(SERVICE_DESCRIPTORS).sort()).toEqual(declared.map((s) => s.fullName.slice(1)).sort());
    expect(declared.length).toBe(6);
  });

  it('carries no descriptor.proto types and no custom options', () => {
    for (const json of Object.values(SERVICE_DESCRIPTORS)) {
      expect(json).not.toContain('FieldOptions');
      expect(json).not.toContain('"(');
      expect(json).not.toContain('extend');
    }
  });

  it.each(declared.map((s) => [s.fullName.slice(1), s] as const))(
    '%s: same methods, types, bytes and objects as the .proto',
    (fullName, service) => {
      const definition = serviceDefinition(fullName);
      expect(Object.keys(definition).sort()).toEqual(service.methodsArray.map((m) => m.name).sort());
      const ours = protobuf.Root.fromJSON(
        JSON.parse(SERVICE_DESCRIPTORS[fullName as keyof typeof SERVICE_DESCRIPTORS]),
      );
      for (const method of service.methodsArray) {
        method.resolve();
        const m = definition[method.name]!;
        expect(m.path).toBe(`/${fullName}/${method.name}`);
        expect(m.requestStream).toBe(method.requestStream === true);
        expect(m.responseStream).toBe(method.responseStream === true);
        const sides = [
          [method.resolvedRequestType!, m.requestSerialize, m.requestDeserialize],
          [method.resolvedResponseType!, m.responseSerialize, m.responseDeserialize],
        ] as const;
        for (const [type, serialize, deserialize] of sides) {
          for (const [name, original] of reached(type)) {
            const pruned = ours.lookup(name);
            expect([name, pruned?.toJSON()]).toEqual([
              name,
              withoutCustomOptions(original.toJSON({ keepComments: false })),
            ]);
          }
          const value = sample(type, 4);
          const expected = Buffer.from(type.encode(type.fromObject(value)).finish());
          const bytes = serialize(value);
          if (type.fieldsArray.length > 0) expect(bytes.length).toBeGreaterThan(0);
          expect(bytes.equals(expected)).toBe(true);
          expect(deserialize(bytes)).toEqual(type.toObject(type.decode(expected), TO_OBJECT));
        }
      }
    },
  );

  it('refuses a service it does not know, naming the known ones', () => {
    expect(() => serviceDefinition('csi.v1.Nope')).toThrow(
      new TypeError(
        'serviceDefinition: unknown service "csi.v1.Nope"; known: ' + Object.keys(SERVICE_DESCRIPTORS).join(', '),
      ),
    );
  });

  it('gives grpc-js clients of each service with the service definition, the same object every time', () => {
    const csi = loadCsi().csi.v1;
    expect(Object.keys(csi).sort()).toEqual(['Controller', 'Identity', 'Node']);
    expect(csi.Node.service).toBe(serviceDefinition('csi.v1.Node'));
    expect(loadCsi().csi.v1.Node).toBe(csi.Node);
    expect(Object.keys(csi.Identity.service).sort()).toEqual(['GetPluginCapabilities', 'GetPluginInfo', 'Probe']);
    expect(loadRegistry().pmemcsi.registry.v1.Registry.service).toBe(serviceDefinition('pmemcsi.registry.v1.Registry'));
  });
});
