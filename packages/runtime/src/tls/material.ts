// Loading one consistent set of TLS files (CA bundle, certificate chain, private key) and checking
// it before anyone uses it: every file parses, the key matches the certificate and OpenSSL accepts
// the combination. Errors name the file and what is wrong, never the key's content.
import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';
import { describeX509, splitPemCertificates, type CertificateInfo } from '../certs/inspect.js';
import { FailedPreconditionError, InvalidArgumentError } from '@pmem-csi/csi';

/** Paths of a TLS file set, e.g. a mounted Kubernetes Secret (`ca.crt`, `tls.crt`, `tls.key`). */
export interface TlsFiles {
  /** PEM bundle of the CA certificates that peers' certificates must chain to. */
  readonly caFile: string;
  /** PEM of our certificate, optionally followed by intermediates. */
  readonly certFile: string;
  /** PEM private key of our certificate. */
  readonly keyFile: string;
}

/** The lowest TLS version the driver speaks, on both ends. */
export const MIN_TLS_VERSION = 'TLSv1.2';

/**
 * The cipher suites the driver speaks, on both ends: the TLS 1.3 suites, and for TLS 1.2 only
 * forward-secret ECDHE key exchange with AEAD encryption. Node's default list also allows static-RSA
 * key exchange (no forward secrecy) and CBC with SHA-1, which a peer could ask for.
 */
export const TLS_CIPHERS = [
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'TLS_AES_128_GCM_SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
].join(':');

/** A validated TLS file set, ready to configure a server or a client. */
export interface TlsMaterial {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
  /** Our own (first) certificate. */
  readonly certificate: CertificateInfo;
  /** Number of certificates in the CA bundle. */
  readonly caCount: number;
  /** SHA-256 over the three files' contents: equal digests mean equal material. */
  readonly digest: string;
  /** Client-side context built from this material (TLS >= 1.2). */
  readonly secureContext: SecureContext;
}

/** Raw file contents, as read. */
export interface TlsFileContents {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

async function readOne(path: string, field: keyof TlsFiles): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw new FailedPreconditionError(`${field} ${path}: cannot be read (${code})`);
  }
}

/** Read the three files (no validation). */
export async function readTlsFiles(files: TlsFiles): Promise<TlsFileContents> {
  const [ca, cert, key] = await Promise.all([
    readOne(files.caFile, 'caFile'),
    readOne(files.certFile, 'certFile'),
    readOne(files.keyFile, 'keyFile'),
  ]);
  return { ca, cert, key };
}

/** SHA-256 over the three contents (length-prefixed, so boundaries cannot shift). */
export function digestOf(contents: TlsFileContents): string {
  const h = createHash('sha256');
  for (const part of [contents.ca, contents.cert, contents.key]) {
    h.update(`${part.length}:`);
    h.update(part);
  }
  return h.digest('hex');
}

function parseCerts(pem: string, what: string): X509Certificate[] {
  const blocks = splitPemCertificates(pem);
  if (blocks.length === 0) throw new InvalidArgumentError(`${what}: no PEM "CERTIFICATE" block found`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new InvalidArgumentError(`${what}: certificate #${i + 1} cannot be parsed`);
    }
  });
}

function parseKey(pem: Buffer, files: TlsFiles): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch {
    throw new InvalidArgumentError(`keyFile ${files.keyFile}: not a PEM private key`);
  }
}

/** The options our TLS endpoints use for this material. */
export function contextOptionsOf(material: Pick<TlsMaterial, 'ca' | 'cert' | 'key'>): SecureContextOptions {
  return { ca: material.ca, cert: material.cert, key: material.key, minVersion: MIN_TLS_VERSION, ciphers: TLS_CIPHERS };
}

/**
 * Check contents read from `files` and turn them into material. Throws InvalidArgumentError
 * naming the file when something does not parse or the key does not belong to the certificate.
 */
export function validateTlsContents(contents: TlsFileContents, files: TlsFiles): TlsMaterial {
  const cas = parseCerts(contents.ca.toString('utf8'), `caFile ${files.caFile}`);
  const [leaf] = parseCerts(contents.cert.toString('utf8'), `certFile ${files.certFile}`);
  const key = parseKey(contents.key, files);
  if (leaf === undefined) throw new InvalidArgumentError(`certFile ${files.certFile}: no certificate`);
  if (!leaf.checkPrivateKey(key)) {
    throw new InvalidArgumentError(`keyFile ${files.keyFile}: does not match the certificate in ${files.certFile}`);
  }
  let secureContext: SecureContext;
  try {
    secureContext = createSecureContext(contextOptionsOf(contents));
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw new InvalidArgumentError(
      `TLS files ${files.certFile}, ${files.keyFile}: rejected by OpenSSL (${String(code ?? 'error')})`,
    );
  }
  return {
    ...contents,
    certificate: describeX509(leaf),
    caCount: cas.length,
    digest: digestOf(contents),
    secureContext,
  };
}

/** Read and validate a TLS file set. */
export async function loadTlsMaterial(files: TlsFiles): Promise<TlsMaterial> {
  return validateTlsContents(await readTlsFiles(files), files);
}
