// V8's compile cache for the driver's own modules (Node.js `module.enableCompileCache`): a start
// that finds the byte code of the bundle's modules on disk skips parsing and compiling them
// (~1.3 MB of JavaScript, most of it grpc-js and protobufjs). The image fills the cache when it is
// built (deploy/images/driver.Dockerfile runs warm-compile-cache.mjs at the paths the image runs),
// so a pod reads it and never writes. Kept apart from everything the driver imports: only modules
// compiled after the cache is enabled are cached, so main.ts enables it before it loads the rest.
// The cache is an optimisation and nothing more: a directory that is missing, cannot be created,
// is read-only or holds entries of another Node.js makes Node.js compile as usual (entries are
// keyed by the Node.js version, V8's flags, the user id and each file's path and contents).
import { existsSync } from 'node:fs';
import { constants, enableCompileCache } from 'node:module';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The environment variable that names the cache directory (empty: no cache); see compileCacheDir. */
export const COMPILE_CACHE_ENV = 'PMEM_CSI_COMPILE_CACHE';

/** The directory beside the bundle's entry that tools/bundle.mjs and the image fill. */
export const BUNDLE_CACHE_DIR = 'compile-cache';

/** The bundle's entry (tools/bundle.mjs names it). */
export const BUNDLE_ENTRY = 'pmem-csi-driver.mjs';

/**
 * The modules warm-compile-cache.ts loads: the bundle's files in `names` but the entry (which
 * would run the command line) and `self` (the warming module's URL).
 */
export function bundleModules(self: string, names: readonly string[]): string[] {
  const own = basename(fileURLToPath(self));
  return names.filter((n) => n.endsWith('.mjs') && n !== own && n !== BUNDLE_ENTRY).sort();
}

/** What enabling did; `dir` is the directory Node.js reads and writes. */
export type CompileCacheState =
  | { readonly status: 'enabled' | 'already-enabled'; readonly dir: string }
  | { readonly status: 'off' | 'disabled' | 'failed'; readonly reason: string };

/**
 * The cache directory of the driver started from `entry` (its main module's URL):
 * $PMEM_CSI_COMPILE_CACHE when set ('' turns the cache off), else the `compile-cache` directory
 * beside the entry when there is one (the bundle's, made by tools/bundle.mjs and the image), else
 * none: the driver then runs with Node.js's own default (off, unless NODE_COMPILE_CACHE is set).
 */
export function compileCacheDir(
  entry: string,
  env: Readonly<Record<string, string | undefined>>,
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  const configured = env[COMPILE_CACHE_ENV];
  if (configured !== undefined) return configured === '' ? undefined : configured;
  const beside = fileURLToPath(new URL(`${BUNDLE_CACHE_DIR}/`, entry));
  return exists(beside) ? beside : undefined;
}

const STATUS_NAMES: Readonly<Record<number, 'enabled' | 'already-enabled' | 'disabled' | 'failed'>> = {
  [constants.compileCacheStatus.ENABLED]: 'enabled',
  [constants.compileCacheStatus.ALREADY_ENABLED]: 'already-enabled',
  [constants.compileCacheStatus.DISABLED]: 'disabled',
  [constants.compileCacheStatus.FAILED]: 'failed',
};

/**
 * Enable the compile cache in `dir` for every module loaded from now on. Never throws: a cache
 * that cannot be used is reported, and the process compiles without it.
 */
export function enableDriverCompileCache(dir: string | undefined): CompileCacheState {
  if (dir === undefined) return { status: 'off', reason: `no cache directory (${COMPILE_CACHE_ENV} to set one)` };
  let result: ReturnType<typeof enableCompileCache>;
  try {
    result = enableCompileCache(dir);
  } catch (e) {
    return { status: 'failed', reason: e instanceof Error ? e.message : String(e) };
  }
  const status = STATUS_NAMES[result.status] ?? 'failed';
  if ((status === 'enabled' || status === 'already-enabled') && result.directory !== undefined)
    return { status, dir: result.directory };
  if (status === 'disabled') return { status, reason: result.message ?? 'NODE_DISABLE_COMPILE_CACHE is set' };
  return { status: 'failed', reason: result.message ?? `Node.js could not use ${dir}` };
}
