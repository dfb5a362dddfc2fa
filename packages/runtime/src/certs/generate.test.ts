import { jest } from '@jest/globals';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import forge from 'node-forge';
import { InvalidArgumentError } from '../errors.js';
import { testPki } from '../tls/__fixtures__/test-certs.js';
import { CLOCK_SKEW_ALLOWANCE_MS, createCa, createLeaf, randomSerialHex } from './generate.js';
import { inspectCertificate } from './inspect.js';
import { NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY } from './names.js';

const DAY = 24 * 60 * 60 * 1000;
type Ext = Record<string, unknown> & { name: string; critical?: boolean };
const ext = (pem: string, name: string): Ext | undefined =>
  forge.pki.certificateFromPem(pem).getExtension(name) as Ext | undefined;
const seconds = (d: Date): number => Math.floor(d.getTime() / 1000);

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

  it('uses RSA 3072 by default', async () => {
    const ca = await createCa({ commonName: 'default size', validityDays: 1 });
    expect(new X509Certificate(ca.certPem).publicKey.asymmetricKeyDetails?.modulusLength).toBe(3072);
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
    ).rejects.toThrow(new InvalidArgumentError('ca.certPem: not a PEM X.509 certificate with an RSA key'));
    await expect(
      createLeaf({ ca: { certPem: ca1.certPem, keyPem: 'garbage' }, dnsName: 'x', validityDays: 1 }),
    ).rejects.toThrow(new InvalidArgumentError('ca.keyPem: not a PEM private key'));
  });
});
