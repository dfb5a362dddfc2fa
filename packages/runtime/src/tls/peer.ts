// Per-call authorisation of mutual-TLS peers by DNS SAN. The TLS layer has already verified the
// client certificate's chain (servers require and verify client certificates); this checks that
// the verified certificate names the one identity allowed to call: a DNS subject alternative name
// equal to the expected name (case-insensitive, no wildcards, never the CommonName).
//
// How the gRPC server wrapper uses it (grpc/server.ts, for the two mTLS TCP servers only — the
// CSI unix-socket servers have no TLS peer and must not get it):
//   const authorize = peerIdentityCheck(NODE_CONTROLLER_IDENTITY); // registry server (controller)
//   const authorize = peerIdentityCheck(REGISTRY_IDENTITY);        // node-controller server (node)
//   adaptService(name, definition, impl, { log, authorize });
// adaptService calls `authorize(call)` first in every handler, inside the promise whose rejection
// goes through status.ts, so a refusal answers UNAUTHENTICATED or PERMISSION_DENIED and the
// implementation never runs. `serverCredentials` installs the same check as an interceptor on the
// credentials, so every service bound with them is covered (the driver relies on that alone).
//
// Cost: parsing the peer's DER into an X509Certificate on every call was a large share of a node's
// busy time under load (e2e/bench/README.md, "Figures from the code's comments"), for an answer
// that depends only on the certificate. The DNS names
// are therefore remembered per certificate, keyed by the SHA-256 fingerprint of its DER that Node
// computes for every peer certificate; the TLS layer still verifies the chain and the validity of
// every connection (grpc-js reports no peer certificate for an unauthorised socket), so a cached
// answer is only ever reused for a certificate that was verified again on its own connection.
import * as grpc from '@grpc/grpc-js';
import { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { hasDnsName, parseDnsSans } from '../certs/inspect.js';
import { PermissionDeniedError, UnauthenticatedError } from '@pmem-csi/csi';
import { toServiceError } from '../status.js';

/** grpc-js's AuthContext (not exported by name from the package root). */
export type AuthContext = ReturnType<grpc.ServerInterceptingCallInterface['getAuthContext']>;

/** Anything that exposes grpc-js's auth context: every server call object and interceptor call. */
export interface CallWithAuthContext {
  getAuthContext(): AuthContext | null;
}

/** Throws UnauthenticatedError / PermissionDeniedError unless the call's peer may call us. */
export type PeerIdentityCheck = (call: CallWithAuthContext) => void;

/** Peer certificates whose names are remembered (a cluster has a handful: one per identity and rotation). */
const NAME_CACHE_LIMIT = 64;
const namesByFingerprint = new Map<string, readonly string[]>();

function parseNames(peer: PeerCertificate): string[] {
  try {
    return parseDnsSans(new X509Certificate(peer.raw).subjectAltName);
  } catch {
    return parseDnsSans(peer.subjectaltname);
  }
}

/** The DNS SANs of a verified peer certificate (from its DER; falls back to Node's rendering). */
export function peerDnsNames(peer: PeerCertificate | undefined): string[] {
  if (peer === undefined) return [];
  const key = typeof peer.fingerprint256 === 'string' && peer.fingerprint256 !== '' ? peer.fingerprint256 : undefined;
  const known = key === undefined ? undefined : namesByFingerprint.get(key);
  if (known !== undefined) return [...known];
  const names = parseNames(peer);
  if (key !== undefined) {
    // Oldest first out: a rotated certificate is not asked for again.
    if (namesByFingerprint.size >= NAME_CACHE_LIMIT)
      namesByFingerprint.delete(namesByFingerprint.keys().next().value as string);
    namesByFingerprint.set(key, Object.freeze([...names]));
  }
  return names;
}

/** The outcome of checking one connection's peer: nothing (allowed) or the refusal to throw. */
type Verdict = (() => never) | undefined;

function verdictFor(call: CallWithAuthContext, expectedSan: string): Verdict {
  const auth = call.getAuthContext();
  const peer = auth?.sslPeerCertificate;
  if (auth?.transportSecurityType !== 'ssl' || peer === undefined) {
    return () => {
      throw new UnauthenticatedError(`a client certificate with DNS SAN ${expectedSan} is required`);
    };
  }
  const names = peerDnsNames(peer);
  if (hasDnsName(names, expectedSan)) return undefined;
  return () => {
    throw new PermissionDeniedError(
      `client certificate DNS SAN must include ${expectedSan} (has: ${names.join(', ') || 'none'})`,
    );
  };
}

/**
 * The connection a grpc-js server call arrived on: the base call's http2 stream's session. grpc-js
 * does not export it (its getAuthContext() reads the peer certificate from that session's socket
 * on every call, a measurable share of a busy node); undefined when the shape is not as expected,
 * and then every call is checked on its own (a newer grpc-js costs time, never safety).
 */
export function connectionOf(call: unknown): object | undefined {
  let c: unknown = call;
  for (let depth = 0; depth < 8 && typeof c === 'object' && c !== null; depth++) {
    const stream = (c as { stream?: { session?: unknown } }).stream;
    if (stream !== undefined) {
      const session = stream.session;
      return typeof session === 'object' && session !== null ? session : undefined;
    }
    c = (c as { nextCall?: unknown }).nextCall;
  }
  return undefined;
}

/**
 * A per-call check that the client presented a certificate verified by our CA whose DNS SANs
 * include `expectedSan`. Throws UnauthenticatedError (no verified certificate: plaintext, or TLS
 * without a client certificate) or PermissionDeniedError (another identity).
 *
 * The verdict is remembered per connection: TLS verified the peer's chain once, at the handshake,
 * and its certificate cannot change for the life of the connection, so every later call on it
 * gets the same answer without reading the certificate again.
 */
export function peerIdentityCheck(expectedSan: string): PeerIdentityCheck {
  if (expectedSan.trim() === '') throw new TypeError('peerIdentityCheck: expectedSan must not be empty');
  const verdicts = new WeakMap<object, Verdict>();
  return (call) => {
    const connection = connectionOf(call);
    let verdict: Verdict;
    if (connection !== undefined && verdicts.has(connection)) verdict = verdicts.get(connection);
    else {
      verdict = verdictFor(call, expectedSan);
      if (connection !== undefined) verdicts.set(connection, verdict);
    }
    verdict?.();
  };
}

/** Told about every refused call: the peer address and the status sent. */
export type RefusedCallListener = (peer: string, code: string, details: string) => void;

/**
 * The same check as a grpc-js server interceptor: a refused call ends with UNAUTHENTICATED or
 * PERMISSION_DENIED (via status.ts) before any handler sees it, and `onRefused` hears of it.
 * `serverCredentials` attaches it to the credentials, so every service bound with them is covered.
 */
export function peerIdentityInterceptor(expectedSan: string, onRefused?: RefusedCallListener): grpc.ServerInterceptor {
  const check = peerIdentityCheck(expectedSan);
  return (_method, call) => {
    const listener = new grpc.ServerListenerBuilder()
      .withOnReceiveMetadata((metadata, next) => {
        try {
          check(call);
        } catch (e) {
          const { code, details } = toServiceError(e);
          onRefused?.(call.getPeer(), grpc.status[code] ?? String(code), details);
          call.sendStatus({ code, details });
          return;
        }
        next(metadata);
      })
      .build();
    const responder = new grpc.ResponderBuilder().withStart((next) => next(listener)).build();
    return new grpc.ServerInterceptingCall(call, responder);
  };
}
