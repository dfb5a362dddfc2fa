// Proves that the package boundaries of CONTRIBUTING.md are enforced by lint, not by habit: ESLint
// with the workspace config reports @nx/enforce-module-boundaries errors for forbidden imports
// and none for an allowed one. The probe files exist only in memory (lintText).
import { ensureProjectGraph, lintProbe, WORKSPACE_ROOT } from './testing/lint-probe.js';

const RULE = '@nx/enforce-module-boundaries';
const PROBE = '__boundary_probe__.ts';
const probe = lintProbe(WORKSPACE_ROOT, PROBE);

/** The boundary rule's messages (first lines) for a probe in packages/<pkg>/src; any other rule's is a failure. */
async function boundaryMessages(pkg: string, code: string): Promise<string[]> {
  const messages = await probe.lint(`packages/${pkg}/src/${PROBE}`, code);
  const other = messages.filter((m) => !m.startsWith(`${RULE}: `));
  if (other.length > 0) throw new Error(`unexpected lint messages: ${JSON.stringify(other)}`);
  return messages.map((m) => m.slice(RULE.length + 2));
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
    expect(messages[0]).toBe('Circular dependency between "api" and "node" detected: api -> node -> api');
  }, 60_000);

  it('forbids the api package to import the Kubernetes client', async () => {
    await expect(
      boundaryMessages('api', "import * as k8s from '@kubernetes/client-node';\nexport const probe = k8s;\n"),
    ).resolves.toEqual(['A project tagged with "scope:api" is not allowed to import "@kubernetes/client-node"']);
  }, 60_000);

  it('forbids the runtime to import the api (it is transport; it speaks csi only)', async () => {
    await expect(
      boundaryMessages(
        'runtime',
        "import { withDefaults } from '@pmem-csi/api';\nexport const probe = withDefaults;\n",
      ),
    ).resolves.toEqual(['A project tagged with "scope:shared" can only depend on libs tagged with "scope:csi"']);
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
