// Lint rules for the whole workspace. Package boundaries are enforced here (not by habit):
//   scope:api        imports nothing of ours;
//   scope:shared     (the runtime library) only the api;
//   scope:controller / scope:node never import the operator (nor each other);
//   scope:operator   the api and the shared runtime;
//   scope:driver     (the binary) the controller, the node and what they use;
//   scope:e2e        anything.
// Only the operator and e2e may import @kubernetes/client-node.
import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

const K8S_CLIENT = ['@kubernetes/client-node'];

export const depConstraints = [
  { sourceTag: 'scope:api', onlyDependOnLibsWithTags: [], bannedExternalImports: K8S_CLIENT },
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:api', 'scope:shared'], bannedExternalImports: K8S_CLIENT },
  { sourceTag: 'scope:controller', onlyDependOnLibsWithTags: ['scope:api', 'scope:shared'], bannedExternalImports: K8S_CLIENT },
  { sourceTag: 'scope:node', onlyDependOnLibsWithTags: ['scope:api', 'scope:shared'], bannedExternalImports: K8S_CLIENT },
  { sourceTag: 'scope:operator', onlyDependOnLibsWithTags: ['scope:api', 'scope:shared'] },
  { sourceTag: 'scope:driver', onlyDependOnLibsWithTags: ['scope:api', 'scope:shared', 'scope:controller', 'scope:node'], bannedExternalImports: K8S_CLIENT },
  { sourceTag: 'scope:e2e', onlyDependOnLibsWithTags: ['*'] },
  { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
  { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:lib', 'type:app'] },
];

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/out-tsc/**', '**/node_modules/**', '**/generated/**', '**/__fixtures__/**', '.nx/**', 'tmp/**'],
  },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints,
          checkNestedExternalImports: true,
          // The driver binary imports each mode's package lazily (start-up time: a node never loads
          // the controller); tests and benchmarks import them statically, which is harmless.
          checkDynamicDependenciesExceptions: ['@pmem-csi/node', '@pmem-csi/controller'],
        },
      ],
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
    // Tests may be longer and use console in diagnostics, but must not float promises either.
    files: ['**/*.test.ts', 'e2e/**/*.ts'],
    rules: { 'max-lines': 'off', complexity: 'off', 'no-console': 'off' },
  },
);
