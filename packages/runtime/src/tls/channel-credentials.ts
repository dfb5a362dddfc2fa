// Client side of the controller<->node mutual TLS for grpc-js: TLS >= 1.2, our certificate from
// the files, the server verified against the CA bundle and identified by its DNS SAN only — the
// SAN must equal `expectedServerName` whatever address was dialled (nodes are dialled by IP), and
// that name is also sent as SNI (an IP address as SNI is not allowed by RFC 6066).
//
// No timer: material matters only when a connection is made, so each new connection first
// re-checks the files if they were last looked at more than `pollIntervalMs` ago. Established
// connections are unaffected by changes.
import * as grpc from '@grpc/grpc-js';
import type { Socket } from 'node:net';
import { connect, type PeerCertificate } from 'node:tls';
import { hasDnsName } from '../certs/inspect.js';
import type { Logger } from '../logger.js';
import type { TlsFiles } from './material.js';
import { peerDnsNames } from './peer.js';
import { TlsFileSource } from './source.js';

type SecureConnector = grpc.experimental.SecureConnector;
type SecureConnectResult = grpc.experimental.SecureConnectResult;

export interface ChannelCredentialsOptions {
  /** The DNS SAN the server's certificate must carry, e.g. `pmem-registry`. */
  readonly expectedServerName: string;
  readonly logger?: Logger;
  /** Files are re-checked before a new connection when older than this (default 1000 ms). */
  readonly pollIntervalMs?: number;
}

/** checkServerIdentity replacement: DNS SAN equality with `expected`; the dialled host does not matter. */
export function serverIdentityChecker(expected: string): (host: string, cert: PeerCertificate) => Error | undefined {
  return (_host, cert) => {
    const names = peerDnsNames(cert);
    if (hasDnsName(names, expected)) return undefined;
    return Object.assign(
      new Error(`server certificate DNS SAN must include ${expected} (has: ${names.join(', ') || 'none'})`),
      {
        code: 'ERR_TLS_CERT_ALTNAME_INVALID',
      },
    );
  };
}

class ReloadingChannelCredentials extends grpc.ChannelCredentials {
  readonly #source: TlsFileSource;
  readonly #expected: string;
  readonly #checkServerIdentity: (host: string, cert: PeerCertificate) => Error | undefined;

  constructor(source: TlsFileSource, expectedServerName: string) {
    super();
    this.#source = source;
    this.#expected = expectedServerName;
    this.#checkServerIdentity = serverIdentityChecker(expectedServerName);
  }

  _isSecure(): boolean {
    return true;
  }

  _equals(other: grpc.ChannelCredentials): boolean {
    return other === this;
  }

  _createSecureConnector(
    _target: grpc.experimental.GrpcUri,
    _options: grpc.ChannelOptions,
    callCredentials?: grpc.CallCredentials,
  ): SecureConnector {
    const perCall = callCredentials ?? grpc.credentials.createEmpty();
    return {
      connect: (socket) => this.#connect(socket),
      waitForReady: async () => {
        await this.#source.refreshIfStale();
      },
      getCallCredentials: () => perCall,
      destroy: () => undefined,
    };
  }

  #connect(socket: Socket): Promise<SecureConnectResult> {
    const { secureContext } = this.#source.current;
    return new Promise<SecureConnectResult>((resolve, reject) => {
      const onClose = (): void => reject(new Error('connection closed during the TLS handshake'));
      const tlsSocket = connect(
        {
          socket,
          secureContext,
          servername: this.#expected,
          ALPNProtocols: ['h2'],
          checkServerIdentity: this.#checkServerIdentity,
        },
        () => {
          tlsSocket.removeListener('close', onClose);
          tlsSocket.removeListener('error', reject);
          resolve({ socket: tlsSocket, secure: true });
        },
      );
      tlsSocket.once('close', onClose);
      tlsSocket.once('error', reject);
    });
  }
}

/** Channel credentials from an open TlsFileSource (share one source with the pod's server). */
export function channelCredentialsFromSource(
  source: TlsFileSource,
  options: Pick<ChannelCredentialsOptions, 'expectedServerName'>,
): grpc.ChannelCredentials {
  if (options.expectedServerName.trim() === '')
    throw new TypeError('channelCredentials: expectedServerName must not be empty');
  return new ReloadingChannelCredentials(source, options.expectedServerName);
}

/**
 * Mutual-TLS channel credentials from files: loads and validates them now (rejects with an error
 * naming the file when missing or invalid); later connections use changed files once valid.
 */
export async function channelCredentials(
  files: TlsFiles,
  options: ChannelCredentialsOptions,
): Promise<grpc.ChannelCredentials> {
  const source = await TlsFileSource.open(files, { logger: options.logger, pollIntervalMs: options.pollIntervalMs });
  return channelCredentialsFromSource(source, options);
}
