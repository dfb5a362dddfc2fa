// Certificates from the operator's own CA, planned from what the Secrets hold now:
// - the CA (certificate + key in the CA Secret) is reused while valid and not due for renewal,
//   otherwise a new one is created; the trust bundle (ca.crt) is the active CA followed by every
//   older CA that has not expired yet, so peers with certificates of the old CA keep trusting each
//   other during the overlap (the Go operator threw the CA key away and could never renew);
// - a leaf is reissued at once when it is missing, broken, expired, has the wrong identity or is
//   not signed by a CA of the bundle; it is renewed when `renewAtFraction` of its life has passed;
//   and it moves to a new CA only after the new CA has been in the bundles for `propagationMs`
//   (kubelet refreshes mounted Secrets within about a minute and the driver reloads them), so that
//   no peer ever meets a certificate of a CA it does not trust yet;
// - keys are ECDSA P-256 unless the policy says otherwise (the registry's key signs once per node
//   connection: see the runtime's certs/generate.ts). A leaf whose key is of another type than the
//   policy's is reissued under the active CA at the next reconcile (after an upgrade from RSA
//   leaves: one Secret update each, which the driver reloads; its CA stays trusted, so no
//   propagation wait). The CA keeps its key type until it is renewed: its key only signs leaves,
//   and peers verify an RSA signature as cheaply as an ECDSA one.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import {
  CLOCK_SKEW_ALLOWANCE_MS,
  describeX509,
  hasDnsName,
  needsRenewal,
  parseCertificateBundle,
  renewalTime,
  type CertificateAndKey,
  type CertificateInfo,
  type CreateCaOptions,
  type CreateLeafOptions,
  keyTypeOf,
  keyTypeOfKey,
  type KeyType,
  type RsaKeyBits,
} from '@pmem-csi/runtime';
import type { TlsMaterial } from '../objects/context.js';

/** How the operator issues and renews its certificates. */
export interface CertificatePolicy {
  readonly caValidityDays: number;
  readonly leafValidityDays: number;
  /** Renew after this fraction of a certificate's lifetime, in (0, 1). */
  readonly renewAtFraction: number;
  /** How long a new CA sits in the trust bundles before leaves are signed by it. */
  readonly propagationMs: number;
  /** Key type of new certificates; undefined = the runtime's default (ECDSA P-256). */
  readonly keyType?: KeyType;
  /** Older form of keyType for RSA: `rsa-<keyBits>`. */
  readonly keyBits?: RsaKeyBits;
  /** Upper bound of the verification handshake of user-supplied certificates. */
  readonly handshakeTimeoutMs: number;
}

export const DEFAULT_CERTIFICATE_POLICY: CertificatePolicy = {
  caValidityDays: 5 * 365,
  leafValidityDays: 365,
  renewAtFraction: 0.8,
  propagationMs: 10 * 60 * 1000,
  handshakeTimeoutMs: 10_000,
};

export const CA_COMMON_NAME = 'pmem-csi operator CA';

/** Issuing functions (the runtime's; injectable so tests can count or fail them). */
export interface Issuer {
  createCa(options: CreateCaOptions): Promise<CertificateAndKey>;
  createLeaf(options: CreateLeafOptions): Promise<CertificateAndKey>;
}

export interface OwnCaInput {
  /** What the CA Secret holds now (all undefined on a fresh install). */
  readonly ca: Partial<TlsMaterial>;
  readonly registry: { readonly identity: string; readonly existing: Partial<TlsMaterial> };
  readonly node: { readonly identity: string; readonly existing: Partial<TlsMaterial> };
  readonly now: Date;
  readonly policy: CertificatePolicy;
  readonly issuer: Issuer;
}

