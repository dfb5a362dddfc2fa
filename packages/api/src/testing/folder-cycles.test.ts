// The folder-cycle check on probe packages written to a temporary directory: it reports a loop with
// the imports that make it, sees every kind of import, and leaves tests and package imports out.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { folderCycles, folderImports } from './folder-cycles.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'folder-cycles-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A new src/ directory holding `files` (path below src/ -> content); returns its path. */
function src(files: Record<string, string>): string {
  const dir = join(mkdtempSync(join(root, 'package-')), 'src');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const cyclesOf = (files: Record<string, string>): string[] => folderCycles(folderImports(src(files)));

describe('folder cycles', () => {
  it('reports the old registry/ <-> volumes/ loop of the controller with the imports that close it', () => {
    expect(
      cyclesOf({
        'registry/node-registry.ts': 'export class NodeRegistry {}\n',
        'registry/registration-service.ts': "import { VolumeReconciler } from '../volumes/volume-reconciler.js';\n",
        'volumes/volume-reconciler.ts': "import type { NodeRegistry } from '../registry/node-registry.js';\n",
        'csi/server.ts': "import '../registry/node-registry.js';\nimport '../volumes/volume-reconciler.js';\n",
        'controller.ts': "import './csi/server.js';\n",
      }),
    ).toEqual([
      "registry/ -> volumes/ -> registry/ (registry/registration-service.ts imports '../volumes/volume-reconciler.js'; " +
        "volumes/volume-reconciler.ts imports '../registry/node-registry.js')",
    ]);
  });

  it('finds none in layered folders, and none through tests, packages or paths outside src/', () => {
    expect(
      cyclesOf({
        'nodes/port.ts': "import { x } from '@pmem-csi/csi';\nimport 'node:fs';\n",
        'registry/registry.ts': "import type { Port } from '../nodes/port.js';\n",
        'registry/registry.test.ts': "import '../csi/server.js';\n",
        'csi/server.ts': "import '../registry/registry.js';\nimport '../../bench/x.js';\n",
        'testing/kit.ts': "import '../csi/server.js';\nimport '../controller.js';\n",
        'csi/server.test.ts': "import '../testing/kit.js';\n",
        'controller.ts': "import './csi/server.js';\n",
      }),
    ).toEqual([]);
  });

  it('sees type-only, dynamic and re-exporting imports, in nested files; not imports in comments or strings', () => {
    const files = {
      'a/deep/x.ts': "export type { T } from '../../b/t.js';\n",
      'b/t.ts': "export type T = number;\nconst later = () => import('../c/y.js');\n",
      'c/y.ts':
        "// import '../a/deep/x.js'\nconst s = \"import '../a/deep/x.js'\";\nimport type { U } from '../a/deep/x.js';\n",
    };
    const dir = src(files);
    expect(folderImports(dir).map((i) => `${i.from}->${i.to}`)).toEqual(['a->b', 'b->c', 'c->a']);
    expect(folderCycles(folderImports(dir))).toEqual([
      "a/ -> b/ -> c/ -> a/ (a/deep/x.ts imports '../../b/t.js'; b/t.ts imports '../c/y.js'; c/y.ts imports '../a/deep/x.js')",
    ]);
  });

  it('takes each file directly in src/ as a node: importing the composition root closes a loop, a shared module not', () => {
    expect(
      cyclesOf({
        'main.ts': "import { start } from './loop/run.js';\nimport './version.js';\n",
        'index.ts': "export * from './loop/run.js';\n",
        'version.ts': 'export const VERSION = 1;\n',
        'loop/run.ts': "import { FLAGS } from '../main.js';\nimport { VERSION } from '../version.js';\n",
      }),
    ).toEqual(["loop/ -> main.ts -> loop/ (loop/run.ts imports '../main.js'; main.ts imports './loop/run.js')"]);
    // Two top-level files that import each other are a loop of files, not of folders.
    expect(
      cyclesOf({ 'a.ts': "import './b.js';\n", 'b.ts': "import './a.js';\nimport './c/c.js';\n", 'c/c.ts': '' }),
    ).toEqual([]);
  });

  it('reports each group of folders that import each other once, by its shortest loop', () => {
    expect(
      cyclesOf({
        'a/a.ts': "import '../b/b.js';\nimport '../c/c.js';\n",
        'b/b.ts': "import '../a/a.js';\n",
        'c/c.ts': "import '../b/b.js';\n",
        'x/x.ts': "import '../y/y.js';\n",
        'y/y.ts': "import '../x/x.js';\n",
      }),
    ).toEqual([
      "a/ -> b/ -> a/ (a/a.ts imports '../b/b.js'; b/b.ts imports '../a/a.js')",
      "x/ -> y/ -> x/ (x/x.ts imports '../y/y.js'; y/y.ts imports '../x/x.js')",
    ]);
  });

  it('refuses a directory without TypeScript files (a wrong path would otherwise pass)', () => {
    expect(() => folderImports(join(root, 'none'))).toThrow(/ENOENT/);
    mkdirSync(join(root, 'empty'));
    expect(() => folderImports(join(root, 'empty'))).toThrow(
      `folderImports: no .ts files below ${join(root, 'empty')}`,
    );
  });
});
