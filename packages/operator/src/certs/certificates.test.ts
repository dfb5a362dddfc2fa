import { jest } from '@jest/globals';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import {
  createCa,
  createLeaf,
  parseCertificateBundle,
  verifyByHandshake,
  type CertificateAndKey,
} from '@pmem-csi/runtime';
import {
  cachedVerify,
  planCertificates,
  type CertDeps,
  type CertPlan,
  type ExistingCertSecrets,
} from './certificates.js';
import type { CertificateSecrets } from '../objects/context.js';
import { buildCaSecret, buildNodeSecret, buildRegistrySecret } from '../objects/secrets.js';
import { testContext, testDeployment } from '../testing/fixtures.js';

jest.setTimeout(60_000); // RSA key generation on a shared 2-core machine

const DAY = 24 * 60 * 60 * 1000;
const MIN = 60 * 1000;
const issuer = { createCa, createLeaf };
const deps: CertDeps = {
  policy: {
    caValidityDays: 10,
    leafValidityDays: 5,
    renewAtFraction: 0.8,
    propagationMs: 10 * MIN,
    handshakeTimeoutMs: 10_000, // keys: the default type (ECDSA P-256)
  },
  issuer,
  verify: verifyByHandshake,
};

function ok(plan: CertPlan): Extract<CertPlan, { ok: true }> {
  if (!plan.ok) throw new Error(`expected a successful plan, got: ${plan.reason}`);
  return plan;
}

/** The Secrets as the apiserver would return them after applying `secrets`. */
function asExisting(secrets: CertificateSecrets): ExistingCertSecrets {
  const cr = testDeployment();
  const ctx = testContext(cr, { certs: secrets });
  return {
    ca: buildCaSecret(cr, ctx) as V1Secret,
    registry: buildRegistrySecret(cr, ctx) as V1Secret,
    node: buildNodeSecret(cr, ctx) as V1Secret,
  };
}

const fingerprints = (pem: string): string[] => parseCertificateBundle(pem).map((c) => c.fingerprint256);
const issuerOf = (certPem: string, caPem: string): boolean =>
  new X509Certificate(certPem).checkIssued(new X509Certificate(caPem));

async function handshake(
  caPem: string,
  registry: { certPem: string; keyPem: string },
  node: { certPem: string; keyPem: string },
): Promise<boolean> {
  return (await verifyByHandshake({ caPem, registry, nodeController: node, timeoutMs: 10_000 })).ok;
}

