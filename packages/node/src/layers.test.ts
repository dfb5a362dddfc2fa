// Proves the layer rules of packages/node/eslint.config.js as `nx lint node` applies them (ESLint
// run from the package directory): the two services (csi-node/, node-controller/), what they share
// (volumes/) and state/ reach devices only through the DeviceManager port; neither service imports
// the other, volumes/ imports neither, the node-controller never mounts; device/ imports no other
// folder, and its test kits (device/testing/) wire no CSI service or node driver; registration/ and
// mount/ stay out of the services; tests and the package's test kits may assemble anything. Probe
// files exist only in memory (lintText). And that no folders import each other, directly or through
// others (the real imports of src/).
import { lintProbe, packageDir, refusedByPattern as refused } from '@pmem-csi/api/testing/lint';
import { folderCycles, folderImports } from '@pmem-csi/api/testing/folders';

const PROBE = '__layer_probe__';
const { lintImport } = lintProbe(packageDir('node'), PROBE);

const DEVICE_PORT_ONLY = (layer: string): string =>
  `${layer} uses devices only through the DeviceManager port (device/device-manager.ts), never an ` +
  'implementation (lvm, direct/ndctl, emulated, fake): node-driver.ts chooses it.';
const NEVER = (layer: string, folders: string): string =>
  `${layer} never imports ${folders}, node-driver.ts (layers: packages/node/eslint.config.js).`;
const SERVICES = 'csi-node/, node-controller/, volumes/';
const DEVICE_KITS_ONLY =
  "src/device/testing holds device-level kits only: what wires CSI services or a node driver is the package's testing/ (src/testing), never imported from device/ (layers: packages/node/eslint.config.js).";

const IMPLEMENTATIONS = ['lvm', 'lvm-tools', 'direct', 'ndctl', 'emulated', 'emulated-losetup', 'fake', 'factory'];

