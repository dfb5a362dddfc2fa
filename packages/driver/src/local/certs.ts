// Certificates for the local stack, made by the project's own certificate code: one CA, a registry
// certificate (SAN pmem-registry) for the controller and a node-controller certificate (SAN
// pmem-node-controller) shared by the node drivers. Keys are written with mode 0600.
import { NODE_CONTROLLER_SAN, REGISTRY_SAN } from '@pmem-csi/api';
import { createCa, createLeaf, type KeyType, type TlsFiles } from '@pmem-csi/runtime';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface LocalCerts {
  readonly registry: TlsFiles;
  readonly nodeController: TlsFiles;
}

async function writeSet(dir: string, caPem: string, leaf: { certPem: string; keyPem: string }): Promise<TlsFiles> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const files = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  await writeFile(files.caFile, caPem);
  await writeFile(files.certFile, leaf.certPem);
  await writeFile(files.keyFile, leaf.keyPem, { mode: 0o600 });
  return files;
}

export interface LocalCertsOptions {
  /** Key type of all three certificates (default: the runtime's, ECDSA P-256, as the operator issues). */
  readonly keyType?: KeyType;
  readonly validityDays?: number;
  readonly commonName?: string;
}

/** Create a fresh CA and both leaf certificates under `dir`. */
export async function makeLocalCerts(dir: string, options: LocalCertsOptions = {}): Promise<LocalCerts> {
  const { keyType, validityDays = 7, commonName = 'pmem-csi local CA' } = options;
  const key = keyType === undefined ? {} : { keyType };
  const ca = await createCa({ commonName, validityDays, ...key });
  const [registry, nodeController] = await Promise.all([
    createLeaf({ ca, dnsName: REGISTRY_SAN, validityDays, ...key }),
    createLeaf({ ca, dnsName: NODE_CONTROLLER_SAN, validityDays, ...key }),
  ]);
  return {
    registry: await writeSet(join(dir, 'registry'), ca.certPem, registry),
    nodeController: await writeSet(join(dir, 'node-controller'), ca.certPem, nodeController),
  };
}
