// Lint of @pmem-csi/node: the workspace rules (../../eslint.config.js) and the layers inside the
// package, lowest first:
//   device/        the DeviceManager port (device-manager.ts) and its implementations (lvm, direct
//                  with ndctl, emulated with losetup, fake); imports no other folder of the package;
//   mount/         mounts, filesystems, host paths (may use the losetup helpers of device/);
//   state/         the volume journal; knows devices only through the DeviceManager port;
//   registration/  registration with the controller; knows nothing of devices, mounts or CSI;
//   csi/           the CSI services; use devices only through the DeviceManager port, never an
//                  implementation: node-driver.ts (the composition root) picks the implementation.
// Production files only: tests and test kits (testing/, __fixtures__/) assemble nodes from any
// parts. Each folder has one rule object (a later object would replace an earlier one's options).
// packages/node/src/layers.test.ts proves that each rule reports a violating import.
import workspace from '../../eslint.config.js';

const TESTS = ['**/*.test.ts', '**/testing/**', '**/__fixtures__/**'];

const NEVER = (layer, folders) => ({
  group: [...folders.map((f) => `**/${f}/*`), '**/node-driver.js'],
  message: `${layer} never imports ${folders.map((f) => `${f}/`).join(', ')} or node-driver.ts (layers: packages/node/eslint.config.js).`,
});

const ONLY_DEVICE_PORT = (layer) => ({
  group: ['**/device/*', '!**/device/device-manager.js'],
  message:
    `${layer} uses devices only through the DeviceManager port (device/device-manager.ts), never an ` +
    'implementation (lvm, direct/ndctl, emulated, fake): node-driver.ts chooses it.',
});

/** One rule object per folder: `@typescript-eslint/no-restricted-imports` with the given patterns. */
const layer = (folder, ...patterns) => ({
  files: [`src/${folder}/**/*.ts`],
  ignores: TESTS,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
});

export default [
  ...workspace,
  layer('device', NEVER('src/device', ['csi', 'mount', 'state', 'registration'])),
  layer('mount', NEVER('src/mount', ['csi', 'state', 'registration'])),
  layer('state', ONLY_DEVICE_PORT('src/state'), NEVER('src/state', ['csi', 'mount', 'registration'])),
  layer('registration', NEVER('src/registration', ['csi', 'device', 'mount', 'state'])),
  layer('csi', ONLY_DEVICE_PORT('src/csi'), NEVER('src/csi', ['registration'])),
];