describe('planCertificates with the operator CA', () => {
  const now = new Date();

  it('creates a CA and both leaves on a fresh install, which pass a real handshake', async () => {
    const plan = ok(await planCertificates({ cr: testDeployment(), existing: {}, now }, deps));
    expect(plan.changes).toEqual(['ca created', 'registry issued (missing)', 'node-controller issued (missing)']);
    const { ca, registry, node } = plan.secrets;
    expect(ca?.caBundlePem).toBe(ca?.certPem);
    expect(registry.caBundlePem).toBe(ca?.certPem);
    expect(parseCertificateBundle(registry.certPem)[0]?.dnsNames).toEqual(['pmem-registry']);
    expect(parseCertificateBundle(node.certPem)[0]?.dnsNames).toEqual(['pmem-node-controller']);
    expect(plan.ready).toMatchObject({ type: 'CertsReady', status: 'True', reason: 'OperatorIssued' });
    expect(plan.verified).toBeUndefined();
    // Renewal of the leaves is the next event: 80 % of 5 days.
    expect(plan.nextCheck.getTime()).toBeGreaterThan(now.getTime() + 3.9 * DAY);
    expect(plan.nextCheck.getTime()).toBeLessThan(now.getTime() + 4.1 * DAY);
    expect(await handshake(registry.caBundlePem, registry, node)).toBe(true);
  });

  it('reuses valid certificates unchanged (no Secret change, no pod roll)', async () => {
    const first = ok(await planCertificates({ cr: testDeployment(), existing: {}, now }, deps));
    const again = ok(
      await planCertificates(
        { cr: testDeployment(), existing: asExisting(first.secrets), now: new Date(now.getTime() + DAY) },
        deps,
      ),
    );
    expect(again.changes).toEqual([]);
    expect(again.secrets).toEqual(first.secrets);
  });

  it('renews leaves after 80 % of their lifetime and keeps the CA', async () => {
    const first = ok(
      await planCertificates({ cr: testDeployment(), existing: {}, now: new Date(now.getTime() - 4.5 * DAY) }, deps),
    );
    const renewed = ok(
      await planCertificates({ cr: testDeployment(), existing: asExisting(first.secrets), now }, deps),
    );
    expect(renewed.changes).toEqual(['registry renewed', 'node-controller renewed']);
    expect(renewed.secrets.ca).toEqual(first.secrets.ca);
    expect(renewed.secrets.registry.certPem).not.toBe(first.secrets.registry.certPem);
    expect(await handshake(renewed.secrets.registry.caBundlePem, renewed.secrets.registry, renewed.secrets.node)).toBe(
      true,
    );
  });

  it('issues ECDSA P-256 keys by default and RSA when the policy says so', async () => {
    const ecdsa = ok(await planCertificates({ cr: testDeployment(), existing: {}, now }, deps)).secrets;
    const rsaDeps = { ...deps, policy: { ...deps.policy, keyType: 'rsa-2048' as const } };
    const rsa = ok(await planCertificates({ cr: testDeployment(), existing: {}, now }, rsaDeps)).secrets;
    for (const pem of [ecdsa.ca?.certPem, ecdsa.registry.certPem, ecdsa.node.certPem]) {
      expect(new X509Certificate(pem ?? '').publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    }
    expect(createPrivateKey(ecdsa.registry.keyPem).asymmetricKeyType).toBe('ec');
    for (const pem of [rsa.ca?.certPem, rsa.registry.certPem, rsa.node.certPem]) {
      expect(new X509Certificate(pem ?? '').publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    }
    expect(await handshake(rsa.registry.caBundlePem, rsa.registry, rsa.node)).toBe(true);
  });

  it('moves RSA leaves to the policy key type under the same CA at once; old and new leaves shake hands', async () => {
    const rsaDeps = { ...deps, policy: { ...deps.policy, keyBits: 2048 as const } };
    const old = ok(await planCertificates({ cr: testDeployment(), existing: {}, now }, rsaDeps)).secrets;
    const moved = ok(await planCertificates({ cr: testDeployment(), existing: asExisting(old), now }, deps));
    expect(moved.changes).toEqual([
      'registry reissued (key rsa-2048, policy ecdsa-p256)',
      'node-controller reissued (key rsa-2048, policy ecdsa-p256)',
    ]);
    expect(moved.secrets.ca).toEqual(old.ca); // the CA keeps its RSA key until it is renewed
    expect(issuerOf(moved.secrets.registry.certPem, old.ca?.certPem ?? '')).toBe(true);
    const { registry, node } = moved.secrets;
    expect(new X509Certificate(registry.certPem).publicKey.asymmetricKeyType).toBe('ec');
    // While the Secrets propagate, one side may still hold the old RSA leaf.
    expect(await handshake(registry.caBundlePem, registry, old.node)).toBe(true);
    expect(await handshake(registry.caBundlePem, old.registry, node)).toBe(true);
    const again = ok(await planCertificates({ cr: testDeployment(), existing: asExisting(moved.secrets), now }, deps));
    expect(again.changes).toEqual([]);
    const both = { ...deps, policy: { ...deps.policy, keyType: 'ecdsa-p256' as const, keyBits: 2048 as const } };
    await expect(planCertificates({ cr: testDeployment(), existing: {}, now }, both)).rejects.toThrow(
      'keyBits: 2048 means keyType rsa-2048, but keyType is ecdsa-p256',
    );
  });

  it('reissues a leaf with the wrong identity or a foreign key at once', async () => {
    const first = ok(await planCertificates({ cr: testDeployment(), existing: {}, now }, deps));
    const swapped = {
      ...first.secrets,
      registry: { ...first.secrets.registry, certPem: first.secrets.node.certPem, keyPem: first.secrets.node.keyPem },
    };
    const fixed = ok(await planCertificates({ cr: testDeployment(), existing: asExisting(swapped), now }, deps));
    expect(fixed.changes).toEqual(['registry issued (identity is not pmem-registry)']);
    const wrongKey = { ...first.secrets, node: { ...first.secrets.node, keyPem: first.secrets.registry.keyPem } };
    expect(
      ok(await planCertificates({ cr: testDeployment(), existing: asExisting(wrongKey), now }, deps)).changes,
    ).toEqual(['node-controller issued (key does not match)']);
  });

  it('rotates the CA with an overlap: bundle first, leaves after propagation, old CA dropped when expired', async () => {
    // Day 0 fresh install, day 4.5 leaf renewal, day 8.1 CA renewal (80 % of 10 days).
    // The wall clock sits at day 8.2 so that OpenSSL's own expiry checks agree with the plan.
    const day0 = now.getTime() - 8.2 * DAY;
    const at = (days: number, extraMs = 0): Date => new Date(day0 + days * DAY + extraMs);
    const d0 = ok(await planCertificates({ cr: testDeployment(), existing: {}, now: at(0) }, deps));
    const d45 = ok(
      await planCertificates({ cr: testDeployment(), existing: asExisting(d0.secrets), now: at(4.5) }, deps),
    );
    expect(d45.changes).toEqual(['registry renewed', 'node-controller renewed']);

    const rotated = ok(
      await planCertificates({ cr: testDeployment(), existing: asExisting(d45.secrets), now: at(8.1) }, deps),
    );
    expect(rotated.changes).toEqual(['ca renewed']);
    const oldCa = d45.secrets.ca?.certPem ?? '';
    const newCa = rotated.secrets.ca?.certPem ?? '';
    expect(fingerprints(rotated.secrets.registry.caBundlePem)).toEqual([
      ...fingerprints(newCa),
      ...fingerprints(oldCa),
    ]);
    expect(fingerprints(rotated.secrets.node.caBundlePem)).toEqual(fingerprints(rotated.secrets.registry.caBundlePem));
    // Leaves stay with the old CA while the new bundle propagates.
    expect(rotated.secrets.registry.certPem).toBe(d45.secrets.registry.certPem);
    expect(rotated.nextCheck.getTime()).toBe(
      new Date(new X509Certificate(newCa).validFrom).getTime() + 5 * MIN + 10 * MIN,
    );

    const moved = ok(
      await planCertificates(
        {
          cr: testDeployment(),
          existing: asExisting(rotated.secrets),
          now: new Date(rotated.nextCheck.getTime() + 1000),
        },
        deps,
      ),
    );
    expect(moved.changes).toEqual(['registry moved to the new CA', 'node-controller moved to the new CA']);
    expect(issuerOf(moved.secrets.registry.certPem, newCa)).toBe(true);
    expect(fingerprints(moved.secrets.registry.caBundlePem)).toHaveLength(2);
    // Overlap: an old-CA peer and a new-CA peer trust each other through the bundle.
    const bundle = moved.secrets.registry.caBundlePem;
    expect(await handshake(bundle, moved.secrets.registry, d45.secrets.node)).toBe(true);
    expect(await handshake(bundle, d45.secrets.registry, moved.secrets.node)).toBe(true);
    // The old CA leaves the bundle once it has expired (day 10).
    const later = ok(
      await planCertificates({ cr: testDeployment(), existing: asExisting(moved.secrets), now: at(10.01) }, deps),
    );
    expect(fingerprints(later.secrets.registry.caBundlePem)).toEqual(fingerprints(newCa));
  });

  it('creates a new CA when the CA Secret lost its key, keeping the old CA trusted meanwhile', async () => {
    const first = ok(await planCertificates({ cr: testDeployment(), existing: {}, now }, deps));
    const broken = {
      ...first.secrets,
      ca: { ...(first.secrets.ca as NonNullable<CertificateSecrets['ca']>), keyPem: '' },
    };
    const existing = asExisting(broken);
    delete existing.ca?.data?.['tls.key'];
    const plan = ok(await planCertificates({ cr: testDeployment(), existing, now }, deps));
    expect(plan.changes).toEqual(['ca renewed']);
    expect(fingerprints(plan.secrets.registry.caBundlePem)).toHaveLength(2);
  });
});

describe('planCertificates with user-supplied certificates', () => {
  let ca1: CertificateAndKey;
  let ca2: CertificateAndKey;
  let registry: CertificateAndKey;
  let node: CertificateAndKey;
  beforeAll(async () => {
    ca1 = await createCa({ commonName: 'user CA', validityDays: 30, keyBits: 2048 });
    ca2 = await createCa({ commonName: 'other CA', validityDays: 30, keyBits: 2048 });
    registry = await createLeaf({ ca: ca1, dnsName: 'pmem-registry', validityDays: 20, keyBits: 2048 });
    node = await createLeaf({ ca: ca1, dnsName: 'pmem-node-controller', validityDays: 10, keyBits: 2048 });
  }, 60_000);

  const userSpec = (o: Partial<Record<string, string>> = {}): Record<string, string | undefined> => ({
    caCert: ca1.certPem,
    registryCert: registry.certPem,
    registryKey: registry.keyPem,
    nodeControllerCert: node.certPem,
    nodeControllerKey: node.keyPem,
    ...o,
  });

  async function plan(spec: Record<string, string | undefined>): Promise<CertPlan> {
    return planCertificates({ cr: testDeployment(spec), existing: {}, now: new Date() }, deps);
  }

  it('verifies a user-supplied ECDSA set as it does an RSA one', async () => {
    const eca = await createCa({ commonName: 'user EC CA', validityDays: 30, keyType: 'ecdsa-p256' });
    const [ereg, enode] = await Promise.all([
      createLeaf({ ca: eca, dnsName: 'pmem-registry', validityDays: 20, keyType: 'ecdsa-p256' }),
      createLeaf({ ca: eca, dnsName: 'pmem-node-controller', validityDays: 10, keyType: 'ecdsa-p256' }),
    ]);
    const spec = {
      caCert: eca.certPem,
      registryCert: ereg.certPem,
      registryKey: ereg.keyPem,
      nodeControllerCert: enode.certPem,
      nodeControllerKey: enode.keyPem,
    };
    expect(ok(await plan(spec)).verified).toMatchObject({ status: 'True', reason: 'HandshakeSucceeded' });
    const mixed = await plan({ ...spec, registryKey: registry.keyPem });
    expect(mixed.ok).toBe(false);
  });

  it('verifies a good set and uses it as is, without a CA Secret', async () => {
    const p = ok(await plan(userSpec()));
    expect(p.verified).toMatchObject({ type: 'CertsVerified', status: 'True', reason: 'HandshakeSucceeded' });
    expect(p.ready).toMatchObject({ type: 'CertsReady', status: 'True', reason: 'UserSupplied' });
    expect(p.secrets).toEqual({
      registry: { caBundlePem: ca1.certPem, certPem: registry.certPem, keyPem: registry.keyPem },
      node: { caBundlePem: ca1.certPem, certPem: node.certPem, keyPem: node.keyPem },
    });
    expect(p.nextCheck).toEqual(parseCertificateBundle(node.certPem)[0]?.notAfter);
  });

  const refused = async (spec: Record<string, string | undefined>): Promise<Extract<CertPlan, { ok: false }>> => {
    const p = await plan(spec);
    if (p.ok) throw new Error('expected a refusal');
    expect(p.verified).toMatchObject({ type: 'CertsVerified', status: 'False', reason: 'HandshakeFailed' });
    expect(p.ready).toMatchObject({ type: 'CertsReady', status: 'False', reason: 'CertificatesNotVerified' });
    expect(p.verified.message).not.toMatch(/PRIVATE KEY|MII/);
    return p;
  };

  it('refuses a key that does not belong to its certificate', async () => {
    const p = await refused(userSpec({ registryKey: node.keyPem }));
    expect(p.verified.message).toBe('registry certificate: does not match its private key');
    expect(p.reason).toBe('certificates in the spec are invalid: registry certificate: does not match its private key');
  });

  it('refuses an expired certificate', async () => {
    const old = await createLeaf({
      ca: ca1,
      dnsName: 'pmem-node-controller',
      validityDays: 1,
      keyBits: 2048,
      now: new Date(Date.now() - 3 * DAY),
    });
    const p = await refused(userSpec({ nodeControllerCert: old.certPem, nodeControllerKey: old.keyPem }));
    expect(p.verified.message).toMatch(/^node-controller certificate: expired at \d{4}-/);
  });

  it('refuses a certificate with the wrong identity', async () => {
    const wrong = await createLeaf({ ca: ca1, dnsName: 'not-the-registry', validityDays: 5, keyBits: 2048 });
    const p = await refused(userSpec({ registryCert: wrong.certPem, registryKey: wrong.keyPem }));
    expect(p.verified.message).toBe('registry certificate: DNS SAN must include pmem-registry (has: not-the-registry)');
  });

  it('refuses certificates that the given CA did not sign', async () => {
    const p = await refused(userSpec({ caCert: ca2.certPem }));
    expect(p.verified.message).toMatch(/^registry certificate: not signed by the given CA/);
  });
});

describe('cachedVerify', () => {
  it('remembers successes only, and not past maxAge', async () => {
    let calls = 0;
    let answer = true;
    const ca = await createCa({ commonName: 'c', validityDays: 2, keyBits: 2048 });
    const inner = async (): Promise<{ ok: true } | { ok: false; reason: string; certificate: 'handshake' }> => {
      calls++;
      return answer ? { ok: true } : { ok: false, reason: 'no', certificate: 'handshake' };
    };
    let t = Date.now();
    const verify = cachedVerify(inner, 60_000, () => t);
    const input = { caPem: ca.certPem, registry: ca, nodeController: ca, timeoutMs: 1 };
    await verify(input);
    await verify(input);
    expect(calls).toBe(1);
    t += 61_000;
    answer = false;
    expect(await verify(input)).toMatchObject({ ok: false });
    expect(await verify(input)).toMatchObject({ ok: false });
    expect(calls).toBe(3);
  });
});
