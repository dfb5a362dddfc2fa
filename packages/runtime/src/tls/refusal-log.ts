// The log of refused mutual-TLS peers on our servers: handshakes the TLS layer refused (no client
// certificate, not signed by our CA, expired or not yet valid, an old protocol version, no shared
// cipher) and calls the identity check refused (a verified certificate of another DNS SAN). One warn
// line per refusal with the peer address, a reason code and the reason in words — never key
// material; at most `limit` lines per window, so a hostile client cannot flood the log, and the
// number left out is logged when the next window opens.
//
// grpc-js creates the TLS servers itself and does not listen for 'tlsClientError' (Node then drops
// the failed connection silently), so bindServer hands the servers it bound to `watch`. For a
// certificate that fails verification Node ends the connection with a plain "socket hang up"; the
// verification result is on the socket (`authorizationError`), and the peer address is taken when
// the connection is accepted, before the failed socket forgets it.
import type { Socket } from 'node:net';
import type { Logger } from '../logger.js';

/** Where bindServer finds the refusal log of server credentials (see serverCredentialsFromSource). */
export const REFUSAL_LOG = Symbol.for('pmem-csi.tls.refusal-log');

/** The events of a TLS server that `watch` uses (a node:tls or node:http2 secure server). */
export interface TlsServerEvents {
  on(event: 'connection', listener: (socket: Socket) => void): unknown;
  on(event: 'tlsClientError', listener: (error: Error, socket: Socket) => void): unknown;
}

/** Verification results of a client certificate (Node's codes), in words. */
const VERIFY_REASONS: Readonly<Record<string, string>> = {
  CERT_HAS_EXPIRED: 'the client certificate has expired',
  CERT_NOT_YET_VALID: 'the client certificate is not valid yet',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the client certificate is not signed by a trusted CA',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the client certificate is not signed by a trusted CA',
  UNABLE_TO_GET_ISSUER_CERT: 'the client certificate is not signed by a trusted CA',
  SELF_SIGNED_CERT_IN_CHAIN: 'the client certificate chains to an untrusted self-signed CA',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the client certificate is self-signed and not trusted',
  CERT_SIGNATURE_FAILURE: 'the client certificate signature is invalid',
  CERT_REVOKED: 'the client certificate is revoked',
};

export interface RefusalLogOptions {
  /** Lines per window (default 50). */
  readonly limit?: number;
  /** Window length in ms (default 10 s). */
  readonly windowMs?: number;
}

interface HandshakeError extends Error {
  code?: string;
  reason?: string;
}

/** Rate-limited warn lines for refused peers of one server's credentials. */
export class TlsRefusalLog {
  readonly #log: Logger;
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #watched = new WeakSet<object>();
  readonly #peers = new WeakMap<object, string>();
  #windowStart = 0;
  #inWindow = 0;
  #suppressed = 0;
  #warnedUnwatchable = false;

  constructor(log: Logger, options: RefusalLogOptions = {}) {
    this.#log = log;
    this.#limit = options.limit ?? 50;
    this.#windowMs = options.windowMs ?? 10_000;
  }

  /** Log the handshakes `server` refuses (once per server, however often it is handed over). */
  watch(server: TlsServerEvents): void {
    if (this.#watched.has(server)) return;
    this.#watched.add(server);
    server.on('connection', (raw) => this.#peers.set(raw, `${raw.remoteAddress ?? '?'}:${raw.remotePort ?? '?'}`));
    server.on('tlsClientError', (error, socket) => this.handshakeRefused(error, socket));
  }

  /** Say once that refused handshakes cannot be logged (grpc-js did not expose its servers). */
  unwatchable(why: string): void {
    if (this.#warnedUnwatchable) return;
    this.#warnedUnwatchable = true;
    this.#log.warn('refused TLS handshakes will not be logged', { reason: why });
  }

  /** A handshake the TLS layer refused. */
  handshakeRefused(error: HandshakeError, socket: Socket): void {
    const verify = (socket as Socket & { authorizationError?: string | null }).authorizationError ?? undefined;
    const parent = (socket as Socket & { _parent?: object })._parent;
    const peer =
      (parent === undefined ? undefined : this.#peers.get(parent)) ?? this.#peers.get(socket) ?? addressOf(socket);
    const code = verify ?? error.code ?? 'UNKNOWN';
    const reason =
      verify === undefined
        ? (error.reason ?? firstLine(error.message))
        : (VERIFY_REASONS[verify] ?? `the client certificate failed verification (${verify})`);
    this.#write('TLS handshake refused', { peer, code, reason });
  }

  /** A call refused by the identity check (UNAUTHENTICATED or PERMISSION_DENIED). */
  callRefused(peer: string, code: string, reason: string): void {
    this.#write('mutual TLS call refused', { peer, code, reason });
  }

  #write(msg: string, fields: Record<string, string>): void {
    const now = Date.now();
    if (now - this.#windowStart >= this.#windowMs) {
      if (this.#suppressed > 0)
        this.#log.warn('mutual TLS refusals not logged (too many)', {
          count: this.#suppressed,
          windowSeconds: this.#windowMs / 1000,
        });
      this.#windowStart = now;
      this.#inWindow = 0;
      this.#suppressed = 0;
    }
    if (this.#inWindow >= this.#limit) {
      this.#suppressed++;
      return;
    }
    this.#inWindow++;
    this.#log.warn(msg, fields);
  }
}

function addressOf(socket: Socket): string {
  return socket.remoteAddress === undefined ? 'unknown' : `${socket.remoteAddress}:${socket.remotePort ?? '?'}`;
}

/** OpenSSL messages carry source paths after the reason: keep the first line, without them. */
function firstLine(message: string): string {
  return (message.split('\n')[0] ?? '').replace(/:\.\.\/deps\/openssl\/\S*$/, '').trim();
}
