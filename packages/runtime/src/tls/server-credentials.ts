// Server side of the controller<->node mutual TLS for grpc-js: TLS >= 1.2, a client certificate
// is required and verified against the CA bundle, the client's DNS SAN identity is checked on
// every call, and new files are picked up without a restart.
//
// Why a ServerCredentials subclass rather than grpc-js's experimental certificate-provider
// credentials: grpc-js applies new material with http2 `setSecureContext()`, which rebuilds the
// whole context from the options it is given, and the provider credentials pass only
// {ca, cert, key}: `minVersion` would silently fall back to Node's default after the first reload.
// Here every update carries `minVersion`; requestCert/rejectUnauthorized are server options that a
// context swap does not touch. Existing connections keep their session; new handshakes use the
// new material, so in-flight calls are never interrupted. Polling runs only while a server is
// bound with these credentials (grpc-js adds a watcher per listening port and removes it when the
// port closes). Refused peers — failed handshakes and refused calls — are logged (refusal-log.ts);
// the credentials carry that log so that bindServer can hand it the TLS servers grpc-js creates.
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../logger.js';
import { contextOptionsOf, MIN_TLS_VERSION, type TlsFiles, type TlsMaterial } from './material.js';
import { peerIdentityInterceptor } from './peer.js';
import { REFUSAL_LOG, TlsRefusalLog } from './refusal-log.js';
import { TlsFileSource } from './source.js';

type SecureContextWatcher = Parameters<grpc.ServerCredentials['_addWatcher']>[0];

export interface ServerCredentialsOptions {
  /** The only client identity accepted (DNS SAN), e.g. `pmem-node-controller` on the registry server. */
  readonly allowedClientSan: string;
  /** Where refused peers are logged (default: the logger the TLS file source was opened with). */
  readonly logger?: Logger;
  /** How often to look at the files (default 1000 ms). */
  readonly pollIntervalMs?: number;
}

/** grpc-js ServerCredentials fed by a TlsFileSource. */
class ReloadingServerCredentials extends grpc.ServerCredentials {
  readonly #source: TlsFileSource;
  #applied: number;
  #stop: (() => void) | undefined;

  constructor(source: TlsFileSource) {
    super(
      { requestCert: true, rejectUnauthorized: true, minVersion: MIN_TLS_VERSION },
      contextOptionsOf(source.current),
    );
    this.#source = source;
    this.#applied = source.generation;
  }

  override _addWatcher(watcher: SecureContextWatcher): void {
    super._addWatcher(watcher);
    if (this.getWatcherCount() !== 1) return;
    // First bound port: follow the source from now on (it may have moved on since we last looked).
    if (this.#source.generation !== this.#applied) this.#apply(this.#source.current);
    const unsubscribe = this.#source.onChange((material) => this.#apply(material));
    const release = this.#source.retain();
    this.#stop = () => {
      unsubscribe();
      release();
    };
  }

  override _removeWatcher(watcher: SecureContextWatcher): void {
    super._removeWatcher(watcher);
    if (this.getWatcherCount() === 0) {
      this.#stop?.();
      this.#stop = undefined;
    }
  }

  #apply(material: TlsMaterial): void {
    this.#applied = this.#source.generation;
    this.updateSecureContextOptions(contextOptionsOf(material));
  }

  _equals(other: grpc.ServerCredentials): boolean {
    return other === this;
  }
}

/**
 * Server credentials from an open TlsFileSource (share one source between a server and the
 * clients of the same pod). Calls from peers other than `allowedClientSan` fail with
 * PERMISSION_DENIED before any handler runs; refused handshakes and calls are logged.
 */
export function serverCredentialsFromSource(
  source: TlsFileSource,
  options: Pick<ServerCredentialsOptions, 'allowedClientSan' | 'logger'>,
): grpc.ServerCredentials {
  const refusals = new TlsRefusalLog(
    (options.logger ?? source.logger).child({ component: 'mtls-server', allowedClientSan: options.allowedClientSan }),
  );
  const interceptor = peerIdentityInterceptor(options.allowedClientSan, (peer, code, details) =>
    refusals.callRefused(peer, code, details),
  );
  const credentials = grpc.experimental.createServerCredentialsWithInterceptors(
    new ReloadingServerCredentials(source),
    [interceptor],
  );
  Object.defineProperty(credentials, REFUSAL_LOG, { value: refusals });
  return credentials;
}

/**
 * Mutual-TLS server credentials from files: loads and validates them now (rejects with an error
 * naming the file when they are missing or invalid), then follows changes while bound.
 */
export async function serverCredentials(
  files: TlsFiles,
  options: ServerCredentialsOptions,
): Promise<grpc.ServerCredentials> {
  const source = await TlsFileSource.open(files, { logger: options.logger, pollIntervalMs: options.pollIntervalMs });
  return serverCredentialsFromSource(source, options);
}
