import { isPemCertificates, isPemPrivateKey } from './pem.js';
import { isCleanAbsolutePath, isDnsSubdomain, isImageReference, isLabelKey, isLabelValue } from './syntax.js';

describe('isImageReference', () => {
  it.each([
    'busybox',
    'intel/pmem-csi-driver',
    'intel/pmem-csi-driver:v1.2.3',
    'registry.k8s.io/sig-storage/csi-provisioner:v5.3.0',
    'localhost:5000/a/b_c__d---e.f:latest',
    '[::1]:5000/pmem:dev',
    `intel/pmem@sha256:${'0123456789abcdef'.repeat(4)}`,
    `intel/pmem:v1@sha256:${'0123456789abcdef'.repeat(4)}`,
  ])('accepts %s', (ref) => expect(isImageReference(ref)).toBe(true));

  it.each([
    '',
    ' ',
    'a b',
    'intel/Pmem',
    'intel//pmem',
    'intel/pmem:',
    ':v1',
    'intel/pmem:-v1',
    `intel/${'a'.repeat(300)}`,
    'intel/pmem@sha256:xyz',
    'intel/pmem\n',
  ])('refuses %j', (ref) => expect(isImageReference(ref)).toBe(false));
});

describe('labels and DNS names', () => {
  it.each(['a', 'storage', 'example.com/x', 'feature.node.kubernetes.io/memory-nv.present', 'A_b-c.D'])(
    'label key %s',
    (k) => expect(isLabelKey(k)).toBe(true),
  );
  it.each(['', '/x', 'a/', 'a/b/c', '-a', 'a-', 'Example.com/x', `${'a'.repeat(64)}`, `${'a.'.repeat(127)}a/b`])(
    'not a label key: %j',
    (k) => expect(isLabelKey(k)).toBe(false),
  );
  it.each(['', 'pmem', 'a.b_c-d', 'x'.repeat(63)])('label value %j', (v) => expect(isLabelValue(v)).toBe(true));
  it.each(['-a', 'a b', 'x'.repeat(64), 'a/b'])('not a label value: %j', (v) => expect(isLabelValue(v)).toBe(false));
  it.each(['a', 'pmem-csi.intel.com', '1a.b'])('DNS subdomain %s', (v) => expect(isDnsSubdomain(v)).toBe(true));
  it.each(['', 'A', 'a..b', 'a_b', '.a', `${'a'.repeat(254)}`])('not a DNS subdomain: %j', (v) =>
    expect(isDnsSubdomain(v)).toBe(false),
  );
});

describe('isCleanAbsolutePath', () => {
  it.each([
    ['/var/lib/kubelet', true],
    ['/var/lib/kubelet/', true],
    ['/', true],
    ['var/lib', false],
    ['/var/./lib', false],
    ['/var/../lib', false],
    ['/var/\0', false],
  ])('%j -> %p', (path, clean) => expect(isCleanAbsolutePath(path)).toBe(clean));
});

describe('PEM shapes', () => {
  const block = (type: string, body = 'QUJD\nREVG'): string =>
    `-----BEGIN ${type}-----\n${body}\n-----END ${type}-----`;
  it('accepts certificate chains with surrounding text, and one private key of the usual kinds', () => {
    expect(isPemCertificates(`subject=CN=x\n${block('CERTIFICATE')}\n${block('CERTIFICATE')}\n`)).toBe(true);
    expect(isPemCertificates(block('CERTIFICATE').replaceAll('\n', '\r\n'))).toBe(true);
    for (const type of ['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY'])
      expect(isPemPrivateKey(block(type))).toBe(true);
  });
  it('refuses wrong block types, encrypted keys, empty bodies and headers', () => {
    expect(isPemCertificates('')).toBe(false);
    expect(isPemCertificates(block('CERTIFICATE', ''))).toBe(false);
    expect(isPemCertificates(block('X509 CRL'))).toBe(false);
    expect(isPemPrivateKey(block('ENCRYPTED PRIVATE KEY'))).toBe(false);
    expect(isPemPrivateKey(block('RSA PRIVATE KEY', 'Proc-Type: 4,ENCRYPTED\n\nQUJD'))).toBe(false);
    expect(isPemPrivateKey(`${block('PRIVATE KEY')}\n${block('PRIVATE KEY')}`)).toBe(false);
  });
});
