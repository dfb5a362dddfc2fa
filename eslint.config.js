// Lint rules for the whole workspace. Package boundaries are enforced here (not by habit):
//   scope:api        imports nothing of ours;
//   scope:shared     (the runtime library) only the csi package (transport: never the CRD api);
//   scope:controller / scope:node never import the operator (nor each other);
//   scope:operator   the api and the shared runtime;
//   scope:driver     (the binary) the controller, the node and what they use;
//   scope:e2e        anything.
//   scope:csi        (the CSI vocabulary) only the api, and no I/O: no Node built-ins that touch
//                    files, processes or the network, no gRPC, no Kubernetes client;
//                    every package above the api may import it.
// Only the operator and e2e may import @kubernetes/client-node.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const K8S_CLIENT = ['@kubernetes/client-node'];
// Libraries with I/O that the pure CSI vocabulary must not reach (Node's built-ins are refused by
// no-restricted-imports below: the boundary rule does not see them).
const CSI_BANNED = [
  ...K8S_CLIENT,
  '@grpc/grpc-js',
  '@grpc/proto-loader',
  'protobufjs',
  'node-forge',
  'commander',
  'prom-client',
];
// Every Node built-in module, with or without the node: prefix.
const NODE_BUILTINS = [
  'node:*',
  'fs',
  'fs/*',
  'child_process',
  'net',
  'dgram',
  'dns',
  'dns/*',
  'http',
  'https',
  'http2',
  'tls',
  'os',
  'process',
  'worker_threads',
  'cluster',
  'readline',
  'stream',
  'stream/*',
  'crypto',
  'url',
  'util',
  'v8',
  'vm',
  'module',
  'inspector',
  'perf_hooks',
  'async_hooks',
  'timers',
  'timers/*',
  'zlib',
  'path',
];
const SHARED = ['scope:api', 'scope:csi', 'scope:shared'];

