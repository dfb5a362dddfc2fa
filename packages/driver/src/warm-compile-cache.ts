// Fills the bundle's compile cache (compile-cache.ts): loads every module of the bundle beside it
// (tools/bundle.mjs puts this file there as warm-compile-cache.mjs) with the cache on, so that the
// byte code of each is written to ./compile-cache, and exits. The entry (pmem-csi-driver.mjs) is
// left out: it would run the command line; it is one small file that `pmem-csi-driver --version`
// caches. Loading runs only the modules' top level (definitions; no server, file or process is
// touched). The image runs this where it runs the driver, as the user it runs it as: the cache's
// entries are keyed by the file paths, the Node.js binary and the user id — and by V8's flags, which
// differ per mode (v8-mode-flags.ts), so each mode's cache is filled by a process of its own that
// sets that mode's flags first, as the entry does.
//   node warm-compile-cache.mjs               one process per mode; prints {"compileCache": ..., "modules": N, "modes": [...]}
//   node warm-compile-cache.mjs --mode=node   that mode's cache only
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { DriverMode } from '@pmem-csi/csi';
import { BUNDLE_CACHE_DIR, bundleModules, enableDriverCompileCache } from './compile-cache.js';
import { applyModeV8Flags, DRIVER_V8_RUNTIME_FLAGS, modeOf } from './v8-mode-flags.js';

interface Warmed {
  readonly compileCache: string;
  readonly modules: number;
  readonly modes: readonly DriverMode[];
}

function fail(why: string): never {
  process.stderr.write(`warm-compile-cache: ${why}\n`);
  process.exit(1);
}

async function warmOne(mode: DriverMode): Promise<Warmed> {
  applyModeV8Flags([`--mode=${mode}`]);
  const here = new URL('./', import.meta.url);
  const state = enableDriverCompileCache(fileURLToPath(new URL(`${BUNDLE_CACHE_DIR}/`, here)));
  if (state.status !== 'enabled') fail(`the compile cache is not on: ${JSON.stringify(state)}`);
  const modules = bundleModules(import.meta.url, readdirSync(here));
  for (const name of modules) await import(new URL(name, here).href);
  flushCompileCache();
  return { compileCache: state.dir, modules: modules.length, modes: [mode] };
}

function warmEach(): Warmed {
  const runs = (Object.keys(DRIVER_V8_RUNTIME_FLAGS) as DriverMode[]).map((mode) => {
    const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), `--mode=${mode}`], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      timeout: 120_000,
    });
    if (run.status !== 0) fail(`--mode=${mode} failed (exit ${String(run.status ?? run.signal)}): ${run.stdout}`);
    return JSON.parse(run.stdout) as Warmed;
  });
  const first = runs[0] ?? fail('no driver mode to warm');
  return { compileCache: first.compileCache, modules: first.modules, modes: runs.flatMap((r) => r.modes) };
}

const mode = modeOf(process.argv.slice(2));
const warmed = mode === undefined ? warmEach() : await warmOne(mode);
process.stdout.write(`${JSON.stringify(warmed)}\n`);