describe('layer rules inside @pmem-csi/node', () => {
  it.each(
    ['csi-node', 'node-controller', 'volumes'].flatMap((folder) => IMPLEMENTATIONS.map((impl) => [folder, impl])),
  )(
    '%s/ may not import the device implementation %s',
    async (folder, impl) => {
      const spec = `../device/${impl}.js`;
      await expect(lintImport(`src/${folder}/${PROBE}.ts`, spec)).resolves.toEqual([
        refused(spec, DEVICE_PORT_ONLY(`src/${folder}`)),
      ]);
    },
    60_000,
  );

  it('the services and volumes/ may import the DeviceManager port, from any depth', async () => {
    for (const folder of ['csi-node', 'node-controller', 'volumes']) {
      await expect(lintImport(`src/${folder}/${PROBE}.ts`, '../device/device-manager.js')).resolves.toEqual([]);
      await expect(lintImport(`src/${folder}/sub/${PROBE}.ts`, '../../device/device-manager.js')).resolves.toEqual([]);
    }
    await expect(lintImport(`src/csi-node/sub/${PROBE}.ts`, '../../device/lvm.js')).resolves.toEqual([
      refused('../../device/lvm.js', DEVICE_PORT_ONLY('src/csi-node')),
    ]);
  }, 60_000);

  it('state/ knows devices only through the port too', async () => {
    await expect(lintImport(`src/state/${PROBE}.ts`, '../device/device-manager.js')).resolves.toEqual([]);
    await expect(lintImport(`src/state/${PROBE}.ts`, '../device/fake.js')).resolves.toEqual([
      refused('../device/fake.js', DEVICE_PORT_ONLY('src/state')),
    ]);
  }, 60_000);

  it.each([
    [
      'csi-node',
      '../node-controller/node-controller-server.js',
      NEVER('src/csi-node', 'node-controller/, registration/'),
    ],
    ['csi-node', '../registration/registrar.js', NEVER('src/csi-node', 'node-controller/, registration/')],
    ['node-controller', '../csi-node/node-server.js', NEVER('src/node-controller', 'csi-node/, mount/, registration/')],
    ['node-controller', '../mount/mount.js', NEVER('src/node-controller', 'csi-node/, mount/, registration/')],
    [
      'node-controller',
      '../registration/registrar.js',
      NEVER('src/node-controller', 'csi-node/, mount/, registration/'),
    ],
    [
      'volumes',
      '../csi-node/format-mount.js',
      NEVER('src/volumes', 'csi-node/, node-controller/, mount/, registration/'),
    ],
    [
      'volumes',
      '../node-controller/controller-list.js',
      NEVER('src/volumes', 'csi-node/, node-controller/, mount/, registration/'),
    ],
    ['volumes', '../mount/mount.js', NEVER('src/volumes', 'csi-node/, node-controller/, mount/, registration/')],
    ['volumes', '../node-driver.js', NEVER('src/volumes', 'csi-node/, node-controller/, mount/, registration/')],
    ['device', '../volumes/volumes.js', NEVER('src/device', `${SERVICES}, mount/, state/, registration/`)],
    ['device', '../csi-node/node-server.js', NEVER('src/device', `${SERVICES}, mount/, state/, registration/`)],
    ['device', '../mount/mount.js', NEVER('src/device', `${SERVICES}, mount/, state/, registration/`)],
    ['device', '../node-driver.js', NEVER('src/device', `${SERVICES}, mount/, state/, registration/`)],
    ['mount', '../volumes/volumes.js', NEVER('src/mount', `${SERVICES}, state/, registration/`)],
    ['state', '../node-controller/controller-list.js', NEVER('src/state', `${SERVICES}, mount/, registration/`)],
    ['registration', '../csi-node/node-server.js', NEVER('src/registration', `${SERVICES}, device/, mount/, state/`)],
    ['registration', '../device/device-manager.js', NEVER('src/registration', `${SERVICES}, device/, mount/, state/`)],
    [
      'device/testing',
      '../../node-driver.js',
      NEVER('src/device/testing', `${SERVICES}, mount/, state/, registration/`),
    ],
    [
      'device/testing',
      '../../csi-node/node-server.js',
      NEVER('src/device/testing', `${SERVICES}, mount/, state/, registration/`),
    ],
  ])(
    '%s/ may not import %s',
    async (folder, spec, why) => {
      await expect(lintImport(`src/${folder}/${PROBE}.ts`, spec)).resolves.toEqual([refused(spec, why)]);
    },
    60_000,
  );

  it("device/testing/ may not import the package's test kits (the CSI test node, the guest wiring)", async () => {
    for (const spec of ['../../testing/test-node.js', '../../testing/guest-kit.js']) {
      await expect(lintImport(`src/device/testing/${PROBE}.ts`, spec)).resolves.toEqual([
        refused(spec, DEVICE_KITS_ONLY),
      ]);
    }
  }, 60_000);

  it('allows what the layers use', async () => {
    await expect(lintImport(`src/device/${PROBE}.ts`, './lvm.js')).resolves.toEqual([]);
    await expect(lintImport(`src/device/testing/${PROBE}.ts`, '../ndctl.js')).resolves.toEqual([]);
    await expect(lintImport(`src/device/testing/${PROBE}.ts`, './guest-env.js')).resolves.toEqual([]);
    await expect(lintImport(`src/mount/${PROBE}.ts`, '../device/emulated-losetup.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi-node/${PROBE}.ts`, '../mount/mount.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi-node/${PROBE}.ts`, '../state/volume-store.js')).resolves.toEqual([]);
    await expect(lintImport(`src/csi-node/${PROBE}.ts`, '../volumes/grow-volume.js')).resolves.toEqual([]);
    await expect(lintImport(`src/node-controller/${PROBE}.ts`, '../volumes/volumes.js')).resolves.toEqual([]);
    await expect(lintImport(`src/node-controller/${PROBE}.ts`, '../state/volume-record.js')).resolves.toEqual([]);
    await expect(lintImport(`src/volumes/${PROBE}.ts`, '../state/volume-store.js')).resolves.toEqual([]);
  }, 60_000);

  it('leaves tests and the package test kits free to assemble a node from any parts', async () => {
    await expect(lintImport(`src/csi-node/${PROBE}.test.ts`, '../device/fake.js')).resolves.toEqual([]);
    await expect(lintImport(`src/node-controller/${PROBE}.test.ts`, '../csi-node/node-server.js')).resolves.toEqual([]);
    await expect(lintImport(`src/testing/${PROBE}.ts`, '../node-driver.js')).resolves.toEqual([]);
    await expect(lintImport(`src/testing/${PROBE}.ts`, '../device/emulated.js')).resolves.toEqual([]);
    await expect(lintImport(`src/device/${PROBE}.test.ts`, '../volumes/volumes.js')).resolves.toEqual([]);
    await expect(lintImport(`src/device/${PROBE}.test.ts`, '../testing/guest-kit.js')).resolves.toEqual([]);
  }, 60_000);

  it('has no import cycle between its folders (every import of every file in src/, tests aside)', () => {
    expect(folderCycles(folderImports(`${packageDir('node')}src`))).toEqual([]);
  });
});
