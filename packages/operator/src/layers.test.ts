// Proves the layer rules of packages/operator/eslint.config.js as `nx lint operator` applies them
// (ESLint run from the package directory): kube/ imports no layer above it, objects/ and render/
// are pure builders (types of the Kubernetes client only, no I/O, the KubeApi port only), certs/,
// plan/ and status/ stay below the loop, the loop reaches Kubernetes through the port, binary/
// never imports the loop, and tests may wire anything. Probe files exist only in memory. And that no
// folders import each other, directly or through others (the real imports of src/).
import { lintProbe, packageDir } from '@pmem-csi/api/testing/lint';
import { folderCycles, folderImports } from '@pmem-csi/api/testing/folders';

const PROBE = '__layer_probe__';
const RULE = '@typescript-eslint/no-restricted-imports';
const probe = lintProbe(packageDir('operator'), PROBE);

/** The lint messages (rule: message) of a probe at src/<path> with the import statement `line`. */
const lint = (path: string, line: string): Promise<string[]> =>
  probe.lint(`src/${path}`, `${line}\nexport const used = probe;\n`);

/** The messages of `import { probe } from '<spec>'` in a probe file in src/<folder>. */
const lintImport = (folder: string, spec: string): Promise<string[]> =>
  probe.lintImport(`src/${folder}/${PROBE}.ts`, spec);

/** The one message a refused pattern gives: the import, then the layer's reason. */
function refusedBy(spec: string, reason: RegExp): RegExp {
  const quoted = spec.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`^${RULE}: '${quoted}' import is restricted from being used by a pattern\\. ${reason.source}`);
}

async function expectRefused(folder: string, spec: string, reason: RegExp): Promise<void> {
  const messages = await lintImport(folder, spec);
  expect(messages).toHaveLength(1);
  expect(messages[0]).toMatch(refusedBy(spec, reason));
}

describe('layer rules inside @pmem-csi/operator', () => {
  it.each([
    '../loop/queue.js',
    '../plan/object-plan.js',
    '../status/events.js',
    '../certs/certificates.js',
    '../objects/context.js',
    '../render/files.js',
    '../binary/flags.js',
    '../main.js',
  ])(
    'kube/ imports no layer above it: %s',
    async (spec) => {
      await expectRefused('kube', spec, /src\/kube never imports loop\/, plan\/, status\/, certs\/, objects\//);
    },
    60_000,
  );

  it('kube/ may use the shared clock and its own files', async () => {
    await expect(lintImport('kube', '../clock.js')).resolves.toEqual([]);
    await expect(lintImport('kube', './kube-port.js')).resolves.toEqual([]);
  }, 60_000);

  it.each(['objects', 'render'])(
    '%s/ are pure builders: Kubernetes client types only, no I/O, the KubeApi port only',
    async (folder) => {
      await expect(
        lint(`${folder}/${PROBE}.ts`, "import { KubeConfig as probe } from '@kubernetes/client-node';"),
      ).resolves.toEqual([
        `${RULE}: '@kubernetes/client-node' import is restricted from being used. src/${folder} uses the types ` +
          "of @kubernetes/client-node only (import type); the client is kube/'s.",
      ]);
      await expect(
        lint(`${folder}/${PROBE}.ts`, "import type { V1Secret as probe } from '@kubernetes/client-node';"),
      ).resolves.toEqual([]);
      for (const spec of ['node:fs', 'node:fs/promises', 'node:child_process', 'node:http', 'fs']) {
        await expectRefused(folder, spec, new RegExp(`src/${folder} builds objects and does no I/O`));
      }
      await expect(lintImport(folder, 'node:crypto')).resolves.toEqual([]);
      for (const spec of ['../kube/kube-api.js', '../kube/kube-client.js', '../kube/informer.js']) {
        await expectRefused(folder, spec, new RegExp(`src/${folder} reaches Kubernetes only through the KubeApi port`));
      }
      await expect(lintImport(folder, '../kube/kube-port.js')).resolves.toEqual([]);
      await expect(lintImport(folder, '../kube/resources.js')).resolves.toEqual([]);
      for (const spec of ['../loop/deployment-reconciler.js', '../status/deployment-status.js', '../main.js']) {
        await expectRefused(folder, spec, new RegExp(`src/${folder} never imports loop/, plan/`));
      }
    },
    60_000,
  );

  it('objects/ never imports render/; render/ builds on objects/ and takes only the flag defaults of binary/', async () => {
    await expectRefused('objects', '../render/files.js', /src\/objects never imports/);
    await expect(lintImport('render', '../objects/registry.js')).resolves.toEqual([]);
    await expect(lintImport('render', '../binary/flags.js')).resolves.toEqual([]);
    await expectRefused(
      'render',
      '../binary/http-server.js',
      /src\/render never imports .*\(except binary\/flags\.ts\)/,
    );
  }, 60_000);

  it.each([
    ['certs', '../kube/kube-api.js', /src\/certs reaches Kubernetes only through the KubeApi port/],
    ['certs', '../loop/queue.js', /src\/certs never imports loop\//],
    ['certs', '../plan/ownership.js', /src\/certs never imports loop\/, plan\//],
    ['plan', '../kube/informer.js', /src\/plan reaches Kubernetes only through the KubeApi port/],
    ['plan', '../status/deployment-status.js', /src\/plan never imports loop\/, status\//],
    ['status', '../kube/kube-client.js', /src\/status reaches Kubernetes only through the KubeApi port/],
    ['status', '../loop/deployment-reconciler.js', /src\/status never imports loop\//],
    [
      'loop',
      '../kube/kube-api.js',
      /src\/loop reaches Kubernetes only through the KubeApi port .*main\.ts picks the adapter/,
    ],
    ['loop', '../binary/flags.js', /src\/loop never imports render\/, binary\/, main\.ts/],
    ['loop', '../main.js', /src\/loop never imports render\/, binary\/, main\.ts/],
    ['binary', '../loop/control-loop.js', /src\/binary never imports loop\//],
  ])(
    '%s/ may not import %s',
    async (folder, spec, reason) => {
      await expectRefused(folder, spec, reason);
    },
    60_000,
  );

  it('allows what the layers use', async () => {
    await expect(lintImport('certs', '../objects/secrets.js')).resolves.toEqual([]);
    await expect(lintImport('status', '../plan/ownership.js')).resolves.toEqual([]);
    await expect(lintImport('status', '../kube/kube-port.js')).resolves.toEqual([]);
    await expect(lintImport('loop', '../kube/informer.js')).resolves.toEqual([]);
    await expect(lintImport('loop', '../status/events.js')).resolves.toEqual([]);
    await expect(lintImport('binary', '../kube/api-health.js')).resolves.toEqual([]);
  }, 60_000);

  it('leaves tests and test kits free to wire any parts', async () => {
    await expect(lint(`loop/${PROBE}.test.ts`, "import { probe } from '../kube/kube-api.js';")).resolves.toEqual([]);
    await expect(lint(`objects/${PROBE}.test.ts`, "import { probe } from 'node:fs';")).resolves.toEqual([]);
    await expect(
      lint(`testing/${PROBE}.ts`, "import { probe } from '../loop/deployment-reconciler.js';"),
    ).resolves.toEqual([]);
  }, 60_000);

  it('has no import cycle between its folders (every import of every file in src/, tests aside)', () => {
    expect(folderCycles(folderImports(`${packageDir('operator')}src`))).toEqual([]);
  });
});
