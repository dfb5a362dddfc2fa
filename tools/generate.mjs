#!/usr/bin/env node
// Regenerates every generated file from its one source, or with --check verifies that the
// committed files are up to date (CI runs the check: stale generated files fail the build).
//   proto/*.proto                 -> packages/csi/src/generated/** (the message types: CSI vocabulary)
//                                    and packages/runtime/src/generated/** (the gRPC services, and the
//                                    precompiled descriptors the runtime loads: descriptors.ts)
//   packages/api/src/crd/schema.ts -> packages/api/src/generated/*, deploy/crd/*.yaml
//   packages/operator/src/render    -> deploy/kustomize/*, deploy/kubernetes/*, deploy/helm/pmem-csi/{crds,values.schema.json,templates/_operator-rules.tpl}
//   e2e/bench/results/bench.json    -> README.md's Performance table (between its markers)
//   e2e/results/ci-times.json       -> README.md's CI times (between their markers)
//   project.json, package sources, eslint.config.js -> docs/architecture.md's package graph (between
//                                    its markers; the check also fails on a path that docs/*.md or
//                                    CONTRIBUTING.md names in backticks and that is gone)
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { splitProtoTypes } from './proto-split.mjs';

const check = process.argv.includes('--check');
const root = new URL('..', import.meta.url).pathname;
process.chdir(root);

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`generate: ${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})`);
    process.exit(1);
  }
}

function listFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map((f) => join(dir, String(f)))
    .filter((f) => statSync(f).isFile())
    .map((f) => relative(dir, f))
    .sort();
}

/** Compare two directory trees; returns the differing relative paths. */
function diffTrees(a, b) {
  const fa = listFiles(a),
    fb = listFiles(b);
  const all = [...new Set([...fa, ...fb])].sort();
  return all.filter(
    (f) => !fa.includes(f) || !fb.includes(f) || !readFileSync(join(a, f)).equals(readFileSync(join(b, f))),
  );
}

// 1. Protocol types: messages to the csi package, services to the runtime (tools/proto-split.mjs).
const CSI_PROTO_OUT = 'packages/csi/src/generated';
const PROTO_OUT = 'packages/runtime/src/generated';
function genProto(csiOut, runtimeOut) {
  rmSync(csiOut, { recursive: true, force: true });
  rmSync(runtimeOut, { recursive: true, force: true });
  const raw = mkdtempSync(join(tmpdir(), 'pmem-proto-'));
  run(process.execPath, [
    'node_modules/@grpc/proto-loader/build/bin/proto-loader-gen-types.js',
    '--keepCase',
    '--longs=String',
    '--enums=String',
    '--defaults',
    '--oneofs',
    '--grpcLib=@grpc/grpc-js',
    '--importFileExtension=.js',
    '--includeComments',
    '-I',
    'proto',
    '-O',
    raw,
    'csi.proto',
    'registry.proto',
  ]);
  // Code imports `csi.Volume`, `registry.Capacity`, ... from @pmem-csi/csi (one barrel per proto package).
  splitProtoTypes(raw, listFiles(raw), csiOut, runtimeOut);
  rmSync(raw, { recursive: true, force: true });
  genDescriptors(runtimeOut);
}

/**
 * csi.proto and registry.proto as protobufjs JSON, in a module the runtime imports: at start-up
 * the driver builds its gRPC services from it with protobufjs/light instead of parsing .proto
 * text and converting every type to descriptor protos (@grpc/proto-loader), ~150 ms of CPU.
 * One JSON per service, holding only what its methods carry: the service, every message and enum
 * its requests and responses reach (with their nested types), nothing of descriptor.proto, and no
 * custom options (csi_secret, alpha_field, ...: they only annotate the .proto; keeping them would
 * mean keeping their extensions and descriptor.proto's ~30 option types). A process parses only
 * the services it builds (Root.fromJSON resolves and generates a constructor for every type it
 * gets: the whole set took ~25-30 ms of a node's start); a type two services share is in both.
 */
function genDescriptors(outDir) {
  const require = createRequire(import.meta.url);
  const protobuf = require('protobufjs');
  const protobufDir = join(require.resolve('protobufjs/package.json'), '..');
  const root = new protobuf.Root();
  // Our files first, then protobufjs's copies of google/protobuf/*.proto (descriptor, wrappers).
  root.resolvePath = (_origin, target) =>
    [join(root_dir, 'proto', target), join(protobufDir, target)].find((f) => existsSync(f)) ?? target;
  root.loadSync(['csi.proto', 'registry.proto'], { keepCase: true });
  root.resolveAll();
  const services = [];
  (function collect(ns) {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Service) services.push(child);
      else if (child instanceof protobuf.Namespace) collect(child);
    }
  })(root);
  const entries = services
    .map((service) => [service.fullName.slice(1), JSON.stringify(serviceClosureJSON(protobuf, service))])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  writeFileSync(
    join(outDir, 'descriptors.ts'),
    '// Generated by tools/generate.mjs from proto/csi.proto and proto/registry.proto (protobufjs JSON, keepCase).\n' +
      '// One JSON per service: its messages and enums only (no descriptor.proto, no custom options).\n' +
      '// Loaded by src/grpc/protos.ts; JSON.parse of one string is the fastest way V8 reads it.\n' +
      'export const SERVICE_DESCRIPTORS = {\n' +
      entries.map(([name, json]) => `  ${JSON.stringify(name)}: ${JSON.stringify(json)},\n`).join('') +
      '} as const;\n' +
      '\n/** The full name of every service of the .proto files, e.g. csi.v1.Node. */\n' +
      'export type ServiceName = keyof typeof SERVICE_DESCRIPTORS;\n',
  );
}

