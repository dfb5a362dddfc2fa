// Proves that the package boundaries of CONTRIBUTING.md are enforced by lint, not by habit: ESLint
// with the workspace config reports @nx/enforce-module-boundaries errors for forbidden imports
// and none for an allowed one. The probe files exist only in memory (lintText).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readCachedProjectGraph } from '@nx/devkit';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RULE = '@nx/enforce-module-boundaries';
const PROBE = '__boundary_probe__.ts';

// The rule silently skips itself when Nx has no cached project graph, which would make every
// case below pass vacuously for the control and fail confusingly for the others: build it first.
function ensureProjectGraph(): void {
  try {
    readCachedProjectGraph();
    return;
  } catch {
    const res = spawnSync('npx', ['nx', 'show', 'projects'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, NX_DAEMON: 'false' },
    });
    if (res.status !== 0) throw new Error(`could not create the Nx project graph: ${res.stderr}`);
  }
  readCachedProjectGraph();
}

async function boundaryMessages(pkg: string, code: string): Promise<string[]> {
  // The probe file is not in any tsconfig, so type-aware parsing is switched off for it alone; the
  // boundary rule needs no type information.
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfig: [{ ...tseslint.configs.disableTypeChecked, files: [`**/${PROBE}`] }],
  });
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}packages/${pkg}/src/${PROBE}` });
  const messages = result?.messages ?? [];
  const other = messages.filter((m) => m.ruleId !== RULE);
  if (other.length > 0) throw new Error(`unexpected lint messages: ${JSON.stringify(other)}`);
  return messages.map((m) => m.message);
}

describe('package boundaries (@nx/enforce-module-boundaries)', () => {
  beforeAll(ensureProjectGraph, 60_000);

  it('forbids the node package to import the operator', async () => {
    await expect(
      boundaryMessages(
        'node',
        "import { loadKubeConfig } from '@pmem-csi/operator';\nexport const probe = loadKubeConfig;\n",
      ),
    ).resolves.toEqual([
      'A project tagged with "scope:node" can only depend on libs tagged with "scope:api", "scope:csi", "scope:shared"',
    ]);
  }, 60_000);

  it('forbids the controller package to import the Kubernetes client', async () => {
    await expect(
      boundaryMessages('controller', "import * as k8s from '@kubernetes/client-node';\nexport const probe = k8s;\n"),
    ).resolves.toEqual(['A project tagged with "scope:controller" is not allowed to import "@kubernetes/client-node"']);
  }, 60_000);

  it('forbids the api package to import the node package', async () => {
    // node depends on api, so Nx reports the cycle (before the tag rule, which forbids it too).
    const messages = await boundaryMessages(
      'api',
      "import * as node from '@pmem-csi/node';\nexport const probe = node;\n",
    );
    expect(messages).toHaveLength(1);
    expect(messages[0]?.split('\n')[0]).toBe(
      'Circular dependency between "api" and "node" detected: api -> node -> api',
    );
  }, 60_000);

  it('forbids the api package to import the Kubernetes client', async () => {
    await expect(
      boundaryMessages('api', "import * as k8s from '@kubernetes/client-node';\nexport const probe = k8s;\n"),
    ).resolves.toEqual(['A project tagged with "scope:api" is not allowed to import "@kubernetes/client-node"']);
  }, 60_000);

  it('allows the node package to import the api (control)', async () => {
    await expect(
      boundaryMessages(
        'node',
        "import { volumeIdForName } from '@pmem-csi/api';\nexport const probe = volumeIdForName;\n",
      ),
    ).resolves.toEqual([]);
  }, 60_000);
});
