#!/usr/bin/env node
// Entry point of pmem-csi-driver. It sets the mode's own V8 flags (v8-mode-flags.ts), turns V8's
// compile cache on (compile-cache.ts; after the flags, which key the cache) and only then loads the
// driver (run-cli.ts): the modules an ES module imports statically are compiled before its first line
// runs, so this file imports nothing but those few lines and Node.js itself.
import { compileCacheDir, enableDriverCompileCache } from './compile-cache.js';
import { applyModeV8Flags } from './v8-mode-flags.js';

applyModeV8Flags(process.argv.slice(2));
const compileCache = enableDriverCompileCache(compileCacheDir(import.meta.url, process.env));
const { runCli } = await import('./run-cli.js');
await runCli(process.argv, compileCache);
