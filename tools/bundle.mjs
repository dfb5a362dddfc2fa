#!/usr/bin/env node
// Bundles the pmem-csi-driver binary into packages/driver/dist/bundle/: one ES module per entry
// plus shared chunks (code splitting keeps each device mode's package and the local stack in
// their own chunks, loaded only by the mode that runs), with every npm dependency inside, so the
// driver image needs no node_modules and start-up reads a handful of files instead of ~400
// modules (module resolution and loading were a third of the driver's start-up CPU). Then fills
// the bundle's compile cache (compile-cache/ beside it, which the entry turns on: V8 byte code of
// every module, so a start skips compiling ~1.3 MB of JavaScript) by running
// warm-compile-cache.mjs from the bundle with this Node.js, and checks that a start reads it.
//   node tools/bundle.mjs                      build and fill the cache (`npm run bench` uses the result)
//   node tools/bundle.mjs --no-compile-cache   build only (the image's build stage: the cache is made
//                                              where the image runs the bundle, deploy/images/driver.Dockerfile)
//   node tools/bundle.mjs --check              build into a temporary directory, fill its cache and run `--help` from it
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinnedNodeVersion } from './check-node.mjs';

const root = new URL('..', import.meta.url).pathname;
const check = process.argv.includes('--check');
const warm = !process.argv.includes('--no-compile-cache');
const outdir = check ? mkdtempSync(join(tmpdir(), 'pmem-bundle-')) : join(root, 'packages/driver/dist/bundle');
// esbuild leaves the files of earlier builds in place; the cache would keep their entries too.
if (!check) rmSync(outdir, { recursive: true, force: true });

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
// The cache's filler is one file of its own beside the bundle: it loads the bundle's modules by
// their file names when it runs, and shares no chunk with the entry (which then loads only itself
// before it turns the cache on).
await build({
  absWorkingDir: root,
  entryPoints: { 'warm-compile-cache': 'packages/driver/src/warm-compile-cache.ts' },
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: `node${pinnedNodeVersion().split('.')[0]}`,
  outExtension: { '.js': '.mjs' },
  legalComments: 'none',
  logLevel: 'warning',
});
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
const files = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.mjs'));

/** Run the bundled `file` with this Node.js; fails the build with its output unless it exits 0. */
function runBundled(file, args, env = {}) {
  const run = spawnSync(process.execPath, [join(outdir, file), ...args], {
    encoding: 'utf8',
    cwd: tmpdir(),
    env: { ...process.env, ...env },
  });
  if (run.status !== 0) {
    console.error(`bundle: ${file} ${args.join(' ')} failed (exit ${run.status}):\n${run.stdout}${run.stderr}`);
    process.exit(1);
  }
  return run;
}

let cache = '';
if (warm || check) {
  // Every module but the entry, which is compiled before it turns the cache on (a few lines).
  const warmed = JSON.parse(runBundled('warm-compile-cache.mjs', []).stdout);
  // A start must read what was written: Node.js says so per module with NODE_DEBUG_NATIVE. Each mode
  // sets its own V8 flags first (v8-mode-flags.ts), which key the cache: each is checked.
  const reads = [['--help'], ['--mode=node', '--help']].map((args) => {
    const debug = runBundled('pmem-csi-driver.mjs', args, { NODE_DEBUG_NATIVE: 'COMPILE_CACHE' }).stderr;
    const hits = debug.split('\n').filter((l) => /^\[compile cache\] reading cache .* for ESM .*success/.test(l));
    if (hits.length < 2) {
      console.error(
        `bundle: ${args.join(' ')} read ${hits.length} module(s) from the compile cache, expected the entry and its chunks:\n${debug}`,
      );
      process.exit(1);
    }
    return `${hits.length} read by ${args.join(' ')}`;
  });
  cache = `; compile cache of ${warmed.modules} module(s) for ${warmed.modes.join(' and ')}, ${reads.join(', ')}`;
}
if (check) {
  const run = runBundled('pmem-csi-driver.mjs', ['--help']);
  rmSync(outdir, { recursive: true, force: true });
  if (!run.stdout.includes('usage: pmem-csi-driver')) {
    console.error(`bundle: the bundled driver did not answer --help:\n${run.stdout}${run.stderr}`);
    process.exit(1);
  }
}
console.log(
  `bundle: ${files.length} module(s), ${(bytes / 1024 / 1024).toFixed(1)} MiB in ${check ? '(temporary)' : outdir}${cache}`,
);
