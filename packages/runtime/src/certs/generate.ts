// Issuing the driver's certificates: a self-signed CA and leaves with DNS SAN identities.
//
// Cost on the event loop (bench/keygen.bench.ts prints it): node-forge's pure-JS RSA key
// generation blocks for seconds, and node-forge's RSA signing for tens of milliseconds per
// certificate. So keys come from Node's asynchronous `crypto.generateKeyPair` (OpenSSL, on the
// libuv thread pool), the certificate is signed with Node's native `crypto.sign`, and node-forge
// only encodes ASN.1 (the TBSCertificate is assembled here, with the SubjectPublicKeyInfo exported
// by Node: node-forge's own certificate code understands RSA keys only). The event loop stays free
// while an operator issues certificates.
//
// Key type: ECDSA P-256 by default, RSA 2048/3072/4096 on request. Guidance (NIST SP 800-57 Part 1
// Rev. 5, BSI TR-02102-1): P-256 gives 128-bit security like RSA-3072 and is acceptable beyond
// 2030, RSA-2048 (112-bit) only through 2030. What it costs: every TLS handshake makes the server
// sign once, and with RSA-3072 that signature was most of the controller's CPU per node
// connection; P-256 signs many times faster (measured with the controller: e2e/bench/README.md,
// "Controller at 5,000 nodes"). Certificates issued by a CA of either type, and CAs of either
// type, are accepted everywhere; this code signs with RSA or ECDSA P-256 CA keys.
import {
  createHash,
  createPrivateKey,
  generateKeyPair,
  randomBytes,
  sign,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import type forge from 'node-forge';
import { InvalidArgumentError } from '@pmem-csi/csi';

type Forge = typeof forge;
type Asn1 = forge.asn1.Asn1;
let forgeModule: Promise<Forge> | undefined;

/**
 * node-forge, loaded on first use: only the operator and the certificate tools make certificates,
 * and loading it cost every driver process start-up time (e2e/bench/README.md, "Figures from the
 * code's comments").
 */
function loadForge(): Promise<Forge> {
  forgeModule ??= import('node-forge').then((m) => m.default);
  return forgeModule;
}

/** A certificate and its private key, both PEM (the key is PKCS#8). */
export interface CertificateAndKey {
  readonly certPem: string;
  readonly keyPem: string;
}

export type RsaKeyBits = 2048 | 3072 | 4096;

/** The key types of the certificates this code issues. */
export const KEY_TYPES = ['ecdsa-p256', 'rsa-2048', 'rsa-3072', 'rsa-4096'] as const;
export type KeyType = (typeof KEY_TYPES)[number];

/** Key type used unless a caller asks for another (see the header for why). */
export const DEFAULT_KEY_TYPE: KeyType = 'ecdsa-p256';

/** notBefore is set this far before `now`, so that peers whose clock lags a little accept new certificates. */
export const CLOCK_SKEW_ALLOWANCE_MS = 5 * 60 * 1000;

const MAX_VALIDITY_DAYS = 36500;
const DAY_MS = 24 * 60 * 60 * 1000;
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** How to choose the key of a new certificate: `keyType`, or the older `keyBits` (RSA of that size). */
export interface KeyChoice {
  /** Default DEFAULT_KEY_TYPE. */
  readonly keyType?: KeyType;
  /** Shorthand for keyType `rsa-<bits>`; giving both is an error unless they agree. */
  readonly keyBits?: RsaKeyBits;
}

export interface CreateCaOptions extends KeyChoice {
  readonly commonName: string;
  readonly validityDays: number;
  /** Start of validity (default: the current time). */
  readonly now?: Date;
}

export interface CreateLeafOptions extends KeyChoice {
  /** The issuing CA; its key must be RSA or ECDSA P-256. */
  readonly ca: CertificateAndKey;
  /** The identity: the only DNS SAN (and, for display, the CN). */
  readonly dnsName: string;
  readonly validityDays: number;
  readonly now?: Date;
}

/** The key type a choice stands for; throws InvalidArgumentError naming the field when it is not one we issue. */
export function keyTypeOf(choice: KeyChoice): KeyType {
  const { keyType, keyBits } = choice;
  if (keyType !== undefined && !(KEY_TYPES as readonly string[]).includes(keyType)) {
    throw new InvalidArgumentError(`keyType: must be one of ${KEY_TYPES.join(', ')}, got ${JSON.stringify(keyType)}`);
  }
  if (keyBits === undefined) return keyType ?? DEFAULT_KEY_TYPE;
  const rsa = `rsa-${keyBits}` as KeyType;
  if (!(KEY_TYPES as readonly string[]).includes(rsa)) {
    throw new InvalidArgumentError(`keyBits: must be 2048, 3072 or 4096, got ${String(keyBits)}`);
  }
  if (keyType !== undefined && keyType !== rsa) {
    throw new InvalidArgumentError(`keyBits: ${keyBits} means keyType ${rsa}, but keyType is ${keyType}`);
  }
  return rsa;
}

/** The key type of a certificate's or key's public key, when it is one we issue (else undefined). */
export function keyTypeOfKey(key: KeyObject): KeyType | undefined {
  const d = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType === 'ec') return d?.namedCurve === 'prime256v1' ? 'ecdsa-p256' : undefined;
  if (key.asymmetricKeyType !== 'rsa') return undefined;
  const rsa = `rsa-${d?.modulusLength ?? 0}`;
  return (KEY_TYPES as readonly string[]).includes(rsa) ? (rsa as KeyType) : undefined;
}

