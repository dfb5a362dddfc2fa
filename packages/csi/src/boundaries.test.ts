// Proves that @pmem-csi/csi stays pure (CONTRIBUTING.md): lint refuses Node built-ins that do I/O,
// gRPC and the Kubernetes client in its sources, and any package of ours but the api; it allows the
// api, and every package above lets the csi package in. Probe files exist only in memory (lintText).
import { ensureProjectGraph, lintProbe as probeFrom, packageDir } from '@pmem-csi/api/testing/lint';

const PROBE = '__csi_boundary_probe__.ts';

/**
 * The lint messages (rule: first line) for a probe file with `code` in package `pkg`, linted from the
 * package's directory as `nx lint <pkg>` does (a rule that only applies from the root would prove nothing).
 */
const lintProbe = (pkg: string, code: string): Promise<string[]> =>
  probeFrom(packageDir(pkg), PROBE).lint(`src/${PROBE}`, code);

const PURE = '@pmem-csi/csi is pure (no I/O): keep Node built-ins in the packages that do I/O.';

describe('@pmem-csi/csi boundaries', () => {
  beforeAll(ensureProjectGraph, 60_000);

  it.each([
    ["import { readFileSync } from 'node:fs';\nexport const probe = readFileSync;\n", 'node:fs'],
    ["import { spawn } from 'child_process';\nexport const probe = spawn;\n", 'child_process'],
    ["import * as net from 'node:net';\nexport const probe = net;\n", 'node:net'],
  ])(
    'refuses Node built-ins with I/O (%#: %s)',
    async (code, mod) => {
      await expect(lintProbe('csi', code)).resolves.toEqual([
        `no-restricted-imports: '${mod}' import is restricted from being used by a pattern. ${PURE}`,
      ]);
    },
    60_000,
  );

  it('refuses gRPC and the Kubernetes client', async () => {
    await expect(
      lintProbe('csi', "import * as grpc from '@grpc/grpc-js';\nexport const probe = grpc;\n"),
    ).resolves.toEqual([
      '@nx/enforce-module-boundaries: A project tagged with "scope:csi" is not allowed to import "@grpc/grpc-js"',
    ]);
    await expect(
      lintProbe('csi', "import * as k8s from '@kubernetes/client-node';\nexport const probe = k8s;\n"),
    ).resolves.toEqual([
      '@nx/enforce-module-boundaries: A project tagged with "scope:csi" is not allowed to import "@kubernetes/client-node"',
    ]);
  }, 60_000);

  it('refuses the runtime (which depends on it)', async () => {
    const messages = await lintProbe(
      'csi',
      "import { createLogger } from '@pmem-csi/runtime';\nexport const probe = createLogger;\n",
    );
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(
      /^@nx\/enforce-module-boundaries: (Circular dependency between "csi" and "runtime"|A project tagged with "scope:csi" can only depend on libs tagged with "scope:api")/,
    );
  }, 60_000);

  it('allows the api, and lets controller, node and operator import it (controls)', async () => {
    await expect(
      lintProbe('csi', "import { volumeIdForName } from '@pmem-csi/api';\nexport const probe = volumeIdForName;\n"),
    ).resolves.toEqual([]);
    for (const pkg of ['controller', 'node', 'operator', 'driver', 'runtime']) {
      await expect(
        lintProbe(pkg, "import { formatBytes } from '@pmem-csi/csi';\nexport const probe = formatBytes;\n"),
      ).resolves.toEqual([]);
    }
  }, 120_000);
});
