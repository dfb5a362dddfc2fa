// Certificates for a registry on the loopback interface: a throw-away CA and a server
// certificate for 127.0.0.1 (IP SAN) and localhost, made with the host's openssl through the e2e
// command runner. The runtime package's certificate helpers issue DNS SANs only, and every client
// of the registry here (buildah, cosign, syft, helm, containerd) checks the IP it dialled against
// an IP SAN. Also: a CA bundle for Go tools (SSL_CERT_FILE replaces the system roots, so the
// bundle is the system's plus ours).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runTool } from '../cluster/processes.js';

export interface RegistryTls {
  /** PEM of the CA, the file clients trust. */
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt'];

/** Make a CA and a server certificate (EC P-256, valid `days`) for 127.0.0.1 and localhost in `dir`. */
export async function makeRegistryTls(dir: string, days = 2): Promise<RegistryTls> {
  const caKey = join(dir, 'ca.key');
  const caFile = join(dir, 'ca.crt');
  const keyFile = join(dir, 'server.key');
  const csr = join(dir, 'server.csr');
  const certFile = join(dir, 'server.crt');
  const ext = join(dir, 'server.ext');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await runTool('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    caKey,
    '-out',
    caFile,
    '-days',
    String(days),
    '-subj',
    '/CN=pmem-csi release test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await runTool('openssl', ['req', ...ec, '-keyout', keyFile, '-out', csr, '-subj', '/CN=127.0.0.1']);
  writeFileSync(
    ext,
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=critical,CA:FALSE\n' +
      'keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  await runTool('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    caFile,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-days',
    String(days),
    '-out',
    certFile,
    '-extfile',
    ext,
  ]);
  return { caFile, certFile, keyFile };
}

/** A PEM bundle of the system's roots and `extraCa`, for SSL_CERT_FILE of Go tools; returns its path. */
export function writeCaBundle(path: string, extraCa: string): string {
  const system = SYSTEM_BUNDLES.find((f) => existsSync(f));
  const parts = [system === undefined ? '' : readFileSync(system, 'utf8'), readFileSync(extraCa, 'utf8')];
  writeFileSync(path, parts.filter((p) => p !== '').join('\n'));
  return path;
}
