// Proves the layer rules of packages/node/eslint.config.js as `nx lint node` applies them (ESLint
// run from the package directory): csi/ and state/ reach devices only through the DeviceManager
// port, device/ imports no other folder, registration/ and mount/ stay out of csi/, and tests may
// assemble anything. Probe files exist only in memory (lintText).
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const PKG = fileURLToPath(new URL('../', import.meta.url));
const PROBE = '__layer_probe__';
const RULE = '@typescript-eslint/no-restricted-imports';

let eslint: ESLint;

/** The lint messages (rule: message) of a probe at src/<path> that imports `spec`. */
async function lintImport(path: string, spec: string): Promise<string[]> {
  const code = `import { probe } from '${spec}';\nexport const used = probe;\n`;
  const [result] = await eslint.lintText(code, { filePath: `${PKG}src/${path}` });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

const refused = (spec: string, why: string): string =>
  `${RULE}: '${spec}' import is restricted from being used by a pattern. ${why}`;

const DEVICE_PORT_ONLY = (layer: string): string =>
  `${layer} uses devices only through the DeviceManager port (device/device-manager.ts), never an ` +
  'implementation (lvm, direct/ndctl, emulated, fake): node-driver.ts chooses it.';
const NEVER = (layer: string, folders: string): string =>
  `${layer} never imports ${folders} or node-driver.ts (layers: packages/node/eslint.config.js).`;

describe('layer rules inside @pmem-csi/node', () => {
  beforeAll(() => {
    eslint = new ESLint({
      cwd: PKG,
      overrideConfig: [{ ...tseslint.configs.disableTypeChecked, files: [`**/${PROBE}*.ts`] }],
    });
  });

  it.each(['lvm', 'lvm-tools', 'direct', 'ndctl', 'emulated', 'emulated-losetup', 'fake', 'factory'])(
    'csi/ may not import the device implementation %s',
    async (impl) => {
      const spec = `../device/${impl}.js`;
      await expect(lintImport(`csi/${PROBE}.ts`, spec)).resolves.toEqual([refused(spec, DEVICE_PORT_ONLY('src/csi'))]);
    },
    60_000,
  );

  it('csi/ may import the DeviceManager port, from any depth', async () => {
    await expect(lintImport(`csi/${PROBE}.ts`, '../device/device-manager.js')).resolves.toEqual([]);
    await expect(lintImport(`csi/sub/${PROBE}.ts`, '../../device/device-manager.js')).resolves.toEqual([]);
    await expect(lintImport(`csi/sub/${PROBE}.ts`, '../../device/lvm.js')).resolves.toEqual([
      refused('../../device/lvm.js', DEVICE_PORT_ONLY('src/csi')),
    ]);
  }, 60_000);

  it('state/ knows devices only through the port too', async () => {
    await expect(lintImport(`state/${PROBE}.ts`, '../device/device-manager.js')).resolves.toEqual([]);
    await expect(lintImport(`state/${PROBE}.ts`, '../device/fake.js')).resolves.toEqual([
      refused('../device/fake.js', DEVICE_PORT_ONLY('src/state')),
    ]);
  }, 60_000);

  it.each([
    ['device', '../csi/volumes.js', NEVER('src/device', 'csi/, mount/, state/, registration/')],
    ['device', '../mount/mount.js', NEVER('src/device', 'csi/, mount/, state/, registration/')],
    ['device', '../node-driver.js', NEVER('src/device', 'csi/, mount/, state/, registration/')],
    ['mount', '../csi/volumes.js', NEVER('src/mount', 'csi/, state/, registration/')],
    ['state', '../csi/volumes.js', NEVER('src/state', 'csi/, mount/, registration/')],
    ['registration', '../device/device-manager.js', NEVER('src/registration', 'csi/, device/, mount/, state/')],
    ['csi', '../registration/registrar.js', NEVER('src/csi', 'registration/')],
  ])(
    '%s/ may not import %s',
    async (folder, spec, why) => {
      await expect(lintImport(`${folder}/${PROBE}.ts`, spec)).resolves.toEqual([refused(spec, why)]);
    },
    60_000,
  );

  it('allows what the layers use: device/ its own files, mount/ the losetup helpers, csi/ mounts and state', async () => {
    await expect(lintImport(`device/${PROBE}.ts`, './lvm.js')).resolves.toEqual([]);
    await expect(lintImport(`mount/${PROBE}.ts`, '../device/emulated-losetup.js')).resolves.toEqual([]);
    await expect(lintImport(`csi/${PROBE}.ts`, '../mount/mount.js')).resolves.toEqual([]);
    await expect(lintImport(`csi/${PROBE}.ts`, '../state/volume-store.js')).resolves.toEqual([]);
  }, 60_000);

  it('leaves tests and test kits free to assemble a node from any parts', async () => {
    await expect(lintImport(`csi/${PROBE}.test.ts`, '../device/fake.js')).resolves.toEqual([]);
    await expect(lintImport(`csi/testing/${PROBE}.ts`, '../../device/emulated.js')).resolves.toEqual([]);
    await expect(lintImport(`device/${PROBE}.test.ts`, '../csi/volumes.js')).resolves.toEqual([]);
  }, 60_000);
});
