// The compile cache of pmem-csi-driver (compile-cache.ts): where the entry point looks for it, and
// that the real entry point (main.ts, as a child process) turns it on in the configured directory,
// reads it on the next start, and starts all the same when the directory cannot be created or is
// read-only. A read-only directory is made with chmod, or, as root (which chmod does not stop), a
// read-only bind mount in a private mount namespace; either way the child checks that it cannot
// write there before it runs the driver.
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DRIVER_VERSION } from '@pmem-csi/csi';
import { BUNDLE_CACHE_DIR, COMPILE_CACHE_ENV, bundleModules, compileCacheDir } from './compile-cache.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = join(ROOT, 'packages/driver/src/main.ts');
const work = mkdtempSync(join(tmpdir(), 'pmem-compile-cache-'));

afterAll(() => {
  chmodTree(work, 0o755, 0o644);
  rmSync(work, { recursive: true, force: true });
});

function chmodTree(path: string, dirMode: number, fileMode: number): void {
  if (!statSync(path).isDirectory()) return chmodSync(path, fileMode);
  chmodSync(path, dirMode);
  for (const name of readdirSync(path)) chmodTree(join(path, name), dirMode, fileMode);
}

interface Run {
  readonly status: number | null;
  readonly out: string;
  readonly err: string;
}

/** `pmem-csi-driver <args>` from the sources, as tools/start.sh runs it, with `env` added. */
function driver(args: readonly string[], env: Record<string, string>, wrap: readonly string[] = []): Run {
  const node = [process.execPath, '--conditions=@pmem-csi/source', '--import', 'tsx', MAIN, ...args];
  const [bin, ...rest] = [...wrap, ...node];
  // Node.js's own switches would decide before the entry point does.
  const { NODE_COMPILE_CACHE: _dir, NODE_DISABLE_COMPILE_CACHE: _off, ...inherited } = process.env;
  const r = spawnSync(bin ?? '', rest, { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...inherited, ...env } });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** A command prefix that makes `dir` read-only for the command, and fails (97) if it is still writable. */
function readOnly(dir: string): string[] {
  const check = 'if touch "$0/.probe" 2>/dev/null; then echo "$0 is writable" >&2; exit 97; fi; exec "$@"';
  if (process.getuid?.() !== 0) {
    chmodTree(dir, 0o555, 0o444);
    return ['sh', '-c', check, dir];
  }
  return ['unshare', '--mount', 'sh', '-c', `mount --bind -o ro "$0" "$0" && ${check}`, dir];
}

/** The files Node.js wrote into a cache directory (one subdirectory per Node.js, V8 and user). */
function entries(dir: string): string[] {
  return readdirSync(dir).flatMap((sub) => readdirSync(join(dir, sub)).map((f) => `${sub}/${f}`));
}

/** The modules whose cached byte code V8 accepted, from NODE_DEBUG_NATIVE=COMPILE_CACHE's lines. */
function accepted(err: string): string[] {
  return [...err.matchAll(/V8 code cache for ESM (\S+) was accepted/g)].map((m) => m[1] ?? '');
}

const VERSION = `pmem-csi-driver ${DRIVER_VERSION}\n`;

describe('compileCacheDir', () => {
  const entry = pathToFileURL('/app/pmem-csi-driver.mjs').href;
  const beside = `/app/${BUNDLE_CACHE_DIR}/`;

  it(`takes $${COMPILE_CACHE_ENV} first; set but empty, the cache is off`, () => {
    expect(compileCacheDir(entry, { [COMPILE_CACHE_ENV]: '/var/cache/x' }, () => true)).toBe('/var/cache/x');
    expect(compileCacheDir(entry, { [COMPILE_CACHE_ENV]: '' }, () => true)).toBeUndefined();
  });

  it('else the directory beside the entry when it exists (the bundle), else none', () => {
    const asked: string[] = [];
    expect(compileCacheDir(entry, {}, (p) => (asked.push(p), true))).toBe(beside);
    expect(asked).toEqual([beside]);
    expect(compileCacheDir(entry, {}, () => false)).toBeUndefined();
  });
});

