// deploy/tools/make-certs.ts, run as documented (npx tsx ...): two TLS Secrets with the names the
// operator-less manifests mount, whose certificates pass the same mutual-TLS handshake check the
// operator applies to user-supplied certificates.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_DRIVER_NAME, SECRET_KEYS, deploymentObjectNames } from '@pmem-csi/api';
import { DRIVER_VARIANTS } from '@pmem-csi/operator';
import { verifyByHandshake } from '@pmem-csi/runtime';
import { REPO_ROOT, parseManifests } from './render.js';

const TSX = join(REPO_ROOT, 'node_modules/.bin/tsx');
const makeCerts = (args: string[]): SpawnSyncReturns<string> =>
  spawnSync(TSX, ['deploy/tools/make-certs.ts', ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000 });

interface Secret {
  kind: string;
  type: string;
  metadata: { name: string; namespace: string };
  data: Record<string, string>;
}

describe('make-certs', () => {
  it('prints the two Secrets the driver mounts, with certificates that pass the handshake check', async () => {
    const r = makeCerts(['--namespace', 'pmem-csi']);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const secrets = parseManifests(r.stdout) as unknown as Secret[];
    const names = deploymentObjectNames(DEFAULT_DRIVER_NAME);
    expect(secrets.map((s) => [s.kind, s.type, s.metadata.namespace, s.metadata.name])).toEqual([
      ['Secret', 'kubernetes.io/tls', 'pmem-csi', names.registrySecret],
      ['Secret', 'kubernetes.io/tls', 'pmem-csi', names.nodeSecret],
    ]);
    const pem = (s: Secret | undefined, key: string): string => Buffer.from(s?.data[key] ?? '', 'base64').toString('utf8');
    const [registry, node] = secrets;
    expect(pem(registry, SECRET_KEYS.caCert)).toBe(pem(node, SECRET_KEYS.caCert));
    const verdict = await verifyByHandshake({
      caPem: pem(registry, SECRET_KEYS.caCert),
      registry: { certPem: pem(registry, SECRET_KEYS.cert), keyPem: pem(registry, SECRET_KEYS.key) },
      nodeController: { certPem: pem(node, SECRET_KEYS.cert), keyPem: pem(node, SECRET_KEYS.key) },
      timeoutMs: 10_000,
    });
    expect(verdict).toEqual({ ok: true });
    for (const variant of DRIVER_VARIANTS) {
      const mounted = readFileSync(join(REPO_ROOT, variant.renderedFile), 'utf8');
      for (const s of secrets) expect(mounted).toContain(`secretName: ${s.metadata.name}`);
    }
  }, 120_000);

  it('refuses bad arguments with the reason and the usage', () => {
    const r = makeCerts(['--namespace', 'Not_A_Namespace', '--validity-days', '0']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--namespace: "Not_A_Namespace" is not a namespace name');
    expect(r.stderr).toContain('--validity-days: "0" must be a whole number of days, at least 1');
    expect(r.stderr).toContain('usage: npx tsx deploy/tools/make-certs.ts');
    expect(r.stdout).toBe('');
  }, 120_000);
});
