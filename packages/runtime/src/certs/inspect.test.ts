import { InvalidArgumentError } from '@pmem-csi/csi';
import { testPki } from '../tls/__fixtures__/test-certs.js';
import {
  hasDnsName,
  inspectCertificate,
  needsRenewal,
  parseCertificateBundle,
  parseDnsSans,
  renewalTime,
  type CertificateInfo,
} from './inspect.js';
import { REGISTRY_IDENTITY } from './names.js';

const info = (notBefore: string, notAfter: string): CertificateInfo => ({
  subjectCN: 'x',
  dnsNames: [],
  notBefore: new Date(notBefore),
  notAfter: new Date(notAfter),
  isCa: false,
  serial: '01',
  fingerprint256: '',
  pem: '',
});

beforeAll(() => testPki(), 120_000); // key generation on a shared 2-core machine

describe('inspectCertificate', () => {
  it('reports names, validity, CA flag, serial and fingerprint', async () => {
    const { registryA, ca1 } = await testPki();
    const leaf = inspectCertificate(registryA.certPem);
    expect(leaf.subjectCN).toBe(REGISTRY_IDENTITY);
    expect(leaf.dnsNames).toEqual([REGISTRY_IDENTITY]);
    expect(leaf.isCa).toBe(false);
    expect(leaf.serial).toMatch(/^[0-9A-F]{32,34}$/);
    expect(leaf.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(leaf.notAfter.getTime()).toBeGreaterThan(leaf.notBefore.getTime());
    expect(inspectCertificate(ca1.certPem)).toMatchObject({ subjectCN: 'test CA 1', dnsNames: [], isCa: true });
  });

  it('takes the first certificate of a chain', async () => {
    const { registryA, ca1 } = await testPki();
    expect(inspectCertificate(registryA.certPem + ca1.certPem).subjectCN).toBe(REGISTRY_IDENTITY);
  });

  it('refuses text without a certificate and a corrupt certificate', () => {
    expect(() => inspectCertificate('hello')).toThrow(
      new InvalidArgumentError('certificate: no PEM "CERTIFICATE" block found'),
    );
    const corrupt = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    expect(() => inspectCertificate(corrupt)).toThrow(
      new InvalidArgumentError('certificate cannot be parsed as an X.509 certificate'),
    );
  });
});

describe('parseCertificateBundle', () => {
  it('returns every certificate of a bundle in order', async () => {
    const { ca1, ca2 } = await testPki();
    const bundle = parseCertificateBundle(`${ca1.certPem}\n${ca2.certPem}`);
    expect(bundle.map((c) => c.subjectCN)).toEqual(['test CA 1', 'test CA 2']);
    expect(bundle.every((c) => c.isCa)).toBe(true);
    expect(bundle[1]?.pem.trim()).toBe(ca2.certPem.trim());
  });

  it('names the certificate that cannot be parsed', async () => {
    const { ca1 } = await testPki();
    const corrupt = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
    expect(() => parseCertificateBundle(ca1.certPem + corrupt)).toThrow(
      new InvalidArgumentError('certificate #2 of the bundle cannot be parsed as an X.509 certificate'),
    );
    expect(() => parseCertificateBundle('')).toThrow(
      new InvalidArgumentError('certificate bundle: no PEM "CERTIFICATE" block found'),
    );
  });
});

describe('parseDnsSans / hasDnsName', () => {
  it('parses Node-rendered SAN strings, including quoted values, and ignores other types', () => {
    expect(
      parseDnsSans('DNS:pmem-registry, DNS:"a\\u002c DNS:b", DNS:"c\\"d", IP Address:127.0.0.1, URI:spiffe://x'),
    ).toEqual(['pmem-registry', 'a, DNS:b', 'c"d']);
    expect(parseDnsSans(undefined)).toEqual([]);
    expect(parseDnsSans('IP Address:10.0.0.1')).toEqual([]);
  });

  it('matches exactly and case-insensitively, without wildcards', () => {
    expect(hasDnsName(['PMEM-Registry'], 'pmem-registry')).toBe(true);
    expect(hasDnsName(['*.pmem-registry', 'pmem-registry.evil'], 'pmem-registry')).toBe(false);
    expect(hasDnsName(['a, DNS:pmem-registry'], 'pmem-registry')).toBe(false);
  });
});

describe('needsRenewal', () => {
  const cert = info('2030-01-01T00:00:00.000Z', '2030-01-11T00:00:00.000Z'); // 10 days
  const at = (iso: string): { now: Date; renewAtFraction: number } => ({ now: new Date(iso), renewAtFraction: 0.8 });

  it('is false before and true from the renewal point on', () => {
    expect(renewalTime(cert, 0.8).toISOString()).toBe('2030-01-09T00:00:00.000Z');
    expect(needsRenewal(cert, at('2030-01-08T23:59:59.999Z'))).toBe(false);
    expect(needsRenewal(cert, at('2030-01-09T00:00:00.000Z'))).toBe(true);
    expect(needsRenewal(cert, at('2030-01-10T12:00:00.000Z'))).toBe(true);
  });

  it('is true once expired, even with fraction 1, and false before the certificate is valid', () => {
    expect(needsRenewal(cert, { now: new Date('2030-01-10T23:59:59.999Z'), renewAtFraction: 1 })).toBe(false);
    expect(needsRenewal(cert, { now: new Date('2030-01-11T00:00:00.000Z'), renewAtFraction: 1 })).toBe(true);
    expect(needsRenewal(cert, at('2031-01-01T00:00:00.000Z'))).toBe(true);
    expect(needsRenewal(cert, at('2029-12-31T00:00:00.000Z'))).toBe(false);
  });

  it('works on PEM, for a CA too', async () => {
    const { ca1 } = await testPki();
    const ca = inspectCertificate(ca1.certPem);
    expect(needsRenewal(ca1.certPem, { now: new Date(), renewAtFraction: 0.8 })).toBe(false);
    expect(needsRenewal(ca1.certPem, { now: renewalTime(ca, 0.8), renewAtFraction: 0.8 })).toBe(true);
    expect(needsRenewal(ca1.certPem, { now: new Date(renewalTime(ca, 0.8).getTime() - 1), renewAtFraction: 0.8 })).toBe(
      false,
    );
  });

  it('refuses a fraction outside (0, 1]', () => {
    expect(() => needsRenewal(cert, { now: new Date(), renewAtFraction: 0 })).toThrow(
      new InvalidArgumentError('renewAtFraction: must be in (0, 1], got 0'),
    );
    expect(() => needsRenewal(cert, { now: new Date(), renewAtFraction: 1.5 })).toThrow(InvalidArgumentError);
    expect(() => needsRenewal(cert, { now: new Date(), renewAtFraction: Number.NaN })).toThrow(InvalidArgumentError);
  });
});