/** protobufjs JSON of `service` and every type it reaches, under their packages; custom options left out. */
function serviceClosureJSON(protobuf, service) {
  const kept = new Set();
  const keep = (type) => {
    if (kept.has(type)) return;
    kept.add(type);
    // A nested type keeps its message: the JSON then has the .proto's shape (and lookups by relative name resolve alike).
    if (type.parent instanceof protobuf.Type) keep(type.parent);
    if (type instanceof protobuf.Type) {
      for (const field of type.fieldsArray) if (field.resolvedType !== null) keep(field.resolvedType);
      // Nested types go along with their message's JSON: their own references must resolve too.
      for (const nested of type.nestedArray)
        if (nested instanceof protobuf.Type || nested instanceof protobuf.Enum) keep(nested);
    }
  };
  for (const method of service.methodsArray) {
    keep(method.resolvedRequestType);
    keep(method.resolvedResponseType);
  }
  const json = {};
  const place = (object) => {
    let ns = json;
    for (const part of object.parent.fullName.split('.').slice(1)) ns = (ns.nested ??= {})[part] ??= {};
    (ns.nested ??= {})[object.name] = withoutCustomOptions(object.toJSON({ keepComments: false }));
  };
  place(service);
  // Top-level types only: a nested one is inside its parent's JSON.
  for (const type of [...kept].sort((a, b) => (a.fullName < b.fullName ? -1 : 1)))
    if (!kept.has(type.parent)) place(type);
  return json;
}

/** `value` without options in parentheses (extensions), and without option objects left empty. */
function withoutCustomOptions(value) {
  if (Array.isArray(value)) return value.map(withoutCustomOptions);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [key, v] of Object.entries(value)) {
    if (key.startsWith('(') || v === undefined) continue;
    const cleaned = withoutCustomOptions(v);
    const emptied =
      cleaned !== null && typeof cleaned === 'object' && !Array.isArray(cleaned) && Object.keys(cleaned).length === 0;
    if (emptied && v !== null && typeof v === 'object' && Object.keys(v).length > 0) continue;
    out[key] = cleaned;
  }
  return out;
}
const root_dir = root;

let stale = [];
if (check) {
  const tmp = mkdtempSync(join(tmpdir(), 'pmem-gen-'));
  genProto(join(tmp, 'csi'), join(tmp, 'runtime'));
  stale.push(...diffTrees(CSI_PROTO_OUT, join(tmp, 'csi')).map((f) => join(CSI_PROTO_OUT, f)));
  stale.push(...diffTrees(PROTO_OUT, join(tmp, 'runtime')).map((f) => join(PROTO_OUT, f)));
  rmSync(tmp, { recursive: true, force: true });
} else {
  genProto(CSI_PROTO_OUT, PROTO_OUT);
}

// 2. CRD schema -> TypeScript types and CRD YAML (the generator does its own --check).
const crd = spawnSync(process.execPath, ['--import', 'tsx', 'tools/gen-crd.ts', ...(check ? ['--check'] : [])], {
  stdio: 'inherit',
});
if (crd.status !== 0) stale.push('CRD schema outputs (see above)');

// 3. Install manifests from the operator's builders (the generator does its own --check). The
//    operator's sources import @pmem-csi/api by package name: run with the source condition.
const deploy = spawnSync(
  process.execPath,
  ['--conditions=@pmem-csi/source', '--import', 'tsx', 'tools/gen-deploy.ts', ...(check ? ['--check'] : [])],
  { stdio: 'inherit' },
);
if (deploy.status !== 0) stale.push('deploy manifests (see above)');

// 4. The README's Performance table from the bench's committed full run (its own --check).
const perf = spawnSync(process.execPath, ['--import', 'tsx', 'tools/gen-perf.ts', ...(check ? ['--check'] : [])], {
  stdio: 'inherit',
});
if (perf.status !== 0) stale.push('README.md Performance table (see above)');

// 5. The README's CI times from the committed timing of a whole .ci/run (its own --check).
const ciTimes = spawnSync(
  process.execPath,
  ['--import', 'tsx', 'tools/gen-ci-times.ts', ...(check ? ['--check'] : [])],
  { stdio: 'inherit' },
);
if (ciTimes.status !== 0) stale.push('README.md CI times (see above)');

// 6. docs/architecture.md's package graph from the code, and the paths the page names (its own --check).
const architecture = spawnSync(
  process.execPath,
  ['--import', 'tsx', 'tools/gen-architecture.ts', ...(check ? ['--check'] : [])],
  { stdio: 'inherit' },
);
if (architecture.status !== 0) stale.push('docs/architecture.md package graph (see above)');

if (stale.length > 0) {
  console.error(`generated files are stale — run "npm run generate" and commit:\n  ${stale.join('\n  ')}`);
  process.exit(1);
}
console.log(check ? 'generated files are up to date' : 'generated files written');
