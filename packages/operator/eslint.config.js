// Lint of @pmem-csi/operator: the workspace rules (../../eslint.config.js) and the layers inside the
// package, lowest first:
//   clock.ts, version.ts  leaves that every layer may use;
//   kube/     the KubeApi port (kube-port.ts, resources.ts: types and constants) and its adapter on
//             @kubernetes/client-node (kube-api, kube-client), informers, API health;
//   objects/  pure builders of the driver's objects: no Kubernetes client (types only), no I/O;
//   render/   pure builders of the install manifests (objects/ and the operator's own);
//   certs/    certificate planning (no Kubernetes I/O);
//   plan/     pure decisions of one reconcile (object plan, ownership, overlap, device-mode guard);
//   status/   the PmemCSIDeployment status and its events (written through the KubeApi port);
//   loop/     the control loop (informers, queue, leader election, the deployment reconciler),
//             through the KubeApi port only;
//   binary/   the process: flags, /healthz /readyz /metrics; main.ts wires binary/ and loop/.
// A layer never imports one above it. Production files only: tests and test kits (testing/) wire
// any parts. Each folder has one rule object (a later object would replace an earlier one's
// options). packages/operator/src/layers.test.ts proves that each rule reports a violating import.
import workspace from '../../eslint.config.js';

const TESTS = ['**/*.test.ts', '**/testing/**', '**/__fixtures__/**'];
const WHERE = '(layers: packages/operator/eslint.config.js)';

const glob = (t) => (t.endsWith('.js') ? `**/${t}` : `**/${t}/*`);
const shown = (t) => (t.endsWith('.js') ? t : `${t}/`);

/** `layer` never imports the `targets` (folders or top-level files), except the files in `except`. */
const NEVER = (layer, targets, except = []) => ({
  group: [...targets.map(glob), ...except.map((e) => `!**/${e}`)],
  message:
    `${layer} never imports ${targets.map(shown).join(', ')}` +
    (except.length > 0 ? ` (except ${except.join(', ')})` : '') +
    ` ${WHERE}.`,
});

/** kube/ only as the port (types, resource constants, errors), never the client adapter. */
const KUBE_PORT_ONLY = (layer, also = []) => {
  const allowed = ['kube-port.js', 'resources.js', 'kube-errors.js', ...also];
  return {
    group: ['**/kube/*', ...allowed.map((f) => `!**/kube/${f}`)],
    message:
      `${layer} reaches Kubernetes only through the KubeApi port (kube/${allowed.join(', ')}); ` +
      'main.ts picks the adapter (kube-api.ts on kube-client.ts).',
  };
};

/** Pure builders: no Node built-in with I/O (hashing with node:crypto is pure). */
const NO_IO = (layer) => ({
  group: ['node:*', '!node:crypto', 'fs', 'fs/*', 'child_process', 'net', 'http', 'https', 'http2', 'tls', 'dns'],
  message: `${layer} builds objects and does no I/O: files, processes and the network belong to the callers.`,
});

/** Types of @kubernetes/client-node only: the client itself lives behind kube/kube-port.ts. */
const CLIENT_TYPES_ONLY = (layer) => ({
  name: '@kubernetes/client-node',
  allowTypeImports: true,
  message: `${layer} uses the types of @kubernetes/client-node only (import type); the client is kube/'s.`,
});

const ABOVE_KUBE = ['loop', 'plan', 'status', 'certs', 'objects', 'render', 'binary', 'main.js'];

/** One rule object per folder: `@typescript-eslint/no-restricted-imports` with paths and patterns. */
const layer = (folder, { paths = [], patterns }) => ({
  files: [`src/${folder}/**/*.ts`],
  ignores: TESTS,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }] },
});

export default [
  ...workspace,
  layer('kube', { patterns: [NEVER('src/kube', ABOVE_KUBE)] }),
  layer('objects', {
    paths: [CLIENT_TYPES_ONLY('src/objects')],
    patterns: [
      KUBE_PORT_ONLY('src/objects'),
      NO_IO('src/objects'),
      NEVER('src/objects', ['loop', 'plan', 'status', 'certs', 'render', 'binary', 'main.js']),
    ],
  }),
  layer('render', {
    paths: [CLIENT_TYPES_ONLY('src/render')],
    patterns: [
      KUBE_PORT_ONLY('src/render'),
      NO_IO('src/render'),
      // The operator's defaults (namespace, metrics address) are its flags' defaults.
      NEVER('src/render', ['loop', 'plan', 'status', 'certs', 'binary', 'main.js'], ['binary/flags.js']),
    ],
  }),
  layer('certs', {
    paths: [CLIENT_TYPES_ONLY('src/certs')],
    patterns: [
      KUBE_PORT_ONLY('src/certs'),
      NEVER('src/certs', ['loop', 'plan', 'status', 'render', 'binary', 'main.js']),
    ],
  }),
  layer('plan', {
    paths: [CLIENT_TYPES_ONLY('src/plan')],
    patterns: [
      KUBE_PORT_ONLY('src/plan'),
      NEVER('src/plan', ['loop', 'status', 'certs', 'render', 'binary', 'main.js']),
    ],
  }),
  layer('status', {
    paths: [CLIENT_TYPES_ONLY('src/status')],
    patterns: [KUBE_PORT_ONLY('src/status'), NEVER('src/status', ['loop', 'certs', 'render', 'binary', 'main.js'])],
  }),
  layer('loop', {
    paths: [CLIENT_TYPES_ONLY('src/loop')],
    // Informers are built on the port (they take a KubeApi).
    patterns: [KUBE_PORT_ONLY('src/loop', ['informer.js']), NEVER('src/loop', ['render', 'binary', 'main.js'])],
  }),
  layer('binary', {
    patterns: [NEVER('src/binary', ['loop', 'plan', 'status', 'certs', 'objects', 'render', 'main.js'])],
  }),
];
