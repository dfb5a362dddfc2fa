// Reading certificates: PEM splitting, the facts the operator and the TLS layer need (names,
// validity, CA flag, serial, fingerprint) and the renewal rule. Parsing uses Node's native
// X509Certificate, not node-forge, so certificates with any key type (RSA, EC, Ed25519) that a
// user supplies can be inspected; node-forge only understands RSA keys.
import { X509Certificate } from 'node:crypto';
import { InvalidArgumentError } from '@pmem-csi/csi';

/** What the driver needs to know about one certificate. */
export interface CertificateInfo {
  /** Subject CommonName, for display only: identities are the DNS SANs. */
  readonly subjectCN: string | undefined;
  /** DNS subject alternative names, in certificate order. */
  readonly dnsNames: readonly string[];
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** basicConstraints CA:TRUE. */
  readonly isCa: boolean;
  /** Serial number, upper-case hex without separators. */
  readonly serial: string;
  /** SHA-256 fingerprint of the DER encoding, upper-case hex pairs separated by ':'. */
  readonly fingerprint256: string;
  /** This certificate alone, as PEM. */
  readonly pem: string;
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
// Node renders SANs as "DNS:a, DNS:b, IP Address:1.2.3.4"; a value with special characters
// (comma, quote, ...) is JSON-quoted with commas escaped as \u002c, so ", " only separates entries.
const SAN_ENTRY = /(?:^|, )([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)/g;

/** The PEM certificate blocks of a text, in order (other blocks and text are ignored). */
export function splitPemCertificates(pem: string): string[] {
  return pem.match(PEM_CERT)?.map((block) => `${block}\n`) ?? [];
}

function unquote(value: string): string {
  if (!value.startsWith('"')) return value;
  try {
    const parsed: unknown = JSON.parse(value);
    return typeof parsed === 'string' ? parsed : value;
  } catch {
    return value;
  }
}

/** The DNS names of a Node-rendered subjectAltName string (X509Certificate or TLS peer certificate). */
export function parseDnsSans(subjectAltName: string | undefined): string[] {
  if (!subjectAltName) return [];
  const names: string[] = [];
  for (const m of subjectAltName.matchAll(SAN_ENTRY)) {
    if (m[1] === 'DNS' && m[2] !== undefined) names.push(unquote(m[2]));
  }
  return names;
}

/** Whether `dnsNames` contains `expected` (exact, case-insensitive; no wildcards, no CN). */
export function hasDnsName(dnsNames: readonly string[], expected: string): boolean {
  const want = expected.toLowerCase();
  return dnsNames.some((n) => n.toLowerCase() === want);
}

function commonNameOf(subject: string): string | undefined {
  const line = subject.split('\n').find((l) => l.startsWith('CN='));
  return line === undefined ? undefined : unquote(line.slice(3));
}

/** Facts of an X509Certificate already parsed by Node (e.g. a TLS peer's `raw` DER). */
export function describeX509(x: X509Certificate): CertificateInfo {
  return {
    subjectCN: commonNameOf(x.subject),
    dnsNames: parseDnsSans(x.subjectAltName),
    notBefore: new Date(x.validFrom),
    notAfter: new Date(x.validTo),
    isCa: x.ca,
    serial: x.serialNumber.toUpperCase(),
    fingerprint256: x.fingerprint256,
    pem: x.toString(),
  };
}

function parseOne(pem: string, what: string): CertificateInfo {
  try {
    return describeX509(new X509Certificate(pem));
  } catch {
    throw new InvalidArgumentError(`${what} cannot be parsed as an X.509 certificate`);
  }
}

/** Inspect the first certificate of a PEM text (a leaf followed by its chain is fine). */
export function inspectCertificate(pem: string): CertificateInfo {
  const first = splitPemCertificates(pem)[0];
  if (first === undefined) throw new InvalidArgumentError('certificate: no PEM "CERTIFICATE" block found');
  return parseOne(first, 'certificate');
}

/** Inspect every certificate of a PEM bundle (e.g. old and new CA during a rotation). */
export function parseCertificateBundle(pem: string): CertificateInfo[] {
  const blocks = splitPemCertificates(pem);
  if (blocks.length === 0) throw new InvalidArgumentError('certificate bundle: no PEM "CERTIFICATE" block found');
  return blocks.map((block, i) => parseOne(block, `certificate #${i + 1} of the bundle`));
}

export interface RenewalPolicy {
  readonly now: Date;
  /** Fraction of the lifetime after which to renew, in (0, 1]; e.g. 0.8 = renew after 80 %. */
  readonly renewAtFraction: number;
}

/** The moment at which `renewAtFraction` of the certificate's lifetime has passed. */
export function renewalTime(cert: CertificateInfo | string, renewAtFraction: number): Date {
  if (!(renewAtFraction > 0 && renewAtFraction <= 1)) {
    throw new InvalidArgumentError(`renewAtFraction: must be in (0, 1], got ${renewAtFraction}`);
  }
  const info = typeof cert === 'string' ? inspectCertificate(cert) : cert;
  const start = info.notBefore.getTime();
  const lifetime = info.notAfter.getTime() - start;
  return new Date(start + Math.floor(lifetime * renewAtFraction));
}

/**
 * True once `renewAtFraction` of the lifetime has passed (or the certificate has expired). Works
 * for CA and leaf certificates alike; a certificate that is not valid yet does not need renewal.
 */
export function needsRenewal(cert: CertificateInfo | string, policy: RenewalPolicy): boolean {
  const info = typeof cert === 'string' ? inspectCertificate(cert) : cert;
  const now = policy.now.getTime();
  if (now >= info.notAfter.getTime()) return true;
  return now >= renewalTime(info, policy.renewAtFraction).getTime();
}
