import { jest } from '@jest/globals';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import forge from 'node-forge';
import { InvalidArgumentError } from '@pmem-csi/csi';
import { testPki } from '../tls/__fixtures__/test-certs.js';
import { generateKeyPairSync } from 'node:crypto';
import {
  CLOCK_SKEW_ALLOWANCE_MS,
  createCa,
  createLeaf,
  keyTypeOf,
  keyTypeOfKey,
  randomSerialHex,
  type CertificateAndKey,
} from './generate.js';
import { inspectCertificate } from './inspect.js';
import { NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY } from './names.js';

const DAY = 24 * 60 * 60 * 1000;
type Ext = Record<string, unknown> & { name: string; critical?: boolean };
const ext = (pem: string, name: string): Ext | undefined =>
  forge.pki.certificateFromPem(pem).getExtension(name) as Ext | undefined;
const seconds = (d: Date): number => Math.floor(d.getTime() / 1000);

/** Extensions of any certificate (node-forge's certificate parser reads RSA keys only): OID -> critical, DER hex of the value. */
function extensionsOf(pem: string): Map<string, { critical: boolean; hex: string }> {
  const asn1 = forge.asn1;
  const der = new X509Certificate(pem).raw.toString('binary');
  const kids = (n: forge.asn1.Asn1 | undefined): forge.asn1.Asn1[] => (Array.isArray(n?.value) ? n.value : []);
  const tbs = kids(kids(asn1.fromDer(der))[0]);
  const exts = kids(kids(tbs.find((f) => f.tagClass === asn1.Class.CONTEXT_SPECIFIC && f.type === 3))[0]);
  const out = new Map<string, { critical: boolean; hex: string }>();
  for (const e of exts) {
    const [oid, ...rest] = kids(e);
    const value = rest[rest.length - 1];
    out.set(asn1.derToOid(oid?.value as string), {
      critical: rest.length === 2,
      hex: Buffer.from(value?.value as string, 'binary').toString('hex'),
    });
  }
  return out;
}
const KEY_USAGE = '2.5.29.15';
const BASIC_CONSTRAINTS = '2.5.29.19';
const SKI = '2.5.29.14';
const AKI = '2.5.29.35';
const keyTypeOfPem = (pem: string): string | undefined => keyTypeOfKey(new X509Certificate(pem).publicKey);

jest.setTimeout(30_000); // RSA key generation on a shared 2-core machine
beforeAll(() => testPki(), 120_000);

