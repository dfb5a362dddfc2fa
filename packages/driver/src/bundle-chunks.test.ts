// What a driver process loads, read from the bundle's module graph: tools/bundle.mjs splits the
// bundle at every dynamic import, so a module reached only through one is loaded only when that
// import runs. A node loads neither the controller nor the device managers of the modes it does not
// run (each mode's manager is imported by createDeviceManager when asked for), and the controller
// loads no node code: code loaded and never run costs memory on every node of the cluster. The
// entry itself loads nothing before it has turned the compile cache on (compile-cache.ts): every
// other module is compiled after that, so every other module can come from the cache.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { build, type Metafile } from 'esbuild';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEVICE = 'packages/node/src/device';
const MANAGERS = {
  lvm: [`${DEVICE}/lvm.ts`, `${DEVICE}/lvm-tools.ts`, `${DEVICE}/ndctl.ts`],
  direct: [`${DEVICE}/direct.ts`, `${DEVICE}/ndctl.ts`],
  emulated: [`${DEVICE}/emulated.ts`],
  fake: [`${DEVICE}/fake.ts`],
} as const;

type Outputs = Metafile['outputs'];

/** The output files loaded once `from` is imported: it and everything it imports statically. */
function staticClosure(outputs: Outputs, from: string): Set<string> {
  const seen = new Set<string>();
  const todo = [from];
  for (let file = todo.pop(); file !== undefined; file = todo.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const i of outputs[file]?.imports ?? []) if (i.kind === 'import-statement' && !i.external) todo.push(i.path);
  }
  return seen;
}

/** The output file that holds source module `input`. */
function chunkOf(outputs: Outputs, input: string): string {
  const found = Object.entries(outputs).find(([, o]) => input in o.inputs);
  if (found === undefined) throw new Error(`${input} is in no output of the bundle`);
  return found[0];
}

/** The source modules inside a set of output files. */
function inputsOf(outputs: Outputs, files: Iterable<string>): Set<string> {
  return new Set([...files].flatMap((f) => Object.keys(outputs[f]?.inputs ?? {})));
}

describe('the bundled driver loads per mode only what that mode runs', () => {
  let outputs: Outputs;
  let entry: string;

  beforeAll(async () => {
    // The options of tools/bundle.mjs that decide the split (no files are written).
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints: { 'pmem-csi-driver': 'packages/driver/src/main.ts' },
      outdir: 'bundle-chunks-test',
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      conditions: ['@pmem-csi/source'],
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    outputs = result.metafile.outputs;
    entry = chunkOf(outputs, 'packages/driver/src/main.ts');
  }, 60_000);

  /** What a process in a driver mode has loaded: the entry, the command line, modes.ts and the mode's package, each with its static imports. */
  function loaded(pkgIndex: string, ...more: string[]): Set<string> {
    const files = [
      entry,
      chunkOf(outputs, 'packages/driver/src/run-cli.ts'),
      chunkOf(outputs, 'packages/driver/src/modes.ts'),
      chunkOf(outputs, pkgIndex),
      ...more,
    ];
    return inputsOf(
      outputs,
      files.flatMap((f) => [...staticClosure(outputs, f)]),
    );
  }

  it.each(Object.keys(MANAGERS) as Array<keyof typeof MANAGERS>)(
    'a node in %s mode loads its device manager and no other, and no controller code',
    (mode) => {
      const node = loaded('packages/node/src/index.ts', chunkOf(outputs, MANAGERS[mode][0]));
      for (const file of MANAGERS[mode]) expect(node).toContain(file);
      const others = Object.values(MANAGERS)
        .flat()
        .filter((f) => !(MANAGERS[mode] as readonly string[]).includes(f));
      expect(others.filter((f) => node.has(f))).toEqual([]);
      expect([...node].filter((f) => f.startsWith('packages/controller/'))).toEqual([]);
      expect(node).toContain('packages/node/src/device/factory.ts');
    },
  );

  it('the controller loads no node code, and neither mode loads node-forge or the local stack', () => {
    const controller = loaded('packages/controller/src/index.ts');
    expect([...controller].filter((f) => f.startsWith('packages/node/'))).toEqual([]);
    const node = loaded('packages/node/src/index.ts');
    for (const mode of [controller, node]) {
      expect([...mode].filter((f) => f.includes('node_modules/node-forge/'))).toEqual([]);
      expect([...mode].filter((f) => f.startsWith('packages/driver/src/local/'))).toEqual([]);
    }
  });

  it('the entry loads only itself, v8-mode-flags.ts and compile-cache.ts before the compile cache is on; the command line is a dynamic import', () => {
    // Compiled before the cache is on, so never from it: keep it to a few KiB.
    const before = staticClosure(outputs, entry);
    expect([...inputsOf(outputs, before)].sort()).toEqual([
      'packages/driver/src/compile-cache.ts',
      'packages/driver/src/main.ts',
      'packages/driver/src/v8-mode-flags.ts',
    ]);
    expect([...before].reduce((n, f) => n + (outputs[f]?.bytes ?? 0), 0)).toBeLessThan(8 * 1024);
    const dynamic = (outputs[entry]?.imports ?? []).filter((i) => i.kind === 'dynamic-import').map((i) => i.path);
    expect(dynamic).toEqual([chunkOf(outputs, 'packages/driver/src/run-cli.ts')]);
  });
});
