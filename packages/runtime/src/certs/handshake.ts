// Verification of a certificate set by a real mutual-TLS handshake, as the Go operator did for
// user-supplied certificates: the registry and node-controller certificates talk to each other
// over node:tls on 127.0.0.1 in both roles (registry serves / node-controller is the client, and
// the reverse), which checks chain, key possession, extended key usage and expiry with OpenSSL's
// own rules. Before that, explicit checks give precise reasons (which certificate, what is wrong)
// for what would otherwise surface as one opaque handshake error. Reasons never contain key
// material. OpenSSL checks expiry against the wall clock; the explicit checks use `now`.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import type { CertificateAndKey } from './generate.js';
import { describeX509, hasDnsName, parseCertificateBundle, parseDnsSans, type CertificateInfo } from './inspect.js';
import { NODE_CONTROLLER_IDENTITY, REGISTRY_IDENTITY } from './names.js';

export interface HandshakeInput {
  /** PEM of the CA certificate(s) both sides trust (a bundle is fine). */
  readonly caPem: string;
  readonly registry: CertificateAndKey;
  readonly nodeController: CertificateAndKey;
  /** Time for the explicit validity checks (default: the current time). */
  readonly now?: Date;
  /** Upper bound for the whole verification, both handshakes included. */
  readonly timeoutMs: number;
}

/** Which input a refusal is about; 'handshake' when it cannot be pinned on one certificate. */
export type CertificateSubject = 'ca' | 'registry' | 'node-controller' | 'handshake';

export type HandshakeResult =
  { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly certificate: CertificateSubject };

const MIN_TLS = 'TLSv1.2';

class Refusal extends Error {
  constructor(
    readonly certificate: CertificateSubject,
    reason: string,
  ) {
    super(reason);
  }
}

interface Party {
  readonly label: 'registry' | 'node-controller';
  readonly san: string;
  readonly certPem: string;
  readonly keyPem: string;
  readonly info: CertificateInfo;
}

function validityProblem(info: CertificateInfo, now: Date): string | undefined {
  if (now < info.notBefore) return `not valid before ${info.notBefore.toISOString()}`;
  if (now > info.notAfter) return `expired at ${info.notAfter.toISOString()}`;
  return undefined;
}

function checkCa(caPem: string, now: Date): void {
  let cas: CertificateInfo[];
  try {
    cas = parseCertificateBundle(caPem);
  } catch {
    throw new Refusal('ca', 'CA certificate: cannot be parsed as PEM X.509 certificate(s)');
  }
  const authorities = cas.filter((c) => c.isCa);
  if (authorities.length === 0)
    throw new Refusal('ca', 'CA certificate: not a CA certificate (basicConstraints CA:TRUE missing)');
  const problems = authorities.map((c) => validityProblem(c, now));
  const firstProblem = problems[0];
  if (firstProblem !== undefined && problems.every((p) => p !== undefined)) {
    throw new Refusal('ca', `CA certificate: ${firstProblem}`);
  }
}

function parseKey(label: Party['label'], keyPem: string): KeyObject {
  try {
    return createPrivateKey(keyPem);
  } catch {
    throw new Refusal(label, `${label} private key: cannot be parsed as a PEM private key`);
  }
}

function loadParty(spec: Omit<Party, 'info'>, caPem: string, now: Date): Party {
  const { label } = spec;
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(spec.certPem);
  } catch {
    throw new Refusal(label, `${label} certificate: cannot be parsed as a PEM X.509 certificate`);
  }
  const key = parseKey(label, spec.keyPem);
  if (!x509.checkPrivateKey(key)) throw new Refusal(label, `${label} certificate: does not match its private key`);
  const info = describeX509(x509);
  const problem = validityProblem(info, now);
  if (problem !== undefined) throw new Refusal(label, `${label} certificate: ${problem}`);
  try {
    tls.createSecureContext({ ca: caPem, cert: spec.certPem, key: spec.keyPem, minVersion: MIN_TLS });
  } catch (e) {
    throw new Refusal(label, `${label} certificate: cannot be used for TLS (${codeOf(e)})`);
  }
  return { ...spec, info };
}

function codeOf(e: unknown): string {
  if (typeof e === 'string') return e;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return e instanceof Error ? e.message : String(e);
}

const NOT_SIGNED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

/** A readable reason for an OpenSSL verification code about `party`'s certificate. */
function verifyFailure(party: Party, code: string, role: 'server' | 'client'): Refusal {
  const prefix = `${party.label} certificate:`;
  if (NOT_SIGNED.has(code)) return new Refusal(party.label, `${prefix} not signed by the given CA (${code})`);
  if (code === 'CERT_HAS_EXPIRED')
    return new Refusal(party.label, `${prefix} expired at ${party.info.notAfter.toISOString()}`);
  if (code === 'CERT_NOT_YET_VALID')
    return new Refusal(party.label, `${prefix} not valid before ${party.info.notBefore.toISOString()}`);
  if (code === 'INVALID_PURPOSE') {
    return new Refusal(
      party.label,
      `${prefix} not valid for TLS ${role} authentication (extended key usage must include ${role}Auth)`,
    );
  }
  return new Refusal(party.label, `${prefix} rejected by its TLS peer (${code})`);
}

