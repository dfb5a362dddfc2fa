// Certificate planning: from the CR and the Secrets that exist now, the contents the certificate
// Secrets must have and the certificate conditions. No Kubernetes I/O (the reconciler reads and
// applies the Secrets), so every case is unit-tested with real certificates.
// - No certificates in the spec: the operator's own CA (own-ca.ts) -> CertsReady.
// - Certificates in the spec: verified by a real mutual-TLS handshake between the registry and
//   node-controller certificates -> CertsVerified True, or False with the reason, and then
//   nothing at all may be deployed with them.
import { createHash } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import {
  NODE_CONTROLLER_SAN,
  REGISTRY_SAN,
  formatTimestamp,
  userCertificates,
  type ConditionUpdate,
  type UserCertificates,
} from '@pmem-csi/api';
import { parseCertificateBundle, type HandshakeInput, type HandshakeResult } from '@pmem-csi/runtime';
import { planOwnCa, type CertificatePolicy, type Issuer } from './own-ca.js';
import type { CertificateSecrets, OwnerDeployment } from '../objects/context.js';
import { readTlsSecret } from '../objects/secrets.js';

export { DEFAULT_CERTIFICATE_POLICY, type CertificatePolicy, type Issuer } from './own-ca.js';

export type VerifyCertificates = (input: HandshakeInput) => Promise<HandshakeResult>;

export interface CertDeps {
  readonly policy: CertificatePolicy;
  readonly issuer: Issuer;
  readonly verify: VerifyCertificates;
}

/** The certificate Secrets as they exist now (undefined = absent). */
export interface ExistingCertSecrets {
  readonly ca?: V1Secret;
  readonly registry?: V1Secret;
  readonly node?: V1Secret;
}

export interface CertPlanInput {
  readonly cr: OwnerDeployment;
  readonly existing: ExistingCertSecrets;
  readonly now: Date;
}

export const CERT_REASONS = {
  verified: 'HandshakeSucceeded',
  verifyFailed: 'HandshakeFailed',
  operatorIssued: 'OperatorIssued',
  userSupplied: 'UserSupplied',
  notVerified: 'CertificatesNotVerified',
} as const;

export type CertPlan =
  | {
      readonly ok: true;
      readonly secrets: CertificateSecrets;
      /** CertsVerified (user certificates only; undefined means the condition does not apply). */
      readonly verified?: ConditionUpdate;
      /** CertsReady, to be set once the Secrets are applied. */
      readonly ready: ConditionUpdate;
      readonly changes: readonly string[];
      readonly nextCheck: Date;
    }
  | {
      readonly ok: false;
      readonly verified: ConditionUpdate;
      readonly ready: ConditionUpdate;
      readonly reason: string;
    };

/** Plan the certificate Secrets of one PmemCSIDeployment. */
export async function planCertificates(input: CertPlanInput, deps: CertDeps): Promise<CertPlan> {
  const user = userCertificates(input.cr.spec);
  return user === undefined ? planOperatorCertificates(input, deps) : planUserCertificates(user, input, deps);
}

async function planOperatorCertificates(input: CertPlanInput, deps: CertDeps): Promise<CertPlan> {
  const result = await planOwnCa({
    ca: readTlsSecret(input.existing.ca),
    registry: { identity: REGISTRY_SAN, existing: readTlsSecret(input.existing.registry) },
    node: { identity: NODE_CONTROLLER_SAN, existing: readTlsSecret(input.existing.node) },
    now: input.now,
    policy: deps.policy,
    issuer: deps.issuer,
  });
  const message = `issued by the operator's CA (valid until ${formatTimestamp(result.caNotAfter)}); registry certificate valid until ${formatTimestamp(result.registryNotAfter)}, node-controller certificate until ${formatTimestamp(result.nodeNotAfter)}`;
  return {
    ok: true,
    secrets: { ca: result.ca, registry: result.registry, node: result.node },
    ready: { type: 'CertsReady', status: 'True', reason: CERT_REASONS.operatorIssued, message },
    changes: result.changes,
    nextCheck: result.nextCheck,
  };
}

async function planUserCertificates(user: UserCertificates, input: CertPlanInput, deps: CertDeps): Promise<CertPlan> {
  const result = await deps.verify({
    caPem: user.caCert,
    registry: { certPem: user.registryCert, keyPem: user.registryKey },
    nodeController: { certPem: user.nodeControllerCert, keyPem: user.nodeControllerKey },
    now: input.now,
    timeoutMs: deps.policy.handshakeTimeoutMs,
  });
  if (!result.ok) {
    return {
      ok: false,
      reason: `certificates in the spec are invalid: ${result.reason}`,
      verified: { type: 'CertsVerified', status: 'False', reason: CERT_REASONS.verifyFailed, message: result.reason },
      ready: {
        type: 'CertsReady',
        status: 'False',
        reason: CERT_REASONS.notVerified,
        message: 'the certificates in the spec did not pass verification; nothing is deployed with them',
      },
    };
  }
  const expiry = earliestExpiry([user.caCert, user.registryCert, user.nodeControllerCert]);
  return {
    ok: true,
    secrets: {
      registry: { caBundlePem: user.caCert, certPem: user.registryCert, keyPem: user.registryKey },
      node: { caBundlePem: user.caCert, certPem: user.nodeControllerCert, keyPem: user.nodeControllerKey },
    },
    verified: {
      type: 'CertsVerified',
      status: 'True',
      reason: CERT_REASONS.verified,
      message: 'registry and node-controller certificates completed a mutual TLS handshake in both directions',
    },
    ready: {
      type: 'CertsReady',
      status: 'True',
      reason: CERT_REASONS.userSupplied,
      message: `certificates from the spec; the first expires at ${formatTimestamp(expiry)} and must be replaced by then`,
    },
    changes: [],
    // Verify again when the first certificate expires: an expired set must turn the deployment Failed.
    nextCheck: expiry,
  };
}

function earliestExpiry(pems: readonly string[]): Date {
  const times = pems.flatMap((pem) => parseCertificateBundle(pem).map((c) => c.notAfter.getTime()));
  return new Date(Math.min(...times));
}

/**
 * `verify` with successful results remembered until the earliest expiry of the inputs (at most
 * `maxAgeMs`): every reconcile of a CR with user certificates would otherwise start a TLS server.
 */
export function cachedVerify(
  verify: VerifyCertificates,
  maxAgeMs: number,
  clock: () => number = Date.now,
): VerifyCertificates {
  const cache = new Map<string, number>();
  return async (input) => {
    const key = createHash('sha256')
      .update(JSON.stringify([input.caPem, input.registry, input.nodeController]))
      .digest('hex');
    const now = clock();
    const until = cache.get(key);
    if (until !== undefined && now < until) return { ok: true };
    cache.delete(key);
    const result = await verify(input);
    if (result.ok) {
      if (cache.size >= 64) cache.clear();
      const expiry = earliestExpiry([input.caPem, input.registry.certPem, input.nodeController.certPem]).getTime();
      cache.set(key, Math.min(now + maxAgeMs, expiry));
    }
    return result;
  };
}
