import { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { PermissionDeniedError, UnauthenticatedError } from '@pmem-csi/csi';
import { NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY } from '../certs/names.js';
import { testPki } from './__fixtures__/test-certs.js';
import { connectionOf, peerDnsNames, peerIdentityCheck, type AuthContext } from './peer.js';

beforeAll(() => testPki(), 120_000);

const peerOf = (pem: string): PeerCertificate => {
  const x = new X509Certificate(pem);
  return { raw: x.raw, subjectaltname: x.subjectAltName ?? '' } as PeerCertificate;
};
const callWith = (auth: AuthContext | null): { getAuthContext: () => AuthContext | null } => ({
  getAuthContext: () => auth,
});

describe('peerIdentityCheck', () => {
  it('accepts a verified peer whose DNS SAN is the expected identity', async () => {
    const { nodeControllerA } = await testPki();
    const check = peerIdentityCheck(NODE_CONTROLLER_IDENTITY);
    expect(() =>
      check(callWith({ transportSecurityType: 'ssl', sslPeerCertificate: peerOf(nodeControllerA.certPem) })),
    ).not.toThrow();
  });

  it('refuses another identity with PermissionDenied, naming what it has', async () => {
    const { registryA } = await testPki();
    const check = peerIdentityCheck(NODE_CONTROLLER_IDENTITY);
    const call = callWith({ transportSecurityType: 'ssl', sslPeerCertificate: peerOf(registryA.certPem) });
    expect(() => check(call)).toThrow(
      new PermissionDeniedError('client certificate DNS SAN must include pmem-node-controller (has: pmem-registry)'),
    );
    try {
      check(call);
    } catch (e) {
      expect(e).toBeInstanceOf(PermissionDeniedError);
      expect((e as PermissionDeniedError).kind).toBe('PermissionDenied');
    }
  });

  it('refuses calls without a verified client certificate with Unauthenticated', () => {
    const check = peerIdentityCheck(REGISTRY_IDENTITY);
    const expected = new UnauthenticatedError('a client certificate with DNS SAN pmem-registry is required');
    expect(() => check(callWith({}))).toThrow(expected); // grpc-js: plaintext, or TLS peer not authorized
    expect(() => check(callWith(null))).toThrow(expected);
    expect(() => check(callWith({ transportSecurityType: 'ssl' }))).toThrow(expected);
  });

  it('never falls back to the CommonName', () => {
    // A peer whose CN is the identity but whose SANs are not.
    const peer = {
      raw: Buffer.from('not DER'),
      subjectaltname: 'DNS:other',
      subject: { CN: NODE_CONTROLLER_IDENTITY },
    } as unknown as PeerCertificate;
    expect(peerDnsNames(peer)).toEqual(['other']);
    expect(() =>
      peerIdentityCheck(NODE_CONTROLLER_IDENTITY)(callWith({ transportSecurityType: 'ssl', sslPeerCertificate: peer })),
    ).toThrow(PermissionDeniedError);
  });

  it('parses a certificate once: its names are remembered by SHA-256 fingerprint, bounded', () => {
    // Not DER, so the names come from Node's rendering, which each object below changes.
    const peer = (fingerprint256: string, san: string): PeerCertificate =>
      ({ raw: Buffer.from('not DER'), subjectaltname: san, fingerprint256 }) as unknown as PeerCertificate;
    expect(peerDnsNames(peer('AA:01', 'DNS:first'))).toEqual(['first']);
    expect(peerDnsNames(peer('AA:01', 'DNS:changed'))).toEqual(['first']); // same certificate: not parsed again
    expect(peerDnsNames(peer('AA:02', 'DNS:second'))).toEqual(['second']);
    expect(peerDnsNames(peer('', 'DNS:unkeyed'))).toEqual(['unkeyed']); // no fingerprint: parsed, never cached
    expect(peerDnsNames(peer('', 'DNS:again'))).toEqual(['again']);
    for (let i = 0; i < 64; i++) peerDnsNames(peer(`BB:${i}`, `DNS:n${i}`));
    expect(peerDnsNames(peer('AA:01', 'DNS:reparsed'))).toEqual(['reparsed']); // the oldest entry was dropped
    const names = peerDnsNames(peer('BB:63', 'DNS:x'));
    names.push('mutated');
    expect(peerDnsNames(peer('BB:63', 'DNS:x'))).toEqual(['n63']); // callers get a copy
  });

  it('finds the connection of a grpc-js call, through other interceptors, and nothing in other shapes', () => {
    const session = {};
    expect(connectionOf({ stream: { session } })).toBe(session);
    expect(connectionOf({ nextCall: { nextCall: { stream: { session } } } })).toBe(session);
    expect(connectionOf({ stream: {} })).toBeUndefined();
    expect(connectionOf({ getAuthContext: () => null })).toBeUndefined();
    expect(connectionOf(undefined)).toBeUndefined();
  });

  it('decides once per connection; calls without a known connection are each checked', async () => {
    const { nodeControllerA, registryA } = await testPki();
    const check = peerIdentityCheck(NODE_CONTROLLER_IDENTITY);
    let reads = 0;
    const on = (session: object, pem: string): { getAuthContext: () => AuthContext; stream: { session: object } } => ({
      stream: { session },
      getAuthContext: () => {
        reads++;
        return { transportSecurityType: 'ssl', sslPeerCertificate: peerOf(pem) };
      },
    });
    const good = {};
    const bad = {};
    for (let i = 0; i < 5; i++) check(on(good, nodeControllerA.certPem));
    expect(reads).toBe(1);
    for (let i = 0; i < 3; i++) {
      expect(() => check(on(bad, registryA.certPem))).toThrow(
        new PermissionDeniedError('client certificate DNS SAN must include pmem-node-controller (has: pmem-registry)'),
      );
    }
    expect(reads).toBe(2);
    const loose = {
      getAuthContext: () => {
        reads++;
        return { transportSecurityType: 'ssl', sslPeerCertificate: peerOf(nodeControllerA.certPem) };
      },
    };
    check(loose);
    check(loose);
    expect(reads).toBe(4);
    // Another check (another expected identity) keeps its own verdicts for the same connection.
    expect(() => peerIdentityCheck(REGISTRY_IDENTITY)(on(good, nodeControllerA.certPem))).toThrow(
      PermissionDeniedError,
    );
  });
});
