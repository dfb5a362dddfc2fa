// `pmem_csi_certificate_expiry_timestamp_seconds`: when the certificates a process serves and
// trusts expire (Unix seconds), read at scrape time from the TLS sources it uses (TlsFileSource,
// which follows the files), so a rotated certificate shows at the next scrape. One series per
// certificate: role "certificate" for the process's own, "ca" for each CA of its bundle (two
// during a CA rotation). Alert: min(...) - time() < 14 days (deploy/prometheus/pmem-csi-rules.yaml).
import { Gauge, type Registry } from 'prom-client';
import { parseCertificateBundle } from '../certs/inspect.js';
import type { TlsMaterial } from '../tls/material.js';

export const CERTIFICATE_EXPIRY = 'pmem_csi_certificate_expiry_timestamp_seconds';

/** What the gauge reads: the current material of a TLS file set (TlsFileSource fits). */
export interface CertificateSource {
  readonly files: { readonly certFile: string; readonly caFile: string };
  readonly current: TlsMaterial;
}

interface Row {
  readonly labels: { file: string; role: 'certificate' | 'ca'; subject: string; serial: string };
  readonly seconds: number;
}

/** Rows of one material, cached by its digest (the CA bundle is parsed once per change). */
function rowsOf(source: CertificateSource, cache: Map<CertificateSource, { digest: string; rows: Row[] }>): Row[] {
  const material = source.current;
  const hit = cache.get(source);
  if (hit?.digest === material.digest) return hit.rows;
  const own = material.certificate;
  const rows: Row[] = [
    {
      labels: { file: source.files.certFile, role: 'certificate', subject: own.subjectCN ?? '', serial: own.serial },
      seconds: own.notAfter.getTime() / 1000,
    },
  ];
  for (const ca of parseCertificateBundle(material.ca.toString('utf8'))) {
    rows.push({
      labels: { file: source.files.caFile, role: 'ca', subject: ca.subjectCN ?? '', serial: ca.serial },
      seconds: ca.notAfter.getTime() / 1000,
    });
  }
  cache.set(source, { digest: material.digest, rows });
  return rows;
}

/** Register the expiry gauge of `sources` on `registry`. */
export function registerCertificateExpiry(
  registry: Registry,
  sources: readonly CertificateSource[],
): Gauge<'file' | 'role' | 'subject' | 'serial'> {
  const cache = new Map<CertificateSource, { digest: string; rows: Row[] }>();
  return new Gauge({
    name: CERTIFICATE_EXPIRY,
    help: 'When a certificate in use expires (notAfter, Unix seconds): role "certificate" is the process\'s own, "ca" each CA it trusts.',
    labelNames: ['file', 'role', 'subject', 'serial'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const source of sources) for (const row of rowsOf(source, cache)) this.set(row.labels, row.seconds);
    },
  });
}
