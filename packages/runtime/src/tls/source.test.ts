import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FailedPreconditionError, InvalidArgumentError } from '@pmem-csi/csi';
import { createLogger } from '../logger.js';
import { loadTlsMaterial } from './material.js';
import { TlsFileSource } from './source.js';
import { removeDir, tempDir, testPki, tlsFilesIn, writeTlsFiles } from './__fixtures__/test-certs.js';

beforeAll(() => testPki(), 120_000);

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map(removeDir));
});
async function files(...args: Parameters<typeof tlsFilesIn>): Promise<Awaited<ReturnType<typeof tlsFilesIn>>> {
  const set = await tlsFilesIn(...args);
  dirs.push(set.dir);
  return set;
}

function captureLog(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, logger: createLogger({ level: 'debug', format: 'json', sink: (l) => lines.push(l) }) };
}

describe('loadTlsMaterial', () => {
  it('loads a valid set', async () => {
    const { ca1, ca2, registryA } = await testPki();
    const set = await files(ca1.certPem + ca2.certPem, registryA);
    const m = await loadTlsMaterial(set);
    expect(m.caCount).toBe(2);
    expect(m.certificate.dnsNames).toEqual(['pmem-registry']);
    expect(m.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names the file that is missing, unparseable or mismatched, without key material', async () => {
    const { ca1, registryA, nodeControllerA } = await testPki();
    const set = await files(ca1.certPem, registryA);
    await expect(loadTlsMaterial({ ...set, caFile: join(set.dir, 'nope') })).rejects.toThrow(
      new FailedPreconditionError(`caFile ${join(set.dir, 'nope')}: cannot be read (ENOENT)`),
    );
    await writeFile(set.keyFile, '-----BEGIN PRIVATE KEY-----\nZ2FyYmFnZQ==\n-----END PRIVATE KEY-----\n');
    await expect(loadTlsMaterial(set)).rejects.toThrow(
      new InvalidArgumentError(`keyFile ${set.keyFile}: not a PEM private key`),
    );
    await writeFile(set.keyFile, nodeControllerA.keyPem);
    await expect(loadTlsMaterial(set)).rejects.toThrow(
      new InvalidArgumentError(`keyFile ${set.keyFile}: does not match the certificate in ${set.certFile}`),
    );
    await writeFile(set.caFile, 'not a certificate');
    await expect(loadTlsMaterial(set)).rejects.toThrow(
      new InvalidArgumentError(`caFile ${set.caFile}: no PEM "CERTIFICATE" block found`),
    );
  });
});

describe('TlsFileSource', () => {
  it('swaps to new valid material, and keeps the old one (with one warning, no key material) while the files are inconsistent', async () => {
    const { ca1, ca2, registryA, registryB } = await testPki();
    const set = await files(ca1.certPem, registryA);
    const { lines, logger } = captureLog();
    const source = await TlsFileSource.open(set, { logger, pollIntervalMs: 50 });
    const seen: string[] = [];
    source.onChange((m) => seen.push(m.certificate.fingerprint256));
    const before = source.current;
    await expect(source.refresh()).resolves.toBe(false); // nothing changed

    await writeFile(set.certFile, registryB.certPem); // key still A: inconsistent
    await expect(source.refresh()).resolves.toBe(false);
    expect(source.current).toBe(before);
    expect(lines.filter((l) => l.includes('"level":"warn"'))).toHaveLength(0); // quiet for one look
    await expect(source.refresh()).resolves.toBe(false);
    const warnings = lines.filter((l) => l.includes('"level":"warn"'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`keyFile ${set.keyFile}: does not match the certificate in ${set.certFile}`);
    await expect(source.refresh()).resolves.toBe(false);
    expect(lines.filter((l) => l.includes('"level":"warn"'))).toHaveLength(1); // not repeated

    await writeTlsFiles(set.dir, ca1.certPem + ca2.certPem, registryB);
    await expect(source.refresh()).resolves.toBe(true);
    expect(source.generation).toBe(2);
    expect(source.current.caCount).toBe(2);
    expect(seen).toEqual([source.current.certificate.fingerprint256]);
    expect(lines.join('\n')).not.toMatch(/PRIVATE KEY|MII[A-Za-z0-9+/]{20}/);
    source.close();
  });

  it('polls while retained and follows a Kubernetes-style ..data symlink swap', async () => {
    const { ca1, ca2, registryA, registryB } = await testPki();
    const dir = await tempDir();
    dirs.push(dir);
    const gen1 = join(dir, '..2030_01_01_00_00_00.1');
    const gen2 = join(dir, '..2030_01_01_00_01_00.2');
    await mkdir(gen1);
    await mkdir(gen2);
    await writeTlsFiles(gen1, ca1.certPem, registryA);
    await writeTlsFiles(gen2, ca2.certPem, registryB);
    await symlink(gen1, join(dir, '..data'));
    for (const f of ['ca.crt', 'tls.crt', 'tls.key']) await symlink(join('..data', f), join(dir, f));
    const set = { caFile: join(dir, 'ca.crt'), certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };

    const source = await TlsFileSource.open(set, { pollIntervalMs: 20 });
    const changed = new Promise<string>((resolve) => source.onChange((m) => resolve(m.certificate.fingerprint256)));
    const release = source.retain();
    // The kubelet's atomic writer: new ..data link next to the old, renamed over it.
    await symlink(gen2, join(dir, '..data_tmp'));
    await rename(join(dir, '..data_tmp'), join(dir, '..data'));
    const fingerprint = await changed;
    const { certificate } = await loadTlsMaterial(set);
    expect(fingerprint).toBe(certificate.fingerprint256);
    expect(source.generation).toBe(2);
    release();
    source.close();
  });

  it('refreshIfStale looks at the files at most once per interval', async () => {
    const { ca1, registryA, registryB } = await testPki();
    const set = await files(ca1.certPem, registryA);
    const source = await TlsFileSource.open(set, { pollIntervalMs: 60_000 });
    await writeTlsFiles(set.dir, ca1.certPem, registryB);
    await expect(source.refreshIfStale()).resolves.toBe(false); // looked at just now (open)
    await expect(source.refresh()).resolves.toBe(true);
    source.close();
  });
});