describe('createCa', () => {
  it('creates a self-signed CA with critical CA:TRUE, keyCertSign+cRLSign and a SKI', async () => {
    const { ca1 } = await testPki();
    const x = new X509Certificate(ca1.certPem);
    expect(x.ca).toBe(true);
    expect(x.subject).toBe('CN=test CA 1');
    expect(x.issuer).toBe('CN=test CA 1');
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.checkPrivateKey(createPrivateKey(ca1.keyPem))).toBe(true);
    expect(ext(ca1.certPem, 'basicConstraints')).toMatchObject({ cA: true, critical: true, pathLenConstraint: 0 });
    expect(ext(ca1.certPem, 'keyUsage')).toMatchObject({
      keyCertSign: true,
      cRLSign: true,
      digitalSignature: false,
      critical: true,
    });
    expect(ext(ca1.certPem, 'subjectKeyIdentifier')).toBeDefined();
    expect(x.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('is valid from `now` minus the clock-skew allowance for validityDays', async () => {
    const now = new Date('2030-01-02T03:04:05Z');
    const ca = await createCa({ commonName: 'dated', validityDays: 3650, now, keyBits: 2048 });
    const info = inspectCertificate(ca.certPem);
    expect(info.notBefore.getTime()).toBe(now.getTime() - CLOCK_SKEW_ALLOWANCE_MS);
    expect(info.notAfter.getTime()).toBe(now.getTime() + 3650 * DAY);
    expect(info.isCa).toBe(true);
  });

  it('uses ECDSA P-256 by default, signed with ecdsa-with-SHA256, with the same extensions as RSA CAs', async () => {
    const ca = await createCa({ commonName: 'default type', validityDays: 1 });
    const x = new X509Certificate(ca.certPem);
    expect(x.publicKey.asymmetricKeyType).toBe('ec');
    expect(x.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(createPrivateKey(ca.keyPem).asymmetricKeyType).toBe('ec');
    expect(ca.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/); // PKCS#8, like the RSA keys
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.ca).toBe(true);
    expect(x.subject).toBe('CN=default type');
    expect(x.toLegacyObject()).toMatchObject({ asn1Curve: 'prime256v1' });
    const exts = extensionsOf(ca.certPem);
    expect(exts.get(BASIC_CONSTRAINTS)).toEqual({ critical: true, hex: '30060101ff020100' }); // CA:TRUE, pathlen 0
    expect(exts.get(KEY_USAGE)).toEqual({ critical: true, hex: '03020106' }); // keyCertSign, cRLSign
    expect(exts.get(SKI)?.hex).toMatch(/^0414[0-9a-f]{40}$/);
  });

  it('makes each key type on request (keyType, or keyBits for RSA)', async () => {
    const [rsa, bits] = await Promise.all([
      createCa({ commonName: 'rsa', validityDays: 1, keyType: 'rsa-2048' }),
      createCa({ commonName: 'bits', validityDays: 1, keyBits: 2048 }),
    ]);
    expect(keyTypeOfPem(rsa.certPem)).toBe('rsa-2048');
    expect(keyTypeOfPem(bits.certPem)).toBe('rsa-2048');
    expect(keyTypeOf({})).toBe('ecdsa-p256');
    expect(keyTypeOf({ keyBits: 3072 })).toBe('rsa-3072');
    expect(keyTypeOf({ keyType: 'rsa-4096', keyBits: 4096 })).toBe('rsa-4096');
    expect(() => keyTypeOf({ keyType: 'ecdsa-p256', keyBits: 2048 })).toThrow(
      new InvalidArgumentError('keyBits: 2048 means keyType rsa-2048, but keyType is ecdsa-p256'),
    );
    expect(() => keyTypeOf({ keyType: 'rsa-1024' as 'rsa-2048' })).toThrow(
      new InvalidArgumentError('keyType: must be one of ecdsa-p256, rsa-2048, rsa-3072, rsa-4096, got "rsa-1024"'),
    );
    expect(() => keyTypeOf({ keyBits: 1024 as 2048 })).toThrow(
      new InvalidArgumentError('keyBits: must be 2048, 3072 or 4096, got 1024'),
    );
  });

  it('rejects an empty common name and bad validity', async () => {
    await expect(createCa({ commonName: ' ', validityDays: 1 })).rejects.toThrow(
      new InvalidArgumentError('commonName: must not be empty'),
    );
    await expect(createCa({ commonName: 'x', validityDays: 0 })).rejects.toThrow(
      new InvalidArgumentError('validityDays: must be an integer from 1 to 36500, got 0'),
    );
    await expect(createCa({ commonName: 'x', validityDays: 1.5 })).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('createLeaf', () => {
  it('issues a leaf with only the DNS SAN identity, serverAuth+clientAuth, and key ids linking it to the CA', async () => {
    const { ca1, registryA } = await testPki();
    const x = new X509Certificate(registryA.certPem);
    const caX = new X509Certificate(ca1.certPem);
    expect(x.ca).toBe(false);
    expect(x.subjectAltName).toBe(`DNS:${REGISTRY_IDENTITY}`);
    expect(x.subject).toBe(`CN=${REGISTRY_IDENTITY}`);
    expect(x.checkIssued(caX)).toBe(true);
    expect(x.verify(caX.publicKey)).toBe(true);
    expect(x.checkPrivateKey(createPrivateKey(registryA.keyPem))).toBe(true);
    expect(x.keyUsage.sort()).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']); // serverAuth, clientAuth
    expect(ext(registryA.certPem, 'basicConstraints')).toMatchObject({ cA: false, critical: true });
    expect(ext(registryA.certPem, 'keyUsage')).toMatchObject({
      digitalSignature: true,
      keyEncipherment: true,
      keyCertSign: false,
      critical: true,
    });
    const aki = forge.pki
      .certificateFromPem(registryA.certPem)
      .extensions.find((e: Ext) => e.name === 'authorityKeyIdentifier') as Ext;
    const caSki = ext(ca1.certPem, 'subjectKeyIdentifier') as Ext & { subjectKeyIdentifier: string };
    // AKI = SEQUENCE { [0] keyIdentifier }: the CA's SKI is its last 20 bytes.
    expect(forge.util.bytesToHex(aki['value'] as string).endsWith(caSki.subjectKeyIdentifier)).toBe(true);
  });

  it('uses a random positive 128-bit serial', async () => {
    const { registryA, nodeControllerA } = await testPki();
    const a = inspectCertificate(registryA.certPem).serial;
    const b = inspectCertificate(nodeControllerA.certPem).serial;
    expect(a).not.toBe(b);
    for (let i = 0; i < 200; i++) {
      const hex = randomSerialHex();
      const bytes = Buffer.from(hex, 'hex');
      expect(bytes[0]).not.toBe(undefined);
      if (hex.startsWith('00')) {
        expect(bytes.length).toBe(17);
        expect((bytes[1] ?? 0) & 0x80).toBe(0x80); // the 00 only where needed for a positive INTEGER
      } else {
        expect(bytes.length).toBe(16);
        expect(bytes[0]).toBeGreaterThan(0);
        expect((bytes[0] ?? 0) & 0x80).toBe(0);
      }
    }
  });

  it('honours `now` and validityDays, and never outlives its CA', async () => {
    const { ca1 } = await testPki();
    const now = new Date(Date.now() - 10 * DAY);
    const leaf = await createLeaf({ ca: ca1, dnsName: NODE_CONTROLLER_IDENTITY, validityDays: 20, now, keyBits: 2048 });
    const info = inspectCertificate(leaf.certPem);
    expect(seconds(info.notBefore)).toBe(seconds(new Date(now.getTime() - CLOCK_SKEW_ALLOWANCE_MS)));
    expect(seconds(info.notAfter)).toBe(seconds(new Date(now.getTime() + 20 * DAY)));
    const long = await createLeaf({ ca: ca1, dnsName: NODE_CONTROLLER_IDENTITY, validityDays: 5000, keyBits: 2048 });
    expect(inspectCertificate(long.certPem).notAfter).toEqual(inspectCertificate(ca1.certPem).notAfter);
  });

  it('refuses bad names, a CA key that does not match, and a non-CA issuer', async () => {
    const { ca1, ca2, registryA } = await testPki();
    await expect(createLeaf({ ca: ca1, dnsName: 'Not_A_Name', validityDays: 1 })).rejects.toThrow(
      new InvalidArgumentError('dnsName: must be a lower-case DNS name (RFC 1123), got "Not_A_Name"'),
    );
    await expect(
      createLeaf({ ca: { certPem: ca1.certPem, keyPem: ca2.keyPem }, dnsName: 'x', validityDays: 1 }),
    ).rejects.toThrow(new InvalidArgumentError('ca.keyPem: does not match ca.certPem'));
    await expect(createLeaf({ ca: registryA, dnsName: 'x', validityDays: 1 })).rejects.toThrow(
      new InvalidArgumentError('ca.certPem: not a CA certificate (basicConstraints CA:TRUE missing)'),
    );
    await expect(
      createLeaf({ ca: { certPem: 'garbage', keyPem: ca1.keyPem }, dnsName: 'x', validityDays: 1 }),
    ).rejects.toThrow(new InvalidArgumentError('ca.certPem: not a PEM X.509 certificate'));
    await expect(
      createLeaf({ ca: { certPem: ca1.certPem, keyPem: 'garbage' }, dnsName: 'x', validityDays: 1 }),
    ).rejects.toThrow(new InvalidArgumentError('ca.keyPem: not a PEM private key'));
  });
});

describe('key types across a chain', () => {
  const chain = async (caType: 'ecdsa-p256' | 'rsa-2048', leafType: 'ecdsa-p256' | 'rsa-2048') => {
    const ca = await createCa({ commonName: `${caType} CA`, validityDays: 2, keyType: caType });
    const leaf = await createLeaf({ ca, dnsName: REGISTRY_IDENTITY, validityDays: 1, keyType: leafType });
    return { ca, leaf };
  };

  it.each([
    ['ecdsa-p256', 'ecdsa-p256', '03020780'], // digitalSignature only: an EC key does no key transport
    ['rsa-2048', 'ecdsa-p256', '03020780'],
    ['ecdsa-p256', 'rsa-2048', '030205a0'], // digitalSignature, keyEncipherment
  ] as const)('a %s CA issues a verifiable %s leaf (keyUsage %s)', async (caType, leafType, keyUsage) => {
    const { ca, leaf } = await chain(caType, leafType);
    const x = new X509Certificate(leaf.certPem);
    const caX = new X509Certificate(ca.certPem);
    expect(keyTypeOfPem(leaf.certPem)).toBe(leafType);
    expect(x.checkIssued(caX)).toBe(true);
    expect(x.verify(caX.publicKey)).toBe(true);
    expect(x.checkPrivateKey(createPrivateKey(leaf.keyPem))).toBe(true);
    expect(x.subjectAltName).toBe(`DNS:${REGISTRY_IDENTITY}`);
    expect(x.issuer).toBe(caX.subject);
    expect(x.keyUsage.sort()).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    const exts = extensionsOf(leaf.certPem);
    expect(exts.get(KEY_USAGE)).toEqual({ critical: true, hex: keyUsage });
    expect(exts.get(BASIC_CONSTRAINTS)).toEqual({ critical: true, hex: '3000' });
    // AKI = SEQUENCE { [0] the CA's key identifier }, the CA's SKI = OCTET STRING of it.
    const caSki = (extensionsOf(ca.certPem).get(SKI)?.hex ?? '').slice(4);
    expect(exts.get(AKI)?.hex).toBe(`30168014${caSki}`);
  });

  it('refuses CA keys it cannot sign with (Ed25519, EC curves other than P-256), naming the field', async () => {
    const p256 = await createCa({ commonName: 'p256', validityDays: 2 });
    const ed = generateKeyPairSync('ed25519');
    const edPem = ed.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const bad: CertificateAndKey = { certPem: p256.certPem, keyPem: edPem };
    await expect(createLeaf({ ca: bad, dnsName: 'x', validityDays: 1 })).rejects.toThrow(
      new InvalidArgumentError('ca.keyPem: must be an RSA or ECDSA P-256 key, got ed25519'),
    );
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    const k1Pem = k1.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    await expect(
      createLeaf({ ca: { certPem: p256.certPem, keyPem: k1Pem }, dnsName: 'x', validityDays: 1 }),
    ).rejects.toThrow(new InvalidArgumentError('ca.keyPem: must be an RSA or ECDSA P-256 key, got EC secp256k1'));
  });
});
