// The certificates of the mutual-TLS campaign, made with the project's own certificate code
// (@pmem-csi/runtime createCa/createLeaf, OpenSSL keys of the default type, ECDSA P-256, as the
// operator issues them; PMEM_CSI_CAMPAIGN_KEY_TYPE=rsa-2048 runs it with RSA): the trusted CA and the two
// identities the driver uses, a second CA for rotation, and the hostile ones — a foreign CA, an
// expired certificate, one not valid yet, one with a wrong identity. Files are replaced atomically
// (temporary file + rename), as a Kubernetes secret update would appear to a polling reader.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NODE_CONTROLLER_SAN, REGISTRY_SAN } from '@pmem-csi/api';
import {
  createCa,
  createLeaf,
  keyTypeOf,
  type CertificateAndKey,
  type KeyType,
  type TlsFiles,
} from '@pmem-csi/runtime';

const DAY = 24 * 60 * 60 * 1000;
/** The key type of every campaign certificate (default: what the operator issues). */
export const campaignKeyType = (): KeyType =>
  keyTypeOf({ keyType: process.env['PMEM_CSI_CAMPAIGN_KEY_TYPE'] as KeyType | undefined });
const keyType = campaignKeyType();

export interface CampaignPki {
  readonly ca: CertificateAndKey;
  readonly registry: CertificateAndKey;
  readonly nodeController: CertificateAndKey;
  /** A second CA and identities it signed (rotation). */
  readonly ca2: CertificateAndKey;
  readonly registry2: CertificateAndKey;
  readonly nodeController2: CertificateAndKey;
  /** A CA nobody trusts. */
  readonly foreignCa: CertificateAndKey;
  /** Hostile client certificates per identity, keyed by case. */
  readonly hostile: (identity: string) => Promise<HostileCerts>;
}

export interface HostileCerts {
  /** The right identity, signed by the foreign CA. */
  readonly wrongCa: CertificateAndKey;
  /** The right identity and CA, valid from 400 to 370 days ago. */
  readonly expired: CertificateAndKey;
  /** The right identity and CA, valid from 30 days on. */
  readonly notYetValid: CertificateAndKey;
  /** Trusted CA, but an identity the server does not accept. */
  readonly wrongSan: CertificateAndKey;
}

/** A leaf certificate for `dnsName` signed by `ca` (30 days from `now` unless told otherwise). */
export const leaf = (
  ca: CertificateAndKey,
  dnsName: string,
  o: { now?: Date; validityDays?: number } = {},
): Promise<CertificateAndKey> =>
  createLeaf({ ca, dnsName, validityDays: o.validityDays ?? 30, keyType, ...(o.now ? { now: o.now } : {}) });

/** Make the campaign's PKI (about 2 s of key generation off the event loop). */
export async function makeCampaignPki(): Promise<CampaignPki> {
  const [ca, ca2, foreignCa] = await Promise.all([
    createCa({ commonName: 'campaign CA', validityDays: 30, keyType }),
    createCa({ commonName: 'campaign CA 2', validityDays: 30, keyType }),
    createCa({ commonName: 'foreign CA', validityDays: 30, keyType }),
  ]);
  const [registry, nodeController, registry2, nodeController2] = await Promise.all([
    leaf(ca, REGISTRY_SAN),
    leaf(ca, NODE_CONTROLLER_SAN),
    leaf(ca2, REGISTRY_SAN),
    leaf(ca2, NODE_CONTROLLER_SAN),
  ]);
  const hostile = async (identity: string): Promise<HostileCerts> => {
    const [wrongCa, expired, notYetValid, wrongSan] = await Promise.all([
      leaf(foreignCa, identity),
      leaf(ca, identity, { now: new Date(Date.now() - 400 * DAY) }),
      leaf(ca, identity, { now: new Date(Date.now() + 30 * DAY) }),
      leaf(ca, 'pmem-intruder'),
    ]);
    return { wrongCa, expired, notYetValid, wrongSan };
  };
  return { ca, registry, nodeController, ca2, registry2, nodeController2, foreignCa, hostile };
}

async function atomicWrite(path: string, data: string, mode: number): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`;
  await writeFile(tmp, data, { mode });
  await rename(tmp, path);
}

/** Write (or replace) ca.crt, tls.crt and tls.key in `dir`; `caPem` may be a bundle. */
export async function writeTlsSet(dir: string, caPem: string, pair: CertificateAndKey): Promise<TlsFiles> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const files = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  // Key first, then certificate: a reader in between sees a mismatch and keeps its old material.
  await atomicWrite(files.keyFile, pair.keyPem, 0o600);
  await atomicWrite(files.certFile, pair.certPem, 0o644);
  await atomicWrite(files.caFile, caPem, 0o644);
  return files;
}

/** The base64 body lines of a PEM private key: none of them may ever appear in a log. */
export function keyMaterialLines(pair: CertificateAndKey): string[] {
  return pair.keyPem.split('\n').filter((l) => l !== '' && !l.startsWith('-----'));
}