interface PeerView {
  readonly authorized: boolean;
  readonly authorizationError: unknown;
  readonly peer: tls.PeerCertificate;
}

function viewOf(socket: tls.TLSSocket): PeerView {
  return {
    authorized: socket.authorized,
    authorizationError: socket.authorizationError,
    peer: socket.getPeerCertificate(),
  };
}

/** Judge what one side saw of `party` (the other side's certificate). */
function judge(view: PeerView, party: Party, role: 'server' | 'client'): void {
  if (!view.authorized) throw verifyFailure(party, codeOf(view.authorizationError), role);
  const names = parseDnsSans(view.peer.subjectaltname);
  if (!hasDnsName(names, party.san)) {
    throw new Refusal(
      party.label,
      `${party.label} certificate: DNS SAN must include ${party.san} (has: ${names.join(', ') || 'none'})`,
    );
  }
}

interface Outcome {
  server?: PeerView | Error;
  client?: PeerView | Error;
}

/** Run one handshake on 127.0.0.1 with `server` serving and `client` connecting; collect both views. */
function runHandshake(caPem: string, server: Party, client: Party, timeoutMs: number): Promise<Outcome> {
  const outcome: Outcome = {};
  const sockets: tls.TLSSocket[] = [];
  return new Promise<Outcome>((resolve) => {
    const srv = tls.createServer({
      ca: caPem,
      cert: server.certPem,
      key: server.keyPem,
      minVersion: MIN_TLS,
      requestCert: true,
      rejectUnauthorized: false,
    });
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const s of sockets) s.destroy();
      srv.close();
      resolve(outcome);
    };
    const record = (side: keyof Outcome, value: PeerView | Error): void => {
      outcome[side] ??= value;
      if (outcome.server !== undefined && outcome.client !== undefined) finish();
    };
    const timer = setTimeout(finish, timeoutMs);
    srv.on('secureConnection', (s: tls.TLSSocket) => {
      sockets.push(s);
      s.on('error', () => undefined); // the client side reports the handshake's fate
      record('server', viewOf(s));
    });
    srv.on('tlsClientError', (e: Error) => record('server', e));
    srv.on('error', (e: Error) => {
      record('client', e);
      record('server', e);
    });
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      const c = tls.connect({
        host: '127.0.0.1',
        port,
        servername: server.san,
        ca: caPem,
        cert: client.certPem,
        key: client.keyPem,
        minVersion: MIN_TLS,
        rejectUnauthorized: false,
        checkServerIdentity: () => undefined, // names are judged below, by DNS SAN only
      });
      sockets.push(c);
      c.once('secureConnect', () => record('client', viewOf(c)));
      c.on('error', (e: Error) => record('client', e));
    });
  });
}

async function handshakeBetween(caPem: string, server: Party, client: Party, deadline: number): Promise<void> {
  const timeoutMs = Math.max(1, deadline - Date.now());
  const outcome = await runHandshake(caPem, server, client, timeoutMs);
  const pair = `${server.label} (server) and ${client.label} (client)`;
  if (outcome.server === undefined || outcome.client === undefined) {
    throw new Refusal('handshake', `TLS handshake between ${pair} did not complete within ${timeoutMs} ms`);
  }
  // What the client saw of the server first: a refused server certificate also aborts the client's side.
  if (!(outcome.client instanceof Error)) judge(outcome.client, server, 'server');
  if (!(outcome.server instanceof Error)) judge(outcome.server, client, 'client');
  const failure = outcome.client instanceof Error ? outcome.client : outcome.server;
  if (failure instanceof Error)
    throw new Refusal('handshake', `TLS handshake between ${pair} failed (${codeOf(failure)})`);
}

/**
 * Verify that the registry and node-controller certificates work together: both chain to `caPem`,
 * match their keys, are valid at `now`, carry their DNS SAN identities and complete a real mutual
 * TLS handshake in both directions. Never throws for bad input; the reason names the certificate.
 */
export async function verifyByHandshake(input: HandshakeInput): Promise<HandshakeResult> {
  const now = input.now ?? new Date();
  const deadline = Date.now() + input.timeoutMs;
  try {
    checkCa(input.caPem, now);
    const registry = loadParty({ label: 'registry', san: REGISTRY_IDENTITY, ...input.registry }, input.caPem, now);
    const nodeController = loadParty(
      { label: 'node-controller', san: NODE_CONTROLLER_IDENTITY, ...input.nodeController },
      input.caPem,
      now,
    );
    await handshakeBetween(input.caPem, registry, nodeController, deadline);
    await handshakeBetween(input.caPem, nodeController, registry, deadline);
    return { ok: true };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, reason: e.message, certificate: e.certificate };
    return { ok: false, reason: `verification failed: ${codeOf(e)}`, certificate: 'handshake' };
  }
}