const generateKeyPairAsync = promisify(generateKeyPair);

interface KeyPair {
  readonly publicKey: KeyObject;
  readonly privateKeyPem: string;
}

/** A new key pair of `type`, generated by OpenSSL on the thread pool (never blocks the event loop). */
export async function generateKeys(type: KeyType = DEFAULT_KEY_TYPE): Promise<KeyPair> {
  const { publicKey, privateKey } =
    type === 'ecdsa-p256'
      ? await generateKeyPairAsync('ec', { namedCurve: 'prime256v1' })
      : await generateKeyPairAsync('rsa', { modulusLength: Number(type.slice(4)), publicExponent: 0x10001 });
  return { publicKey, privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** A random positive 128-bit serial number as minimal DER INTEGER hex (RFC 5280 4.1.2.2). */
export function randomSerialHex(): string {
  let bytes = randomBytes(16);
  while (bytes[0] === 0) bytes = randomBytes(16); // a leading zero octet would not be minimal DER
  const hex = bytes.toString('hex');
  return (bytes[0] ?? 0) >= 0x80 ? `00${hex}` : hex; // keep it positive
}

function checkValidityDays(days: number): void {
  if (!Number.isInteger(days) || days < 1 || days > MAX_VALIDITY_DAYS) {
    throw new InvalidArgumentError(`validityDays: must be an integer from 1 to ${MAX_VALIDITY_DAYS}, got ${days}`);
  }
}

function validity(now: Date | undefined, days: number): { notBefore: Date; notAfter: Date } {
  const start = (now ?? new Date()).getTime();
  return { notBefore: new Date(start - CLOCK_SKEW_ALLOWANCE_MS), notAfter: new Date(start + days * DAY_MS) };
}

// ---- DER, with node-forge's ASN.1 codec ------------------------------------------------------------

type ForgeAsn1Internals = {
  fromDer(bytes: string, options: { strict?: boolean; decodeBitStrings?: boolean }): Asn1;
};
type ForgePkiInternals = { certificateExtensionsToAsn1(exts: unknown[]): Asn1 };

const binary = (b: Buffer): string => b.toString('binary');
const OID = {
  commonName: '2.5.4.3',
  subjectKeyIdentifier: '2.5.29.14',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
} as const;

function fromDer(forge: Forge, der: Buffer): Asn1 {
  return (forge.asn1 as unknown as ForgeAsn1Internals).fromDer(binary(der), { decodeBitStrings: false });
}

const children = (node: Asn1 | undefined): Asn1[] => (Array.isArray(node?.value) ? node.value : []);

/** How an issuer key signs: digest and AlgorithmIdentifier (RFC 5754 / RFC 4055). */
interface Signer {
  readonly key: KeyObject;
  readonly digest: 'sha256';
  readonly algorithmOid: string;
}

function signerOf(key: KeyObject, field: string): Signer {
  if (key.asymmetricKeyType === 'rsa') return { key, digest: 'sha256', algorithmOid: OID.sha256WithRSAEncryption };
  const curve = key.asymmetricKeyType === 'ec' ? key.asymmetricKeyDetails?.namedCurve : undefined;
  if (curve === 'prime256v1') return { key, digest: 'sha256', algorithmOid: OID.ecdsaWithSha256 };
  const got = key.asymmetricKeyType === 'ec' ? `EC ${curve ?? 'unknown curve'}` : String(key.asymmetricKeyType);
  throw new InvalidArgumentError(`${field}: must be an RSA or ECDSA P-256 key, got ${got}`);
}

function algorithmIdentifier(forge: Forge, oid: string): Asn1 {
  const { asn1 } = forge;
  const parts = [asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OID, false, asn1.oidToDer(oid).getBytes())];
  // RSA's AlgorithmIdentifier carries NULL parameters; ECDSA's has none (RFC 5758 3.2).
  if (oid === OID.sha256WithRSAEncryption) parts.push(asn1.create(asn1.Class.UNIVERSAL, asn1.Type.NULL, false, ''));
  return asn1.create(asn1.Class.UNIVERSAL, asn1.Type.SEQUENCE, true, parts);
}

/** Name with one CommonName (UTF8String, RFC 5280 4.1.2.6). */
function commonNameAsn1(forge: Forge, cn: string): Asn1 {
  const { asn1 } = forge;
  const u = asn1.Class.UNIVERSAL;
  const atv = asn1.create(u, asn1.Type.SEQUENCE, true, [
    asn1.create(u, asn1.Type.OID, false, asn1.oidToDer(OID.commonName).getBytes()),
    asn1.create(u, asn1.Type.UTF8, false, forge.util.encodeUtf8(cn)),
  ]);
  return asn1.create(u, asn1.Type.SEQUENCE, true, [asn1.create(u, asn1.Type.SET, true, [atv])]);
}

/** UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5). */
function timeAsn1(forge: Forge, date: Date): Asn1 {
  const { asn1 } = forge;
  return date.getUTCFullYear() < 2050
    ? asn1.create(asn1.Class.UNIVERSAL, asn1.Type.UTCTIME, false, asn1.dateToUtcTime(date))
    : asn1.create(asn1.Class.UNIVERSAL, asn1.Type.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(date));
}

/** SHA-1 of the subjectPublicKey BIT STRING (RFC 5280 4.2.1.2, method 1), as a binary string. */
function keyIdentifierOf(forge: Forge, spkiDer: Buffer): string {
  const bits = children(fromDer(forge, spkiDer))[1];
  if (typeof bits?.value !== 'string') throw new InvalidArgumentError('public key: not a SubjectPublicKeyInfo');
  return createHash('sha1')
    .update(Buffer.from(bits.value.slice(1), 'binary')) // without the unused-bits octet
    .digest('binary');
}

interface TbsInput {
  readonly serialHex: string;
  readonly signer: Signer;
  readonly issuer: Asn1;
  readonly subject: Asn1;
  readonly times: { notBefore: Date; notAfter: Date };
  readonly spkiDer: Buffer;
  /** node-forge extension descriptions (values filled by node-forge; SKI/AKI given here). */
  readonly extensions: object[];
}

/** Encode, sign and PEM-encode a certificate. */
function issue(forge: Forge, t: TbsInput): string {
  const { asn1 } = forge;
  const u = asn1.Class.UNIVERSAL;
  const holder = forge.pki.createCertificate(); // fills the extensions' ids and values (none needs a key)
  holder.setExtensions(t.extensions as object[]);
  const tbs = asn1.create(u, asn1.Type.SEQUENCE, true, [
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [
      asn1.create(u, asn1.Type.INTEGER, false, asn1.integerToDer(2).getBytes()),
    ]),
    asn1.create(u, asn1.Type.INTEGER, false, forge.util.hexToBytes(t.serialHex)),
    algorithmIdentifier(forge, t.signer.algorithmOid),
    t.issuer,
    asn1.create(u, asn1.Type.SEQUENCE, true, [timeAsn1(forge, t.times.notBefore), timeAsn1(forge, t.times.notAfter)]),
    t.subject,
    fromDer(forge, t.spkiDer),
    (forge.pki as unknown as ForgePkiInternals).certificateExtensionsToAsn1(holder.extensions),
  ]);
  const tbsDer = Buffer.from(asn1.toDer(tbs).getBytes(), 'binary');
  const signature = sign(t.signer.digest, tbsDer, t.signer.key); // ECDSA: DER Ecdsa-Sig-Value, as X.509 wants
  const cert = asn1.create(u, asn1.Type.SEQUENCE, true, [
    tbs,
    algorithmIdentifier(forge, t.signer.algorithmOid),
    asn1.create(u, asn1.Type.BITSTRING, false, `\u0000${binary(signature)}`),
  ]);
  const b64 = Buffer.from(asn1.toDer(cert).getBytes(), 'binary').toString('base64');
  return `-----BEGIN CERTIFICATE-----\n${b64.replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}

const spkiOf = (key: KeyObject): Buffer => key.export({ type: 'spki', format: 'der' });

/** Create a self-signed CA (basicConstraints CA:TRUE pathlen 0, keyCertSign + cRLSign, SKI). */
export async function createCa(options: CreateCaOptions): Promise<CertificateAndKey> {
  if (options.commonName.trim() === '') throw new InvalidArgumentError('commonName: must not be empty');
  checkValidityDays(options.validityDays);
  const type = keyTypeOf(options);
  const [forge, keys] = await Promise.all([loadForge(), generateKeys(type)]);
  const spkiDer = spkiOf(keys.publicKey);
  const certPem = issue(forge, {
    serialHex: randomSerialHex(),
    signer: signerOf(createPrivateKey(keys.privateKeyPem), 'keyType'),
    issuer: commonNameAsn1(forge, options.commonName),
    subject: commonNameAsn1(forge, options.commonName),
    times: validity(options.now, options.validityDays),
    spkiDer,
    extensions: [
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
      subjectKeyIdentifier(forge, keyIdentifierOf(forge, spkiDer)),
    ],
  });
  return { certPem, keyPem: keys.privateKeyPem };
}

function subjectKeyIdentifier(forge: Forge, id: string): object {
  const { asn1 } = forge;
  return { name: 'subjectKeyIdentifier', value: asn1.create(asn1.Class.UNIVERSAL, asn1.Type.OCTETSTRING, false, id) };
}

interface LoadedCa {
  readonly signer: Signer;
  /** The CA's subject Name, as encoded in its certificate (a leaf's issuer must match it exactly). */
  readonly subject: Asn1;
  readonly notAfter: Date;
  /** Binary string: the CA's SKI, or computed from its key when it has none. */
  readonly keyIdentifier: string;
}

/** The fields of the TBSCertificate of a certificate's DER (version, serial, ..., extensions). */
function tbsFields(forge: Forge, der: Buffer): Asn1[] {
  const fields = children(children(fromDer(forge, der))[0]);
  // Without the explicit [0] version (v1), every field sits one place earlier.
  return fields[0]?.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC ? fields.slice(1) : fields;
}

/** The value of the SubjectKeyIdentifier extension, if any. */
function skiOf(forge: Forge, fields: Asn1[]): string | undefined {
  const { asn1 } = forge;
  const exts = fields.find((f) => f.tagClass === asn1.Class.CONTEXT_SPECIFIC && f.type === 3);
  for (const ext of children(children(exts)[0])) {
    const [oid, ...rest] = children(ext);
    const value = rest[rest.length - 1];
    if (typeof oid?.value !== 'string' || asn1.derToOid(oid.value) !== OID.subjectKeyIdentifier) continue;
    if (typeof value?.value !== 'string') return undefined;
    const inner = fromDer(forge, Buffer.from(value.value, 'binary'));
    return typeof inner.value === 'string' ? inner.value : undefined;
  }
  return undefined;
}

function loadCa(forge: Forge, ca: CertificateAndKey): LoadedCa {
  let x509: X509Certificate;
  let fields: Asn1[];
  try {
    x509 = new X509Certificate(ca.certPem);
    fields = tbsFields(forge, x509.raw);
  } catch {
    throw new InvalidArgumentError('ca.certPem: not a PEM X.509 certificate');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(ca.keyPem);
  } catch {
    throw new InvalidArgumentError('ca.keyPem: not a PEM private key');
  }
  if (!x509.ca) throw new InvalidArgumentError('ca.certPem: not a CA certificate (basicConstraints CA:TRUE missing)');
  const signer = signerOf(key, 'ca.keyPem');
  if (!x509.checkPrivateKey(key)) throw new InvalidArgumentError('ca.keyPem: does not match ca.certPem');
  const subject = fields[4];
  if (subject === undefined) throw new InvalidArgumentError('ca.certPem: not a PEM X.509 certificate');
  const keyIdentifier = skiOf(forge, fields) ?? keyIdentifierOf(forge, spkiOf(x509.publicKey));
  return { signer, subject, notAfter: new Date(x509.validTo), keyIdentifier };
}

/**
 * Create a leaf certificate signed by `ca` whose identity is the DNS SAN `dnsName` (serverAuth +
 * clientAuth, digitalSignature (+ keyEncipherment for RSA keys), AKI/SKI, random 128-bit serial).
 * Its notAfter never exceeds the CA's: a leaf cannot outlive its issuer.
 */
export async function createLeaf(options: CreateLeafOptions): Promise<CertificateAndKey> {
  if (!DNS_NAME.test(options.dnsName)) {
    throw new InvalidArgumentError(`dnsName: must be a lower-case DNS name (RFC 1123), got "${options.dnsName}"`);
  }
  checkValidityDays(options.validityDays);
  const type = keyTypeOf(options);
  const forge = await loadForge();
  const ca = loadCa(forge, options.ca);
  const keys = await generateKeys(type);
  const times = validity(options.now, options.validityDays);
  if (times.notAfter > ca.notAfter) times.notAfter = ca.notAfter;
  const spkiDer = spkiOf(keys.publicKey);
  // keyEncipherment is RSA key transport (TLS 1.2 static RSA); an EC key only signs (RFC 5480 3).
  const rsa = type !== 'ecdsa-p256';
  const certPem = issue(forge, {
    serialHex: randomSerialHex(),
    signer: ca.signer,
    issuer: ca.subject,
    subject: commonNameAsn1(forge, options.dnsName),
    times,
    spkiDer,
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: rsa, critical: true },
      { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: options.dnsName }] },
      subjectKeyIdentifier(forge, keyIdentifierOf(forge, spkiDer)),
      { name: 'authorityKeyIdentifier', keyIdentifier: ca.keyIdentifier },
    ],
  });
  return { certPem, keyPem: keys.privateKeyPem };
}
