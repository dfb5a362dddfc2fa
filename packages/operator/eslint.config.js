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
// any parts. The helpers are the workspace's (layerRules in ../../eslint.config.js);
// packages/operator/src/layers.test.ts proves that each rule reports a violating import.
import workspace, { layerRules } from '../../eslint.config.js';

const { never, onlyThrough, layer } = layerRules('packages/operator/eslint.config.js');

/** kube/ only as the port (types, resource constants, errors), never the client adapter. */
const KUBE_PORT_ONLY = (from, also = []) => {
  const allowed = ['kube-port.js', 'resources.js', 'kube-errors.js', ...also];
  return onlyThrough(
    from,
    'kube',
    allowed,
    `reaches Kubernetes only through the KubeApi port (kube/${allowed.join(', ')}); ` +
      'main.ts picks the adapter (kube-api.ts on kube-client.ts).',
  );
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

export default [
  ...workspace,
  layer('kube', { patterns: [never('src/kube', ABOVE_KUBE)] }),
  layer('objects', {
    paths: [CLIENT_TYPES_ONLY('src/objects')],
    patterns: [
      KUBE_PORT_ONLY('src/objects'),
      NO_IO('src/objects'),
      never('src/objects', ['loop', 'plan', 'status', 'certs', 'render', 'binary', 'main.js']),
    ],
  }),
  layer('render', {
    paths: [CLIENT_TYPES_ONLY('src/render')],
    patterns: [
      KUBE_PORT_ONLY('src/render'),
      NO_IO('src/render'),
      // The operator's defaults (namespace, metrics address) are its flags' defaults.
      never('src/render', ['loop', 'plan', 'status', 'certs', 'binary', 'main.js'], ['binary/flags.js']),
    ],
  }),
  layer('certs', {
    paths: [CLIENT_TYPES_ONLY('src/certs')],
    patterns: [
      KUBE_PORT_ONLY('src/certs'),
      never('src/certs', ['loop', 'plan', 'status', 'render', 'binary', 'main.js']),
    ],
  }),
  layer('plan', {
    paths: [CLIENT_TYPES_ONLY('src/plan')],
    patterns: [
      KUBE_PORT_ONLY('src/plan'),
      never('src/plan', ['loop', 'status', 'certs', 'render', 'binary', 'main.js']),
    ],
  }),
  layer('status', {
    paths: [CLIENT_TYPES_ONLY('src/status')],
    patterns: [KUBE_PORT_ONLY('src/status'), never('src/status', ['loop', 'certs', 'render', 'binary', 'main.js'])],
  }),
  layer('loop', {
    paths: [CLIENT_TYPES_ONLY('src/loop')],
    // Informers are built on the port (they take a KubeApi).
    patterns: [KUBE_PORT_ONLY('src/loop', ['informer.js']), never('src/loop', ['render', 'binary', 'main.js'])],
  }),
  layer('binary', {
    patterns: [never('src/binary', ['loop', 'plan', 'status', 'certs', 'objects', 'render', 'main.js'])],
  }),
];