describe('bundleModules', () => {
  it('is every module of the bundle but the entry and the warming module itself', () => {
    const self = pathToFileURL('/b/warm-compile-cache.mjs').href;
    const names = [
      'pmem-csi-driver.mjs',
      'warm-compile-cache.mjs',
      'chunk-B.mjs',
      'chunk-A.mjs',
      BUNDLE_CACHE_DIR,
      'x.map',
    ];
    expect(bundleModules(self, names)).toEqual(['chunk-A.mjs', 'chunk-B.mjs']);
  });
});

describe('the entry point (main.ts) with a compile cache', () => {
  const dir = join(work, 'cache');

  it('creates the configured directory, fills it, and reads it on the next start', () => {
    expect(driver(['--version'], { [COMPILE_CACHE_ENV]: dir })).toEqual({ status: 0, out: VERSION, err: '' });
    const written = entries(dir);
    expect(written.length).toBeGreaterThan(10);
    expect(written.every((e) => e.startsWith(`${process.version}-${process.arch}-`))).toBe(true);

    const again = driver(['--version'], { [COMPILE_CACHE_ENV]: dir, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
    expect([again.status, again.out]).toEqual([0, VERSION]);
    expect(accepted(again.err)).toEqual(
      expect.arrayContaining([pathToFileURL(join(ROOT, 'packages/driver/src/run-cli.ts')).href]),
    );
    expect(entries(dir)).toEqual(written);
  }, 120_000);

  it("sets the node mode's V8 flags before it turns the cache on: the node mode reads and writes a directory of its own", () => {
    const modes = join(work, 'modes');
    expect(driver(['--help'], { [COMPILE_CACHE_ENV]: modes }).status).toBe(0);
    const plain = readdirSync(modes);
    expect(plain).toHaveLength(1);
    expect(driver(['--mode=node', '--help'], { [COMPILE_CACHE_ENV]: modes }).status).toBe(0);
    const both = readdirSync(modes);
    expect(both).toHaveLength(2);
    const nodeDir = both.find((d) => !plain.includes(d)) ?? '';
    const again = driver(['--mode=node', '--help'], { [COMPILE_CACHE_ENV]: modes, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
    expect(again.status).toBe(0);
    expect(accepted(again.err).length).toBeGreaterThan(10);
    expect(again.err).toContain(join(modes, nodeDir));
    expect(readdirSync(modes)).toEqual(both);
  }, 120_000);

  it('starts all the same from a read-only cache: reads what is there, writes nothing, says nothing', () => {
    const ro = join(work, 'read-only');
    expect(driver(['--version'], { [COMPILE_CACHE_ENV]: ro }).status).toBe(0);
    const before = entries(ro);
    // --help loads the modules --version did, and its output differs: the command really ran.
    const run = driver(['--help'], { [COMPILE_CACHE_ENV]: ro, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' }, readOnly(ro));
    expect(run.status).toBe(0);
    expect(run.out).toContain('usage: pmem-csi-driver');
    expect(accepted(run.err).length).toBeGreaterThan(10);
    expect(run.err.split('\n').filter((l) => l !== '' && !l.startsWith('[compile cache]'))).toEqual([]);
    expect(entries(ro)).toEqual(before);
  }, 120_000);

  it('starts all the same when the read-only directory has no entries to read (every write fails)', () => {
    const empty = join(work, 'empty-read-only');
    expect(driver(['--version'], { [COMPILE_CACHE_ENV]: empty }).status).toBe(0);
    // Node.js's subdirectory stays (the cache is on), empty: every module is compiled and written.
    for (const sub of readdirSync(empty)) {
      rmSync(join(empty, sub), { recursive: true });
      mkdirSync(join(empty, sub));
    }
    const run = driver(['--version'], { [COMPILE_CACHE_ENV]: empty }, readOnly(empty));
    expect(run).toEqual({ status: 0, out: VERSION, err: '' });
    expect(entries(empty)).toEqual([]);
  }, 120_000);

  it('starts all the same when the directory cannot be created', () => {
    const file = join(work, 'a-file');
    writeFileSync(file, '');
    expect(driver(['--version'], { [COMPILE_CACHE_ENV]: join(file, 'cache') })).toEqual({
      status: 0,
      out: VERSION,
      err: '',
    });
  }, 60_000);

  it(`is off with $${COMPILE_CACHE_ENV} empty and no directory beside the entry`, () => {
    const run = driver(['--version'], { [COMPILE_CACHE_ENV]: '', NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
    expect([run.status, run.out, accepted(run.err)]).toEqual([0, VERSION, []]);
  }, 60_000);
});
