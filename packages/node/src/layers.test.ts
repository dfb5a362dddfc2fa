// Proves the layer rules of packages/node/eslint.config.js as `nx lint node` applies them (ESLint
// run from the package directory): csi/ and state/ reach devices only through the DeviceManager
// port, device/ imports no other folder, registration/ and mount/ stay out of csi/, and tests may
// assemble anything. Probe files exist only in memory (lintText).
import { lintProbe, packageDir, refusedByPattern as refused } from '@pmem-csi/api/testing/lint';

const PROBE = '__layer_probe__';
const { lintImport } = lintProbe(packageDir('node'), PROBE);

const DEVICE_PORT_ONLY = (layer: string): string =>
  `${layer} uses devices only through the DeviceManager port (device/device-manager.ts), never an ` +
  'implementation (lvm, direct/ndctl, emulated, fake): node-driver.ts chooses it.';
const NEVER = (layer: string, folders: string): string =>
  `${layer} never imports ${folders}, node-driver.ts (layers: packages/node/eslint.config.js).`;

describe('layer rules inside @pmem-csi/node', () => {
  it.each(['lvm', 'lvm-tools', 'direct', 'ndctl', 'emulated', 'emulated-losetup', 'fake', 'factory'])(
    'csi/ may not import the device implementation %s',
    async (impl) => {
      const spec = `../device/${impl}.js`;
      await expect(lintImport(`src/csi/${PROBE}.ts`, spec)).resolves.toEqual([
        refused(spec, DEVICE_PORT_ONLY('src/csi')),
      ]);
    },
    60_000,
  );

  it('csi/ may import the DeviceManager port, from any depth', async () => {
    await expect(lintImport(`src/csi/${PROBE}.ts`, '../device/device-manager.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi/sub/${PROBE}.ts`, '../../device/device-manager.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi/sub/${PROBE}.ts`, '../../device/lvm.js')).resolves.toEqual([
      refused('../../device/lvm.js', DEVICE_PORT_ONLY('src/csi')),
    ]);
  }, 60_000);

  it('state/ knows devices only through the port too', async () => {
    await expect(lintImport(`src/state/${PROBE}.ts`, '../device/device-manager.js')).resolves.toEqual([]);
    await expect(lintImport(`src/state/${PROBE}.ts`, '../device/fake.js')).resolves.toEqual([
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
      await expect(lintImport(`src/${folder}/${PROBE}.ts`, spec)).resolves.toEqual([refused(spec, why)]);
    },
    60_000,
  );

  it('allows what the layers use: device/ its own files, mount/ the losetup helpers, csi/ mounts and state', async () => {
    await expect(lintImport(`src/device/${PROBE}.ts`, './lvm.js')).resolves.toEqual([]);
    await expect(lintImport(`src/mount/${PROBE}.ts`, '../device/emulated-losetup.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi/${PROBE}.ts`, '../mount/mount.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi/${PROBE}.ts`, '../state/volume-store.js')).resolves.toEqual([]);
  }, 60_000);

  it('leaves tests and test kits free to assemble a node from any parts', async () => {
    await expect(lintImport(`src/csi/${PROBE}.test.ts`, '../device/fake.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi/testing/${PROBE}.ts`, '../../device/emulated.js')).resolves.toEqual([]);
    await expect(lintImport(`src/device/${PROBE}.test.ts`, '../csi/volumes.js')).resolves.toEqual([]);
  }, 60_000);
});
