// Lint of @pmem-csi/node: the workspace rules (../../eslint.config.js) and the layers inside the
// package, lowest first:
//   device/        the DeviceManager port (device-manager.ts) and its implementations (lvm, direct
//                  with ndctl, emulated with losetup, fake); imports no other folder of the package;
//   mount/         mounts, filesystems, host paths (may use the losetup helpers of device/);
//   state/         the volume journal; knows devices only through the DeviceManager port;
//   registration/  registration with the controller; knows nothing of devices, mounts or CSI;
//   csi/           the CSI services; use devices only through the DeviceManager port, never an
//                  implementation: node-driver.ts (the composition root) picks the implementation.
// No folder imports node-driver.ts. Production files only: tests and test kits (testing/,
// __fixtures__/) assemble nodes from any parts. The helpers are the workspace's (layerRules in
// ../../eslint.config.js); packages/node/src/layers.test.ts proves that each rule reports a violating
// import.
import workspace, { layerRules } from '../../eslint.config.js';

const { never, onlyThrough, layer } = layerRules('packages/node/eslint.config.js');

const ROOT = 'node-driver.js';

const DEVICE_PORT_ONLY = (from) =>
  onlyThrough(
    from,
    'device',
    ['device-manager.js'],
    'uses devices only through the DeviceManager port (device/device-manager.ts), never an ' +
      'implementation (lvm, direct/ndctl, emulated, fake): node-driver.ts chooses it.',
  );

export default [
  ...workspace,
  layer('device', { patterns: [never('src/device', ['csi', 'mount', 'state', 'registration', ROOT])] }),
  layer('mount', { patterns: [never('src/mount', ['csi', 'state', 'registration', ROOT])] }),
  layer('state', {
    patterns: [DEVICE_PORT_ONLY('src/state'), never('src/state', ['csi', 'mount', 'registration', ROOT])],
  }),
  layer('registration', { patterns: [never('src/registration', ['csi', 'device', 'mount', 'state', ROOT])] }),
  layer('csi', { patterns: [DEVICE_PORT_ONLY('src/csi'), never('src/csi', ['registration', ROOT])] }),
];
