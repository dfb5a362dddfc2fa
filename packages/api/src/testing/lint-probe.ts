// The one harness of the boundary and layer tests (packages/*/src/{boundaries,layers}.test.ts): lint an
// in-memory probe file with the workspace's ESLint configs, as `nx lint` would, and return what ESLint
// reports. Exported as "@pmem-csi/api/testing/lint", apart from the other kits of "@pmem-csi/api/testing",
// so that only these tests load ESLint. In the api because every package may import the api.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readCachedProjectGraph } from '@nx/devkit';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

/** The workspace root (the directory of nx.json and eslint.config.js), with a trailing slash. */
export const WORKSPACE_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** The directory of packages/<name>, with a trailing slash. */
export const packageDir = (name: string): string => `${WORKSPACE_ROOT}packages/${name}/`;

/** What @typescript-eslint/no-restricted-imports says when a pattern of a layer rule refuses `spec`. */
export const refusedByPattern = (spec: string, why: string): string =>
  `@typescript-eslint/no-restricted-imports: '${spec}' import is restricted from being used by a pattern. ${why}`;

/** A probe module that imports `probe` from `spec` and uses it (an unused import would be reported too). */
export const importing = (spec: string): string => `import { probe } from '${spec}';\nexport const used = probe;\n`;

/**
 * @nx/enforce-module-boundaries silently skips itself when Nx has no cached project graph, which
 * would let every refusal case fail confusingly and every control pass vacuously: build it first.
 */
export function ensureProjectGraph(): void {
  try {
    readCachedProjectGraph();
    return;
  } catch {
    const res = spawnSync('npx', ['nx', 'show', 'projects'], {
      cwd: WORKSPACE_ROOT,
      encoding: 'utf8',
      env: { ...process.env, NX_DAEMON: 'false' },
    });
    if (res.status !== 0) throw new Error(`could not create the Nx project graph: ${res.stderr}`);
  }
  readCachedProjectGraph();
}

export interface LintProbe {
  /** The messages ("rule: first line of the message") of a file at `path` (below cwd) holding `code`. */
  lint(path: string, code: string): Promise<string[]>;
  /** The messages of a file at `path` (below cwd) that imports `spec` (see `importing`). */
  lintImport(path: string, spec: string): Promise<string[]>;
}

/**
 * ESLint run from `cwd` as `nx lint <package>` runs it from the package's directory (ESLint matches a
 * config's `files` patterns against the directory of the config it finds: a rule that only applies
 * from another directory would prove nothing). Probe files are named `<probe>...` and exist only in
 * memory; they are in no tsconfig, so the type-aware rules are switched off for them alone (the
 * import rules need no type information).
 */
export function lintProbe(cwd: string, probe: string): LintProbe {
  if (!cwd.endsWith('/')) throw new Error(`lintProbe: cwd ${cwd} must end with a slash`);
  const eslint = new ESLint({
    cwd,
    overrideConfig: [{ ...tseslint.configs.disableTypeChecked, files: [`**/${probe}*`] }],
  });
  const lint = async (path: string, code: string): Promise<string[]> => {
    if (!(path.split('/').at(-1) ?? '').startsWith(probe)) {
      throw new Error(`probe path ${path}: the file name must start with ${probe}`);
    }
    const [result] = await eslint.lintText(code, { filePath: `${cwd}${path}` });
    return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message.split('\n')[0]}`);
  };
  return { lint, lintImport: (path, spec) => lint(path, importing(spec)) };
}
