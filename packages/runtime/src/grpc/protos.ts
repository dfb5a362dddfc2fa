// Loads the CSI and registry protocol definitions at run time. The TypeScript types of the same
// files are generated at build time (src/generated, `npm run generate`); the load options here must
// match the generator's flags (keepCase, longs=String, enums=String, defaults, oneofs).
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProtoGrpcType as CsiProto } from '../generated/csi.js';
import type { ProtoGrpcType as RegistryProto } from '../generated/registry.js';

const LOAD_OPTIONS: protoLoader.Options = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

/** Directory holding csi.proto and registry.proto (PMEM_CSI_PROTO_DIR overrides the search). */
export function protoDir(): string {
  const fromEnv = process.env['PMEM_CSI_PROTO_DIR'];
  if (fromEnv) return fromEnv;
  // src/grpc/ and dist/grpc/ are both four levels below the repository root (or the image's /app).
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'proto', 'csi.proto'))) return join(dir, 'proto');
    dir = resolve(dir, '..');
  }
  throw new Error('proto files not found: set PMEM_CSI_PROTO_DIR to the directory with csi.proto');
}

let csi: CsiProto | undefined;
let registry: RegistryProto | undefined;

/** The CSI v1 package (services Identity, Controller, Node), loaded once. */
export function loadCsi(): CsiProto {
  csi ??= grpc.loadPackageDefinition(protoLoader.loadSync('csi.proto', { ...LOAD_OPTIONS, includeDirs: [protoDir()] })) as unknown as CsiProto;
  return csi;
}

/** The controller<->node registry package, loaded once. */
export function loadRegistry(): RegistryProto {
  registry ??= grpc.loadPackageDefinition(protoLoader.loadSync('registry.proto', { ...LOAD_OPTIONS, includeDirs: [protoDir()] })) as unknown as RegistryProto;
  return registry;
}
