// Real clients for the mutual-TLS campaign. probeTls: a node:tls client that completes the
// handshake and starts HTTP/2 (gRPC's transport) — accepted when the server answers with its
// SETTINGS frame, refused when the server alerts or closes (with TLS 1.3 the server judges the
// client certificate after the client's Finished, so the refusal arrives as an alert on the first
// read). probeOpenssl: `openssl s_client` for old protocol versions and weak ciphers, which
// OpenSSL 3 offers only at security level 0. grpcCall: a @grpc/grpc-js client making a real call.
import * as grpc from '@grpc/grpc-js';
import { connect, type SecureVersion, type TLSSocket } from 'node:tls';
import { isServiceError, loadCsi, loadRegistry, type CertificateAndKey } from '@pmem-csi/runtime';
import { runTool } from '../cluster/processes.js';

export interface TlsClient {
  readonly caPem: string;
  /** The client certificate; none when absent. */
  readonly pair?: CertificateAndKey;
  /** SNI and the identity expected of the server. */
  readonly servername: string;
  readonly minVersion?: SecureVersion;
  readonly maxVersion?: SecureVersion;
  readonly ciphers?: string;
}

export interface ProbeResult {
  readonly accepted: boolean;
  /** The client could not even offer this handshake (e.g. a cipher its OpenSSL lacks): nothing was tried. */
  readonly notOffered?: boolean;
  /** Node's error code (the alert the server sent), e.g. ERR_SSL_TLSV1_ALERT_UNKNOWN_CA. */
  readonly code?: string;
  readonly detail: string;
  /** The client's port: the server logs the peer as 127.0.0.1:<this>. */
  readonly localPort?: number;
}

/** HTTP/2 client preface and an empty SETTINGS frame. */
const H2_PREFACE = Buffer.concat([
  Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
  Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
]);

/** Connect with `client` to 127.0.0.1:`port`; never rejects. */
export function probeTls(port: number, client: TlsClient, timeoutMs = 5000): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let socket: TLSSocket;
    try {
      socket = connect({
        host: '127.0.0.1',
        port,
        servername: client.servername,
        ca: client.caPem,
        ...(client.pair ? { cert: client.pair.certPem, key: client.pair.keyPem } : {}),
        ...(client.minVersion ? { minVersion: client.minVersion } : {}),
        ...(client.maxVersion ? { maxVersion: client.maxVersion } : {}),
        ...(client.ciphers ? { ciphers: client.ciphers } : {}),
        ALPNProtocols: ['h2'],
        // Only the server's verdict matters here; the client side is the campaign's other half.
        rejectUnauthorized: false,
      });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      resolve({
        accepted: false,
        notOffered: true,
        ...(err.code ? { code: err.code } : {}),
        detail: `this client cannot offer it: ${err.message}`,
      });
      return;
    }
    let done = false;
    let localPort: number | undefined;
    socket.once('connect', () => (localPort = socket.localPort));
    const finish = (r: ProbeResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(localPort === undefined ? r : { ...r, localPort });
    };
    const timer = setTimeout(() => finish({ accepted: false, detail: `no answer within ${timeoutMs} ms` }), timeoutMs);
    socket.once('secureConnect', () => socket.write(H2_PREFACE));
    socket.once('data', () =>
      finish({ accepted: true, detail: `HTTP/2 over ${String(socket.getProtocol())} ${socket.getCipher().name}` }),
    );
    socket.once('error', (e: NodeJS.ErrnoException) => {
      // Errors raised by this client's own OpenSSL before anything was sent are "not offered".
      const local = e.code === 'ERR_SSL_NO_PROTOCOLS_AVAILABLE' || e.code === 'ERR_SSL_NO_CIPHERS_AVAILABLE';
      finish({
        accepted: false,
        ...(local ? { notOffered: true } : {}),
        ...(e.code ? { code: e.code } : {}),
        detail: e.message.trim(),
      });
    });
    socket.once('close', () => finish({ accepted: false, detail: 'closed by the server without an alert' }));
  });
}

