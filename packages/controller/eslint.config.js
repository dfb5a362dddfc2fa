// Lint of @pmem-csi/controller: the workspace rules (../../eslint.config.js) and the layers inside the
// package, lowest first:
//   nodes/      the NodePort (node-port.ts) and its adapters (gRPC for production, in-process for
//               tests); imports no other folder of the package;
//   registry/, volumes/, placement/
//               the node registry, the volume index and placement; reach nodes only through the
//               port (node-port.ts, node-errors.ts), never an adapter; never import csi/;
//   csi/        the CSI Controller service: the top layer, also through the port only.
// controller.ts (the composition root) picks the adapter; no folder imports it or index.ts.
// Production files only: tests and test kits (testing/) assemble controllers from any parts.
// packages/controller/src/layers.test.ts proves that each rule reports a violating import.
import workspace from '../../eslint.config.js';

const TESTS = ['**/*.test.ts', '**/testing/**'];
const ROOT = ['**/controller.js', '**/index.js'];

const NEVER = (layer, folders) => ({
  group: [...folders.map((f) => `**/${f}/*`), ...ROOT],
  message: `${layer} never imports ${[...folders.map((f) => `${f}/`), 'controller.ts', 'index.ts'].join(', ')} (layers: packages/controller/eslint.config.js).`,
});

const ONLY_NODE_PORT = (layer) => ({
  group: ['**/nodes/*', '!**/nodes/node-port.js', '!**/nodes/node-errors.js'],
  message:
    `${layer} reaches nodes only through the NodePort (nodes/node-port.ts, nodes/node-errors.ts), never an ` +
    'adapter (grpc, in-process): controller.ts chooses it.',
});

/** One rule object per folder: `@typescript-eslint/no-restricted-imports` with the given patterns. */
const layer = (folder, ...patterns) => ({
  files: [`src/${folder}/**/*.ts`],
  ignores: TESTS,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
});

export default [
  ...workspace,
  layer('nodes', NEVER('src/nodes', ['csi', 'placement', 'registry', 'volumes'])),
  layer('registry', ONLY_NODE_PORT('src/registry'), NEVER('src/registry', ['csi', 'placement'])),
  layer('volumes', ONLY_NODE_PORT('src/volumes'), NEVER('src/volumes', ['csi', 'placement'])),
  layer('placement', ONLY_NODE_PORT('src/placement'), NEVER('src/placement', ['csi', 'volumes'])),
  layer('csi', ONLY_NODE_PORT('src/csi'), NEVER('src/csi', [])),
];
