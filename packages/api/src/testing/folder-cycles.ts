// The folder-cycle check of the layer tests (packages/*/src/layers.test.ts): the imports between the
// folders of a package's src/ form no cycle. The ESLint layer rules say what one folder may not import;
// two imports each allowed on its own can still close a loop (registry/ -> volumes/ -> registry/ was
// one), and a loop means neither folder can be read, tested or moved without the other. The graph is
// computed from the import specifiers of the real files (TypeScript's own scanner: static, type-only,
// dynamic imports and re-exports; comments and strings are not imports). A folder is a top-level
// directory of src/, with everything below it; each file directly in src/ is a node of its own (a
// composition root or index.ts that imports a folder the folder must not import back; a shared module
// such as version.ts may be imported by any folder); a loop of top-level files alone is a loop of
// files, not of folders, and not reported here. Test files (*.test.ts) are left out: nothing
// imports them, so they close no loop of files, and a folder's tests may use the test kits (testing/)
// that import the folder. Exported as "@pmem-csi/api/testing/folders", apart from the other kits,
// because it loads TypeScript.
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import ts from 'typescript';

/** One import that crosses folders: `file` (relative to src/) imports `spec`; `from`/`to` are folders or top-level files. */
export interface FolderImport {
  readonly from: string;
  readonly to: string;
  readonly file: string;
  readonly spec: string;
}

const isSource = (path: string): boolean =>
  path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('.d.ts');

/** The node of a path relative to src/ (POSIX separators): its folder, or the file itself as `name.ts`. */
function nodeOf(path: string): string {
  const slash = path.indexOf('/');
  return slash < 0 ? `${path.replace(/\.(?:ts|js)$/, '')}.ts` : path.slice(0, slash);
}

/**
 * Every import from one folder of `srcDir` into another, by file (sorted) and by order in the file.
 * Package imports (`@pmem-csi/...`, `node:...`) and relative imports that leave src/ are not folder
 * edges.
 */
export function folderImports(srcDir: string): FolderImport[] {
  const files = readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
    .map((p) => p.split('\\').join('/'))
    .filter(isSource)
    .sort();
  if (files.length === 0) throw new Error(`folderImports: no .ts files below ${srcDir}`);
  const imports: FolderImport[] = [];
  for (const file of files) {
    const text = readFileSync(posix.join(srcDir, file), 'utf8');
    for (const { fileName: spec } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!spec.startsWith('./') && !spec.startsWith('../')) continue;
      const target = posix.normalize(posix.join(posix.dirname(file), spec));
      if (target.startsWith('../')) continue;
      const [from, to] = [nodeOf(file), nodeOf(target)];
      if (from !== to) imports.push({ from, to, file, spec });
    }
  }
  return imports;
}

/** Strongly connected components with more than one folder (Tarjan), each sorted, in name order. */
function loops(edges: ReadonlyMap<string, ReadonlyMap<string, FolderImport>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1));
}

/** A shortest path of folders from `start` back to `start` inside `component` (breadth first). */
function shortestLoop(
  start: string,
  component: ReadonlySet<string>,
  edges: ReadonlyMap<string, ReadonlyMap<string, FolderImport>>,
): FolderImport[] {
  const via = new Map<string, FolderImport>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i] as string;
    for (const [w, imp] of edges.get(v) ?? []) {
      if (!component.has(w) || via.has(w)) continue;
      via.set(w, imp);
      if (w === start) {
        const path: FolderImport[] = [];
        for (let at = start; path.length === 0 || at !== start;) {
          const step = via.get(at) as FolderImport;
          path.unshift(step);
          at = step.from;
        }
        return path;
      }
      queue.push(w);
    }
  }
  throw new Error(`folderCycles: no loop through ${start}`); // a component of > 1 folder always has one
}

const shown = (node: string): string => (node.endsWith('.ts') ? node : `${node}/`);

/**
 * The folder cycles of `imports`, one line per group of folders (and top-level files) that import
 * each other: the shortest loop through the first folder of the group, with the import that makes
 * each step, e.g.
 * "registry/ -> volumes/ -> registry/ (registry/a.ts imports '../volumes/b.js'; volumes/b.ts imports '../registry/c.js')".
 * Empty when the folders form no cycle.
 */
export function folderCycles(imports: readonly FolderImport[]): string[] {
  const edges = new Map<string, Map<string, FolderImport>>();
  for (const imp of imports) {
    const out = edges.get(imp.from) ?? new Map<string, FolderImport>();
    if (!out.has(imp.to)) out.set(imp.to, imp); // the first import (files in name order) stands for the edge
    edges.set(imp.from, out);
  }
  const isFolder = (node: string): boolean => !node.endsWith('.ts');
  return loops(edges).flatMap((component) => {
    const start = component.find(isFolder);
    if (start === undefined) return [];
    const path = shortestLoop(start, new Set(component), edges);
    const folders = [...path.map((imp) => shown(imp.from)), shown(start)].join(' -> ');
    return `${folders} (${path.map((imp) => `${imp.file} imports '${imp.spec}'`).join('; ')})`;
  });
}