export interface OwnCaResult {
  readonly ca: TlsMaterial;
  readonly registry: TlsMaterial;
  readonly node: TlsMaterial;
  /** What was (re)issued, e.g. ["ca created", "registry issued"]; empty when nothing changed. */
  readonly changes: readonly string[];
  /** When to look again: a renewal, the end of a propagation window or an old CA's expiry. */
  readonly nextCheck: Date;
  readonly caNotAfter: Date;
  readonly registryNotAfter: Date;
  readonly nodeNotAfter: Date;
}

interface Cert {
  readonly pem: string;
  readonly x509: X509Certificate;
  readonly info: CertificateInfo;
}

interface ActiveCa extends Cert {
  readonly keyPem: string;
}

function parseCert(pem: string | undefined): Cert | undefined {
  if (pem === undefined) return undefined;
  try {
    const x509 = new X509Certificate(pem);
    return { pem: x509.toString(), x509, info: describeX509(x509) };
  } catch {
    return undefined;
  }
}

function keyMatches(cert: Cert, keyPem: string | undefined): boolean {
  if (keyPem === undefined) return false;
  try {
    return cert.x509.checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

function issuedBy(leaf: Cert, ca: Cert): boolean {
  return leaf.x509.checkIssued(ca.x509) && leaf.x509.verify(ca.x509.publicKey);
}

/** The key type the policy asks for (throws InvalidArgumentError naming keyType/keyBits when they disagree). */
const keyTypeFor = (policy: CertificatePolicy): { keyType: KeyType } => ({
  keyType: keyTypeOf({
    ...(policy.keyType === undefined ? {} : { keyType: policy.keyType }),
    ...(policy.keyBits === undefined ? {} : { keyBits: policy.keyBits }),
  }),
});

async function activeCa(input: OwnCaInput, changes: string[]): Promise<ActiveCa> {
  const cert = parseCert(input.ca.certPem);
  const renewal = { now: input.now, renewAtFraction: input.policy.renewAtFraction };
  if (cert !== undefined && cert.info.isCa && keyMatches(cert, input.ca.keyPem) && !needsRenewal(cert.info, renewal)) {
    return { ...cert, keyPem: input.ca.keyPem as string };
  }
  changes.push(cert === undefined ? 'ca created' : 'ca renewed');
  const pair = await input.issuer.createCa({
    commonName: CA_COMMON_NAME,
    validityDays: input.policy.caValidityDays,
    now: input.now,
    ...keyTypeFor(input.policy),
  });
  return { ...(parseCert(pair.certPem) as Cert), keyPem: pair.keyPem };
}

/** The active CA first, then every other CA of the old bundle that is still valid. */
function trustBundle(active: ActiveCa, oldBundlePem: string | undefined, now: Date): Cert[] {
  let old: CertificateInfo[] = [];
  try {
    old = oldBundlePem === undefined ? [] : parseCertificateBundle(oldBundlePem);
  } catch {
    old = [];
  }
  const others = old
    .filter((c) => c.isCa && c.notAfter > now && c.fingerprint256 !== active.info.fingerprint256)
    .map((c) => parseCert(c.pem))
    .filter((c): c is Cert => c !== undefined);
  const unique = others.filter(
    (c, i) => others.findIndex((o) => o.info.fingerprint256 === c.info.fingerprint256) === i,
  );
  return [active, ...unique];
}

/** Why a leaf cannot be kept at all (undefined = usable). */
function leafProblem(
  leaf: Cert | undefined,
  keyPem: string | undefined,
  identity: string,
  ctx: { bundle: Cert[]; now: Date },
): string | undefined {
  if (leaf === undefined) return 'missing';
  if (!keyMatches(leaf, keyPem)) return 'key does not match';
  if (ctx.now >= leaf.info.notAfter) return 'expired';
  if (!hasDnsName(leaf.info.dnsNames, identity)) return `identity is not ${identity}`;
  if (!ctx.bundle.some((ca) => issuedBy(leaf, ca))) return 'not signed by a trusted CA';
  return undefined;
}

interface LeafOutcome {
  readonly material: TlsMaterial;
  readonly notAfter: Date;
  readonly nextCheck: Date;
}

/** Why a usable leaf of the active CA is replaced now: renewal, or a key type other than the policy's. */
function dueReason(leaf: Cert, label: string, policy: CertificatePolicy, now: Date): string | undefined {
  if (needsRenewal(leaf.info, { now, renewAtFraction: policy.renewAtFraction })) return `${label} renewed`;
  const wanted = keyTypeFor(policy).keyType;
  const actual = keyTypeOfKey(leaf.x509.publicKey) ?? 'another key type';
  return actual === wanted ? undefined : `${label} reissued (key ${actual}, policy ${wanted})`;
}

async function planLeaf(
  label: string,
  request: OwnCaInput['registry'],
  ctx: { input: OwnCaInput; active: ActiveCa; bundle: Cert[]; changes: string[] },
): Promise<LeafOutcome> {
  const { input, active, bundle } = ctx;
  const bundlePem = bundle.map((c) => c.pem).join('');
  const leaf = parseCert(request.existing.certPem);
  const problem = leafProblem(leaf, request.existing.keyPem, request.identity, { bundle, now: input.now });
  const propagationEnd = new Date(
    active.info.notBefore.getTime() + CLOCK_SKEW_ALLOWANCE_MS + input.policy.propagationMs,
  );
  let why = problem === undefined ? undefined : `${label} issued (${problem})`;
  if (why === undefined && leaf !== undefined && !issuedBy(leaf, active)) {
    if (input.now < propagationEnd) {
      return {
        material: { caBundlePem: bundlePem, certPem: leaf.pem, keyPem: request.existing.keyPem as string },
        notAfter: leaf.info.notAfter,
        nextCheck: propagationEnd,
      };
    }
    why = `${label} moved to the new CA`;
  }
  if (why === undefined && leaf !== undefined) why = dueReason(leaf, label, input.policy, input.now);
  if (why === undefined && leaf !== undefined) {
    const material = { caBundlePem: bundlePem, certPem: leaf.pem, keyPem: request.existing.keyPem as string };
    return { material, notAfter: leaf.info.notAfter, nextCheck: renewalTime(leaf.info, input.policy.renewAtFraction) };
  }
  ctx.changes.push(why ?? `${label} issued`);
  const pair = await input.issuer.createLeaf({
    ca: { certPem: active.pem, keyPem: active.keyPem },
    dnsName: request.identity,
    validityDays: input.policy.leafValidityDays,
    now: input.now,
    ...keyTypeFor(input.policy),
  });
  const issued = parseCert(pair.certPem) as Cert;
  return {
    material: { caBundlePem: bundlePem, certPem: issued.pem, keyPem: pair.keyPem },
    notAfter: issued.info.notAfter,
    nextCheck: renewalTime(issued.info, input.policy.renewAtFraction),
  };
}

const earliest = (dates: Date[]): Date => new Date(Math.min(...dates.map((d) => d.getTime())));

/** Plan the CA and both leaves; issues only what is missing, invalid or due. */
export async function planOwnCa(input: OwnCaInput): Promise<OwnCaResult> {
  const changes: string[] = [];
  const active = await activeCa(input, changes);
  const bundle = trustBundle(active, input.ca.caBundlePem, input.now);
  const ctx = { input, active, bundle, changes };
  const registry = await planLeaf('registry', input.registry, ctx);
  const node = await planLeaf('node-controller', input.node, ctx);
  const checks = [
    renewalTime(active.info, input.policy.renewAtFraction),
    registry.nextCheck,
    node.nextCheck,
    ...bundle.slice(1).map((c) => c.info.notAfter),
  ];
  return {
    ca: { caBundlePem: bundle.map((c) => c.pem).join(''), certPem: active.pem, keyPem: active.keyPem },
    registry: registry.material,
    node: node.material,
    changes,
    nextCheck: earliest(checks),
    caNotAfter: active.info.notAfter,
    registryNotAfter: registry.notAfter,
    nodeNotAfter: node.notAfter,
  };
}
