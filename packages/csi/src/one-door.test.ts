// One door to the CSI vocabulary (issue 29): every name @pmem-csi/csi exports — the message types
// (`csi`, `registry`), wire shapes, domain errors, byte units — is imported from @pmem-csi/csi, never
// from @pmem-csi/runtime (transport), in every package, bench, e2e file and tool; and the runtime
// passes none of them on (a re-export would open the second door again).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'out-tsc', 'generated', 'coverage', '.nx', '.git']);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : sourceFiles(path);
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every file of ours that may import a workspace package: packages, e2e, tools. */
function workspaceFiles(): string[] {
  const packages = readdirSync(join(ROOT, 'packages')).map((p) => `packages/${p}`);
  return [...packages, 'e2e', 'tools'].flatMap(sourceFiles);
}

/** The names exported by a package's src/index.ts, as the type checker sees them (values and types). */
function exportedNames(program: ts.Program, pkg: string): Set<string> {
  const file = program.getSourceFile(join(ROOT, `packages/${pkg}/src/index.ts`));
  if (file === undefined) throw new Error(`packages/${pkg}/src/index.ts is not in the program`);
  const checker = program.getTypeChecker();
  const symbol = checker.getSymbolAtLocation(file);
  if (symbol === undefined) throw new Error(`packages/${pkg}/src/index.ts has no module symbol`);
  return new Set(checker.getExportsOfModule(symbol).map((s) => s.name));
}

/** `file: name` for every name `file` imports or re-exports from @pmem-csi/runtime that is in `vocabulary`. */
function runtimeImportsOf(file: string, vocabulary: ReadonlySet<string>): string[] {
  let text: string;
  try {
    text = readFileSync(join(ROOT, file), 'utf8');
  } catch (err) {
    // Listed, then deleted before it was read (a generator or an editor at work): not a file any more.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))) continue;
    const from = statement.moduleSpecifier;
    if (from === undefined || !ts.isStringLiteral(from) || from.text !== '@pmem-csi/runtime') continue;
    const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : statement.exportClause;
    if (bindings === undefined || !(ts.isNamedImports(bindings) || ts.isNamedExports(bindings))) continue;
    for (const element of bindings.elements) {
      const name = (element.propertyName ?? element.name).text;
      if (vocabulary.has(name)) found.push(`${file}: ${name}`);
    }
  }
  return found;
}

describe('one door to the CSI vocabulary', () => {
  let vocabulary: Set<string>;
  let runtimeExports: Set<string>;
  let found: string[];

  beforeAll(() => {
    const program = ts.createProgram(
      ['csi', 'runtime'].map((p) => join(ROOT, `packages/${p}/src/index.ts`)),
      {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        customConditions: ['@pmem-csi/source'],
        types: ['node'],
        skipLibCheck: true,
        noEmit: true,
      },
    );
    vocabulary = exportedNames(program, 'csi');
    runtimeExports = exportedNames(program, 'runtime');
    found = workspaceFiles().flatMap((f) => runtimeImportsOf(f, vocabulary));
  }, 120_000);

  it('reads the vocabulary from the csi package (control)', () => {
    for (const name of ['csi', 'registry', 'InvalidArgumentError', 'errorMessage', 'MiB', 'CreateVolumeInput'])
      expect(vocabulary).toContain(name);
    expect(runtimeExports).toContain('createLogger');
  });

  it('no file imports csi vocabulary from @pmem-csi/runtime', () => {
    expect(found).toEqual([]);
  });

  it('the runtime passes none of the csi names on', () => {
    expect([...runtimeExports].filter((name) => vocabulary.has(name)).sort()).toEqual([]);
  });
});
