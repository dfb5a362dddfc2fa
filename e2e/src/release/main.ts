// Entry of `npm run release` (see RELEASE_USAGE in options.ts), and of
// `npm run release -- verify DIR [--registry-ca FILE]`, which checks a release directory and the
// registry it names. Progress goes to stderr as JSON lines; the artifacts (or the checks) to stdout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseReleaseArgs, ReleaseUsageError } from './options.js';
import { runRelease, ReleaseRefusedError, type ReleaseLog } from './release.js';
import { readManifest, verifyRelease } from './verify.js';
import { RegistryClient } from './registry-client.js';
import { resolveReleaseTools, toolEnv } from './release-tools.js';

const log: ReleaseLog = (msg, fields = {}) =>
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'info', msg, ...fields })}\n`);

async function verifyMain(argv: readonly string[]): Promise<number> {
  const dir = argv[0];
  const caIdx = argv.indexOf('--registry-ca');
  const ca = caIdx >= 0 ? argv[caIdx + 1] : undefined;
  if (dir === undefined || dir.startsWith('--') || (caIdx >= 0 && ca === undefined)) {
    process.stderr.write('usage: npm run release -- verify DIR [--registry-ca FILE]\n');
    return 2;
  }
  const manifest = readManifest(resolve(dir));
  const tools = resolveReleaseTools();
  const work = mkdtempSync(join(tmpdir(), 'pmem-csi-verify-'));
  try {
    const caFile = ca === undefined ? undefined : resolve(ca);
    const env = toolEnv(work, caFile, '');
    const client = new RegistryClient(
      manifest.registry.split('/')[0] ?? '',
      caFile ?? '/etc/ssl/certs/ca-certificates.crt',
    );
    const checks = await verifyRelease(resolve(dir), { bin: tools.cosign, env }, client);
    for (const c of checks)
      process.stdout.write(`${c.ok ? 'ok  ' : 'FAIL'} ${c.what}${c.ok ? '' : `: ${c.reason ?? ''}`}\n`);
    const failed = checks.filter((c) => !c.ok).length;
    process.stdout.write(`verify: ${checks.length - failed} passed, ${failed} failed\n`);
    return failed === 0 ? 0 : 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'verify') return verifyMain(argv.slice(1));
  const opts = parseReleaseArgs(argv, process.cwd());
  const r = await runRelease(opts, log);
  for (const a of r.manifest.artifacts) {
    const name = a.kind === 'file' ? a.path : a.ref;
    process.stdout.write(`${a.kind.padEnd(11)} ${String(a.size).padStart(10)} ${a.digest} ${name}\n`);
  }
  process.stdout.write(
    `release ${opts.version}: ${r.manifest.artifacts.length} artifacts in ${r.out} (${r.seconds.toFixed(1)} s)\n`,
  );
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    const usage = e instanceof ReleaseUsageError || e instanceof ReleaseRefusedError;
    process.stderr.write(`release: ${(e as Error).message}\n`);
    process.exit(usage ? 2 : 1);
  },
);
