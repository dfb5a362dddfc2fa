#!/usr/bin/env node
// Bundles the pmem-csi-driver binary into packages/driver/dist/bundle/: one ES module per entry
// plus shared chunks (code splitting keeps each device mode's package and the local stack in
// their own chunks, loaded only by the mode that runs), with every npm dependency inside, so the
// driver image needs no node_modules and start-up reads a handful of files instead of ~400
// modules (module resolution and loading were a third of the driver's start-up CPU).
//   node tools/bundle.mjs            build (the Dockerfile runs it; `npm run bench` uses the result)
//   node tools/bundle.mjs --check    build into a temporary directory and run `--help` from it
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinnedNodeVersion } from './check-node.mjs';

const root = new URL('..', import.meta.url).pathname;
const check = process.argv.includes('--check');
const outdir = check ? mkdtempSync(join(tmpdir(), 'pmem-bundle-')) : join(root, 'packages/driver/dist/bundle');

// A bundled CommonJS dependency may call require() for Node's built-ins; ES modules have none.
const banner =
  "import { createRequire as __pmemCsiCreateRequire } from 'node:module';\nconst require = __pmemCsiCreateRequire(import.meta.url);";

const result = await build({
  absWorkingDir: root,
  entryPoints: { 'pmem-csi-driver': 'packages/driver/src/main.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  // The syntax of the Node.js the image runs: the one package.json pins (versions.env says the same).
  target: `node${pinnedNodeVersion().split('.')[0]}`,
  conditions: ['@pmem-csi/source'],
  outExtension: { '.js': '.mjs' },
  banner: { js: banner },
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
});
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
const files = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.mjs'));
if (check) {
  const run = spawnSync(process.execPath, [join(outdir, 'pmem-csi-driver.mjs'), '--help'], {
    encoding: 'utf8',
    cwd: tmpdir(),
  });
  rmSync(outdir, { recursive: true, force: true });
  if (run.status !== 0 || !run.stdout.includes('usage: pmem-csi-driver')) {
    console.error(`bundle: the bundled driver did not answer --help (exit ${run.status}):\n${run.stderr}`);
    process.exit(1);
  }
}
console.log(
  `bundle: ${files.length} module(s), ${(bytes / 1024 / 1024).toFixed(1)} MiB in ${check ? '(temporary)' : outdir}`,
);
