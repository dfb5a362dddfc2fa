// Proves the layer rules of packages/controller/eslint.config.js as `nx lint controller` applies them
// (ESLint run from the package directory): every folder reaches nodes only through the NodePort, never
// an adapter; nodes/ imports no other folder; registry/ is below volumes/; nothing below the two RPC
// entry points (csi/, registration/) imports them, nor one the other; no folder imports the
// composition root; tests may assemble anything. Probe files exist only in memory (lintText).
// And that no folders import each other, directly or through others (the real imports of src/).
import { lintProbe, packageDir, refusedByPattern as refused } from '@pmem-csi/api/testing/lint';
import { folderCycles, folderImports } from '@pmem-csi/api/testing/folders';

const PROBE = '__layer_probe__';
const { lintImport } = lintProbe(packageDir('controller'), PROBE);

const PORT_ONLY = (layer: string): string =>
  `${layer} reaches nodes only through the NodePort (nodes/node-port.ts, nodes/node-errors.ts), never an ` +
  'adapter (grpc, in-process): controller.ts chooses it.';
const NEVER = (layer: string, folders: string): string =>
  `${layer} never imports ${folders} (layers: packages/controller/eslint.config.js).`;

describe('layer rules inside @pmem-csi/controller', () => {
  it.each([
    ['csi', 'grpc-node-port'],
    ['csi', 'in-process-node-port'],
    ['placement', 'unary-node-port'],
    ['registry', 'grpc-node-port'],
    ['volumes', 'in-process-node-port'],
    ['registration', 'grpc-node-port'],
  ])(
    '%s/ may not import the node adapter %s',
    async (folder, adapter) => {
      const spec = `../nodes/${adapter}.js`;
      await expect(lintImport(`src/${folder}/${PROBE}.ts`, spec)).resolves.toEqual([
        refused(spec, PORT_ONLY(`src/${folder}`)),
      ]);
    },
    60_000,
  );

  it.each([
    [
      'nodes',
      '../registry/node-registry.js',
      NEVER('src/nodes', 'csi/, registration/, placement/, registry/, volumes/, controller.ts, index.ts'),
    ],
    [
      'nodes',
      '../controller.js',
      NEVER('src/nodes', 'csi/, registration/, placement/, registry/, volumes/, controller.ts, index.ts'),
    ],
    [
      'nodes',
      '../registration/registration-service.js',
      NEVER('src/nodes', 'csi/, registration/, placement/, registry/, volumes/, controller.ts, index.ts'),
    ],
    [
      'registry',
      '../csi/create-volume.js',
      NEVER('src/registry', 'csi/, registration/, placement/, volumes/, controller.ts, index.ts'),
    ],
    [
      'registry',
      '../volumes/volume-reconciler.js',
      NEVER('src/registry', 'csi/, registration/, placement/, volumes/, controller.ts, index.ts'),
    ],
    [
      'registry',
      '../registration/registration-service.js',
      NEVER('src/registry', 'csi/, registration/, placement/, volumes/, controller.ts, index.ts'),
    ],
    [
      'volumes',
      '../placement/placement.js',
      NEVER('src/volumes', 'csi/, registration/, placement/, controller.ts, index.ts'),
    ],
    [
      'volumes',
      '../registration/registration-service.js',
      NEVER('src/volumes', 'csi/, registration/, placement/, controller.ts, index.ts'),
    ],
    [
      'placement',
      '../volumes/volume-index.js',
      NEVER('src/placement', 'csi/, registration/, volumes/, controller.ts, index.ts'),
    ],
    [
      'placement',
      '../registration/registration-service.js',
      NEVER('src/placement', 'csi/, registration/, volumes/, controller.ts, index.ts'),
    ],
    [
      'registration',
      '../csi/controller-server.js',
      NEVER('src/registration', 'csi/, placement/, controller.ts, index.ts'),
    ],
    [
      'registration',
      '../placement/placement.js',
      NEVER('src/registration', 'csi/, placement/, controller.ts, index.ts'),
    ],
    ['registration', '../controller.js', NEVER('src/registration', 'csi/, placement/, controller.ts, index.ts')],
    ['csi', '../registration/registration-service.js', NEVER('src/csi', 'registration/, controller.ts, index.ts')],
    ['csi', '../index.js', NEVER('src/csi', 'registration/, controller.ts, index.ts')],
  ])(
    '%s/ may not import %s',
    async (folder, spec, why) => {
      await expect(lintImport(`src/${folder}/${PROBE}.ts`, spec)).resolves.toEqual([refused(spec, why)]);
    },
    60_000,
  );

  it('allows what the layers use: the port and its errors, the registry, the index, placement from csi/', async () => {
    await expect(lintImport(`src/registration/${PROBE}.ts`, '../registry/node-registry.js')).resolves.toEqual([]);
    await expect(lintImport(`src/registration/${PROBE}.ts`, '../volumes/volume-reconciler.js')).resolves.toEqual([]);
    await expect(lintImport(`src/registration/${PROBE}.ts`, '../nodes/node-errors.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi/${PROBE}.ts`, '../nodes/node-port.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi/sub/${PROBE}.ts`, '../../nodes/node-errors.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi/${PROBE}.ts`, '../placement/placement.js')).resolves.toEqual([]);
    await expect(lintImport(`src/volumes/${PROBE}.ts`, '../registry/node-registry.js')).resolves.toEqual([]);
    await expect(lintImport(`src/nodes/${PROBE}.ts`, './node-port.js')).resolves.toEqual([]);
  }, 60_000);

  it('leaves tests and test kits free to assemble a controller from any parts', async () => {
    await expect(lintImport(`src/csi/${PROBE}.test.ts`, '../nodes/in-process-node-port.js')).resolves.toEqual([]);
    await expect(lintImport(`src/testing/${PROBE}.ts`, '../nodes/grpc-node-port.js')).resolves.toEqual([]);
  }, 60_000);

  it('has no import cycle between its folders (every import of every file in src/, tests aside)', () => {
    expect(folderCycles(folderImports(`${packageDir('controller')}src`))).toEqual([]);
  });
});
