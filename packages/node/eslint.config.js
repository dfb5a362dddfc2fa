// Lint of @pmem-csi/node: the workspace rules (../../eslint.config.js) and the layers inside the
// package, lowest first:
//   device/           the DeviceManager port (device-manager.ts) and its implementations (lvm, direct
//                     with ndctl, emulated with losetup, fake); imports no other folder of the
//                     package; its test kits (device/testing/) are device-level too: what wires CSI
//                     services or a node driver is the package's testing/;
//   mount/            mounts, filesystems, host paths (may use the losetup helpers and the mountinfo parser of device/);
//   state/            the volume journal; knows devices only through the DeviceManager port;
//   registration/     registration with the controller; knows nothing of devices, mounts or CSI;
//   volumes/          what the two services share: their dependencies, creating, finding, growing
//                     and deleting a volume (device + record); no mounts;
//   csi-node/         the CSI Node service kubelet calls (stage, publish, expand, stats);
//   node-controller/  the service the pmem-csi controller calls (create, delete, list, capacity,
//                     expand): never mounts; neither service imports the other.
// volumes/ and both services use devices only through the DeviceManager port, never an
// implementation: node-driver.ts (the composition root) picks the implementation.
// No folder imports node-driver.ts. Production files only: tests, fixtures and the package's test
// kits (src/testing/, src/registration/testing/) assemble nodes from any parts; device/testing/ has
// its own rule. The helpers are the workspace's (layerRules in
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

const SERVICES = ['csi-node', 'node-controller', 'volumes'];

/** device/testing/: the device-level test kits (contract, guest environment, doubles); tests themselves may wire anything. */
const deviceKits = {
  files: ['src/device/testing/**/*.ts'],
  ignores: ['**/*.test.ts'],
  rules: {
    '@typescript-eslint/no-restricted-imports': [
      'error',
      {
        patterns: [
          never('src/device/testing', [...SERVICES, 'mount', 'state', 'registration', ROOT]),
          {
            group: ['../../testing/*'],
            message:
              "src/device/testing holds device-level kits only: what wires CSI services or a node driver is the package's testing/ (src/testing), never imported from device/ (layers: packages/node/eslint.config.js).",
          },
        ],
      },
    ],
  },
};

export default [
  ...workspace,
  layer('device', { patterns: [never('src/device', [...SERVICES, 'mount', 'state', 'registration', ROOT])] }),
  deviceKits,
  layer('mount', { patterns: [never('src/mount', [...SERVICES, 'state', 'registration', ROOT])] }),
  layer('state', {
    patterns: [DEVICE_PORT_ONLY('src/state'), never('src/state', [...SERVICES, 'mount', 'registration', ROOT])],
  }),
  layer('registration', {
    patterns: [never('src/registration', [...SERVICES, 'device', 'mount', 'state', ROOT])],
  }),
  layer('volumes', {
    patterns: [
      DEVICE_PORT_ONLY('src/volumes'),
      never('src/volumes', ['csi-node', 'node-controller', 'mount', 'registration', ROOT]),
    ],
  }),
  layer('csi-node', {
    patterns: [DEVICE_PORT_ONLY('src/csi-node'), never('src/csi-node', ['node-controller', 'registration', ROOT])],
  }),
  layer('node-controller', {
    patterns: [
      DEVICE_PORT_ONLY('src/node-controller'),
      never('src/node-controller', ['csi-node', 'mount', 'registration', ROOT]),
    ],
  }),
];