export interface OpensslProbe {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly servername: string;
  /** e.g. ['-tls1'] or ['-tls1_2', '-cipher', 'NULL-SHA256@SECLEVEL=0']. */
  readonly args: readonly string[];
}

/** `openssl s_client` against 127.0.0.1:`port`: accepted when a cipher was negotiated. */
export async function probeOpenssl(port: number, p: OpensslProbe): Promise<ProbeResult> {
  const run = await runTool(
    'openssl',
    [
      's_client',
      '-connect',
      `127.0.0.1:${port}`,
      '-servername',
      p.servername,
      '-CAfile',
      p.caFile,
      '-cert',
      p.certFile,
      '-key',
      p.keyFile,
      ...p.args,
    ],
    {
      timeoutMs: 15_000,
      okCodes: [0, 1],
    },
  );
  const text = `${run.stdout}\n${run.stderr}`;
  if (/no cipher match|no ciphers available|no protocols available|unknown option|Call to SSL_CONF_cmd/.test(text)) {
    return {
      accepted: false,
      notOffered: true,
      detail: `this openssl cannot offer it: ${text.split('\n').find((l) => /error|unknown/i.test(l)) ?? ''}`,
    };
  }
  const cipher = /Cipher is (\S+)/.exec(text)?.[1];
  const accepted = cipher !== undefined && cipher !== '(NONE)' && run.code === 0;
  const alert =
    /alert ([a-z ]+?)(?::|\n|$)/.exec(text)?.[1] ?? /error:[0-9A-F]+:SSL routines::([a-z ]+)/.exec(text)?.[1];
  return {
    accepted,
    ...(alert ? { code: alert } : {}),
    detail: accepted
      ? `negotiated ${cipher}`
      : (text.split('\n').find((l) => /error|alert/i.test(l)) ?? `exit code ${run.code}`),
  };
}

export interface CallResult {
  readonly ok: boolean;
  readonly code?: grpc.status;
  readonly details: string;
}

/** Client credentials for `pair` (or none: server-authenticated TLS only). */
export function clientCredentials(caPem: string, pair?: CertificateAndKey): grpc.ChannelCredentials {
  return pair === undefined
    ? grpc.credentials.createSsl(Buffer.from(caPem))
    : grpc.credentials.createSsl(Buffer.from(caPem), Buffer.from(pair.keyPem), Buffer.from(pair.certPem));
}

/** One real call on each server kind: registry RenewController (for a node nobody registered), node-controller ControllerGetCapabilities. */
export async function grpcCall(
  server: { kind: 'registry' | 'node-controller'; port: number; servername: string },
  creds: grpc.ChannelCredentials,
  timeoutMs = 5000,
): Promise<CallResult> {
  const options = { 'grpc.ssl_target_name_override': server.servername, 'grpc.default_authority': server.servername };
  const client =
    server.kind === 'registry'
      ? new (loadRegistry().pmemcsi.registry.v1.Registry)(`127.0.0.1:${server.port}`, creds, options)
      : new (loadCsi().csi.v1.Controller)(`127.0.0.1:${server.port}`, creds, options);
  const deadline = Date.now() + timeoutMs;
  try {
    await new Promise<void>((resolve, reject) => {
      const cb = (err: grpc.ServiceError | null): void => (err ? reject(err) : resolve());
      if ('RenewController' in client)
        client.RenewController({ node_id: 'campaign-probe', registration_id: 'none' }, { deadline }, cb);
      else client.ControllerGetCapabilities({}, { deadline }, cb);
    });
    return { ok: true, details: 'OK' };
  } catch (e) {
    if (!isServiceError(e)) throw e;
    return { ok: false, code: e.code, details: e.details };
  } finally {
    client.close();
  }
}

/** Whether a call got past TLS and the identity check (any answer from the service itself counts). */
export function reachedService(r: CallResult): boolean {
  return (
    r.ok ||
    (r.code !== grpc.status.UNAVAILABLE &&
      r.code !== grpc.status.UNAUTHENTICATED &&
      r.code !== grpc.status.PERMISSION_DENIED &&
      r.code !== grpc.status.DEADLINE_EXCEEDED)
  );
}