export const depConstraints = [
  { sourceTag: 'scope:api', onlyDependOnLibsWithTags: [], bannedExternalImports: K8S_CLIENT },
  { sourceTag: 'scope:csi', onlyDependOnLibsWithTags: ['scope:api'], bannedExternalImports: CSI_BANNED },
  // The runtime is transport (gRPC, TLS, logging, processes): it speaks the CSI vocabulary, never the CRD.
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:csi'], bannedExternalImports: K8S_CLIENT },
  { sourceTag: 'scope:controller', onlyDependOnLibsWithTags: SHARED, bannedExternalImports: K8S_CLIENT },
  { sourceTag: 'scope:node', onlyDependOnLibsWithTags: SHARED, bannedExternalImports: K8S_CLIENT },
  { sourceTag: 'scope:operator', onlyDependOnLibsWithTags: SHARED },
  {
    sourceTag: 'scope:driver',
    onlyDependOnLibsWithTags: [...SHARED, 'scope:controller', 'scope:node'],
    bannedExternalImports: K8S_CLIENT,
  },
  { sourceTag: 'scope:e2e', onlyDependOnLibsWithTags: ['*'] },
  { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
  { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:lib', 'type:app'] },
];

const BOUNDARY_OPTIONS = {
  enforceBuildableLibDependency: false,
  allow: [],
  checkNestedExternalImports: true,
  // The driver binary imports each mode's package lazily (start-up time: a node never loads
  // the controller); tests and benchmarks import them statically, which is harmless.
  checkDynamicDependenciesExceptions: ['@pmem-csi/node', '@pmem-csi/controller'],
};

// The controller's tests run on the real node: its test files and test kit (src/**/*.test.ts,
// src/testing/**) may import '@pmem-csi/node/testing' (the node-controller service on fake
// devices), nothing else of the node; its production files keep the rule above (proved by
// packages/controller/src/boundaries.test.ts). The node never imports the controller, so the
// project graph has no cycle. Matched by absolute path: `nx lint` runs eslint inside each
// package, where the paths a glob sees are relative to that package.
const CONTROLLER_SRC = `${import.meta.dirname}/packages/controller/src/`;
const isControllerTestCode = (file) =>
  file.startsWith(CONTROLLER_SRC) && (file.endsWith('.test.ts') || file.startsWith(`${CONTROLLER_SRC}testing/`));
const CONTROLLER_TEST_CONSTRAINTS = depConstraints.map((c) =>
  c.sourceTag === 'scope:controller' ? { ...c, onlyDependOnLibsWithTags: [...SHARED, 'scope:node'] } : c,
);

// ---------------------------------------------------------------------------------------------
// The layer rules inside a package, written once for packages/{controller,node,operator}/eslint.config.js
// (they import these helpers from here). A package lists its folders lowest first and, for each, what
// it never imports and which port it must go through; each folder becomes one
// `@typescript-eslint/no-restricted-imports` rule object on its production files (tests, test kits and
// fixtures assemble from any parts). One object per folder: a later object for the same files would
// replace an earlier one's options, not add to them. Kept in this file because Nx counts it as an
// input of every package's lint target. Each package's src/layers.test.ts proves its rules.

/** Files the layer rules never apply to: tests, test kits and fixtures wire any parts. */
export const TEST_FILES = ['**/*.test.ts', '**/testing/**', '**/__fixtures__/**'];

/** A folder is restricted as all of its files; a top-level file by its import name (`main.js`). */
const glob = (target) => (target.endsWith('.js') ? `**/${target}` : `**/${target}/*`);
/** How a message names a target: a folder as `folder/`, a file by its source name (`main.ts`). */
const shown = (target) => (target.endsWith('.js') ? target.replace(/\.js$/, '.ts') : `${target}/`);

/**
 * The helpers of one package's layer config; `config` (e.g. 'packages/node/eslint.config.js') is
 * named in every message, so that whoever hits a rule finds where the layers are described.
 */
export function layerRules(config) {
  return {
    /**
     * `layer` never imports the `targets` (folders such as 'csi', or top-level files such as
     * 'main.js'), except the files in `except` (paths below src/, such as 'binary/flags.js').
     */
    never(layer, targets, except = []) {
      const but = except.length > 0 ? ` (except ${except.map(shown).join(', ')})` : '';
      return {
        group: [...targets.map(glob), ...except.map((e) => `!**/${e}`)],
        message: `${layer} never imports ${targets.map(shown).join(', ')}${but} (layers: ${config}).`,
      };
    },

    /**
     * `layer` reaches `folder` only through its files `allowed` (the port); `says` completes the
     * message: what the port is and who picks the implementation.
     */
    onlyThrough(layer, folder, allowed, says) {
      return {
        group: [`**/${folder}/*`, ...allowed.map((f) => `!**/${folder}/${f}`)],
        message: `${layer} ${says}`,
      };
    },

    /** The rule object of the production files in src/<folder>: restricted `paths` and `patterns`. */
    layer(folder, { paths = [], patterns }) {
      return {
        files: [`src/${folder}/**/*.ts`],
        ignores: TEST_FILES,
        rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths, patterns }] },
      };
    },
  };
}

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/out-tsc/**',
      '**/node_modules/**',
      '**/generated/**',
      '**/__fixtures__/**',
      '.nx/**',
      'tmp/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@nx/enforce-module-boundaries': ['error', { ...BOUNDARY_OPTIONS, depConstraints }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      complexity: ['error', 12],
      'max-params': ['error', 4],
      'max-lines': ['error', { max: 700, skipBlankLines: true, skipComments: true }],
      'no-console': 'error',
    },
  },
  {
    // The CSI vocabulary is pure: no file, process, network or clock of Node's (tests may use them).
    files: ['packages/csi/src/**/*.ts'],
    ignores: ['packages/csi/src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: NODE_BUILTINS,
              message: '@pmem-csi/csi is pure (no I/O): keep Node built-ins in the packages that do I/O.',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests may be longer and use console in diagnostics, but must not float promises either.
    files: ['**/*.test.ts', 'e2e/**/*.ts'],
    rules: { 'max-lines': 'off', complexity: 'off', 'no-console': 'off' },
  },
  {
    files: [isControllerTestCode],
    rules: {
      '@nx/enforce-module-boundaries': ['error', { ...BOUNDARY_OPTIONS, depConstraints: CONTROLLER_TEST_CONSTRAINTS }],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@pmem-csi/node',
              message: "controller tests use the node only through its test kit: import from '@pmem-csi/node/testing'.",
            },
          ],
        },
      ],
    },
  },
);
