import { jest } from '@jest/globals';
import { createLeaf } from './generate.js';
import { verifyByHandshake, type HandshakeInput } from './handshake.js';
import { NODE_CONTROLLER_IDENTITY } from './names.js';
import { testPki } from '../tls/__fixtures__/test-certs.js';

const DAY = 24 * 60 * 60 * 1000;

async function validInput(): Promise<HandshakeInput> {
  const pki = await testPki();
  return { caPem: pki.ca1.certPem, registry: pki.registryA, nodeController: pki.nodeControllerA, timeoutMs: 5000 };
}

const expectNoKeyMaterial = (reason: string): void => {
  expect(reason).not.toMatch(/PRIVATE KEY|BEGIN|MII/);
};

jest.setTimeout(30_000); // RSA key generation on a shared 2-core machine
beforeAll(() => testPki(), 120_000);

describe('verifyByHandshake', () => {
  it('accepts a matching set', async () => {
    await expect(verifyByHandshake(await validInput())).resolves.toEqual({ ok: true });
  });

  it('accepts a CA bundle that contains the issuing CA (rotation overlap)', async () => {
    const pki = await testPki();
    const input = { ...(await validInput()), caPem: pki.ca2.certPem + pki.ca1.certPem };
    await expect(verifyByHandshake(input)).resolves.toEqual({ ok: true });
  });

  it('names an unparseable private key', async () => {
    const input = await validInput();
    const garbage = '-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n';
    const result = await verifyByHandshake({ ...input, nodeController: { ...input.nodeController, keyPem: garbage } });
    expect(result).toEqual({
      ok: false,
      certificate: 'node-controller',
      reason: 'node-controller private key: cannot be parsed as a PEM private key',
    });
  });

  it('names a key that does not match its certificate', async () => {
    const pki = await testPki();
    const input = await validInput();
    const result = await verifyByHandshake({
      ...input,
      registry: { certPem: pki.registryA.certPem, keyPem: pki.nodeControllerA.keyPem },
    });
    expect(result).toEqual({
      ok: false,
      certificate: 'registry',
      reason: 'registry certificate: does not match its private key',
    });
    if (!result.ok) expectNoKeyMaterial(result.reason);
  });

  it('names an expired certificate with its expiry time', async () => {
    const pki = await testPki();
    const input = { ...(await validInput()), nodeController: pki.expiredNodeController };
    const result = await verifyByHandshake(input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.certificate).toBe('node-controller');
    expect(result.reason).toMatch(/^node-controller certificate: expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
  });

  it('checks validity at `now`', async () => {
    const input = await validInput();
    const later = new Date(Date.now() + 60 * DAY);
    const result = await verifyByHandshake({ ...input, now: later });
    expect(result).toMatchObject({ ok: false, certificate: 'registry' });
    if (!result.ok) expect(result.reason).toMatch(/^registry certificate: expired at /);
  });

  it('names a certificate whose DNS SAN is not its identity', async () => {
    const pki = await testPki();
    const foo = await createLeaf({ ca: pki.ca1, dnsName: 'foo', validityDays: 1, keyBits: 2048 });
    const input = await validInput();
    await expect(verifyByHandshake({ ...input, registry: foo })).resolves.toEqual({
      ok: false,
      certificate: 'registry',
      reason: 'registry certificate: DNS SAN must include pmem-registry (has: foo)',
    });
    // Swapped roles: the node-controller slot holds a registry certificate.
    await expect(verifyByHandshake({ ...input, nodeController: pki.registryA })).resolves.toEqual({
      ok: false,
      certificate: 'node-controller',
      reason: 'node-controller certificate: DNS SAN must include pmem-node-controller (has: pmem-registry)',
    });
  });

  it('names a certificate signed by another CA', async () => {
    const pki = await testPki();
    const input = { ...(await validInput()), nodeController: pki.foreignNodeController };
    await expect(verifyByHandshake(input)).resolves.toEqual({
      ok: false,
      certificate: 'node-controller',
      reason: 'node-controller certificate: not signed by the given CA (UNABLE_TO_VERIFY_LEAF_SIGNATURE)',
    });
    const wrongCa = { ...(await validInput()), caPem: pki.ca2.certPem };
    await expect(verifyByHandshake(wrongCa)).resolves.toEqual({
      ok: false,
      certificate: 'registry',
      reason: 'registry certificate: not signed by the given CA (UNABLE_TO_VERIFY_LEAF_SIGNATURE)',
    });
  });

  it('names a bad CA', async () => {
    const pki = await testPki();
    const input = await validInput();
    await expect(verifyByHandshake({ ...input, caPem: 'nope' })).resolves.toEqual({
      ok: false,
      certificate: 'ca',
      reason: 'CA certificate: cannot be parsed as PEM X.509 certificate(s)',
    });
    await expect(verifyByHandshake({ ...input, caPem: pki.registryA.certPem })).resolves.toEqual({
      ok: false,
      certificate: 'ca',
      reason: 'CA certificate: not a CA certificate (basicConstraints CA:TRUE missing)',
    });
  });

  it('checks a leaf that is only valid in the future', async () => {
    const pki = await testPki();
    const future = await createLeaf({
      ca: pki.ca1,
      dnsName: NODE_CONTROLLER_IDENTITY,
      validityDays: 10,
      now: new Date(Date.now() + 2 * DAY),
      keyBits: 2048,
    });
    const result = await verifyByHandshake({ ...(await validInput()), nodeController: future });
    expect(result).toMatchObject({ ok: false, certificate: 'node-controller' });
    if (!result.ok) expect(result.reason).toMatch(/^node-controller certificate: not valid before /);
  });
});
