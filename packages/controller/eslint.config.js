// Lint of @pmem-csi/controller: the workspace rules (../../eslint.config.js) and the layers inside the
// package, lowest first:
//   nodes/      the NodePort (node-port.ts) and its adapters (gRPC for production, in-process for
//               tests); imports no other folder of the package;
//   registry/   the node registry (bookkeeping: leases, capacity order, registrations); imports
//               none of volumes/ and placement/;
//   volumes/, placement/
//               the volume index and placement;
//   registration/, csi/
//               the two RPC entry points: registry.proto's service that the node drivers call, and the
//               CSI Controller service; neither imports the other, no folder below imports them.
// Every folder but nodes/ reaches nodes only through the port (node-port.ts, node-errors.ts), never an
// adapter.
// controller.ts (the composition root) picks the adapter; no folder imports it or index.ts.
// Production files only: tests and test kits (testing/) assemble controllers from any parts.
// The helpers are the workspace's (layerRules in ../../eslint.config.js);
// packages/controller/src/layers.test.ts proves that each rule reports a violating import.
import workspace, { layerRules } from '../../eslint.config.js';

const { never, onlyThrough, layer } = layerRules('packages/controller/eslint.config.js');

const ROOT = ['controller.js', 'index.js'];

const NODE_PORT_ONLY = (from) =>
  onlyThrough(
    from,
    'nodes',
    ['node-port.js', 'node-errors.js'],
    'reaches nodes only through the NodePort (nodes/node-port.ts, nodes/node-errors.ts), never an ' +
      'adapter (grpc, in-process): controller.ts chooses it.',
  );

export default [
  ...workspace,
  layer('nodes', {
    patterns: [never('src/nodes', ['csi', 'registration', 'placement', 'registry', 'volumes', ...ROOT])],
  }),
  layer('registry', {
    patterns: [
      NODE_PORT_ONLY('src/registry'),
      never('src/registry', ['csi', 'registration', 'placement', 'volumes', ...ROOT]),
    ],
  }),
  layer('volumes', {
    patterns: [NODE_PORT_ONLY('src/volumes'), never('src/volumes', ['csi', 'registration', 'placement', ...ROOT])],
  }),
  layer('placement', {
    patterns: [NODE_PORT_ONLY('src/placement'), never('src/placement', ['csi', 'registration', 'volumes', ...ROOT])],
  }),
  layer('registration', {
    patterns: [NODE_PORT_ONLY('src/registration'), never('src/registration', ['csi', 'placement', ...ROOT])],
  }),
  layer('csi', { patterns: [NODE_PORT_ONLY('src/csi'), never('src/csi', ['registration', ...ROOT])] }),
];
