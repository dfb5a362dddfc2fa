// Fills the bundle's compile cache (compile-cache.ts): loads every module of the bundle beside it
// (tools/bundle.mjs puts this file there as warm-compile-cache.mjs) with the cache on, so that the
// byte code of each is written to ./compile-cache, and exits. The entry (pmem-csi-driver.mjs) is
// left out: it would run the command line; it is one small file that `pmem-csi-driver --version`
// caches. Loading runs only the modules' top level (definitions; no server, file or process is
// touched). The image runs this where it runs the driver, as the user it runs it as: the cache's
// entries are keyed by the file paths, the Node.js binary and the user id.
//   node warm-compile-cache.mjs    prints {"compileCache": ..., "modules": N} and exits 0
import { readdirSync } from 'node:fs';
import { flushCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';
import { BUNDLE_CACHE_DIR, bundleModules, enableDriverCompileCache } from './compile-cache.js';

const here = new URL('./', import.meta.url);
const state = enableDriverCompileCache(fileURLToPath(new URL(`${BUNDLE_CACHE_DIR}/`, here)));
if (state.status !== 'enabled') {
  process.stderr.write(`warm-compile-cache: the compile cache is not on: ${JSON.stringify(state)}\n`);
  process.exit(1);
}
const modules = bundleModules(import.meta.url, readdirSync(here));
for (const name of modules) await import(new URL(name, here).href);
flushCompileCache();
process.stdout.write(`${JSON.stringify({ compileCache: state.dir, modules: modules.length })}\n`);
