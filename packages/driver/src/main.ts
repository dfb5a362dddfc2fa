#!/usr/bin/env node
// Entry point of pmem-csi-driver. It turns V8's compile cache on (compile-cache.ts) and only then
// loads the driver (run-cli.ts): the modules an ES module imports statically are compiled before
// its first line runs, so this file imports nothing but the cache's few lines and Node.js itself.
import { compileCacheDir, enableDriverCompileCache } from './compile-cache.js';

const compileCache = enableDriverCompileCache(compileCacheDir(import.meta.url, process.env));
const { runCli } = await import('./run-cli.js');
await runCli(process.argv, compileCache);
