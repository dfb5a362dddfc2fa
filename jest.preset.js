// Shared Jest settings. The workspace is ESM end to end ("type": "module", TypeScript NodeNext),
// because @kubernetes/client-node >= 1.0 ships only ESM. Jest therefore runs with
// --experimental-vm-modules (see package.json "unit" and nx.json targetDefaults), ts-jest compiles
// each file in isolation (type checking is the separate `typecheck` target), and workspace packages
// resolve to their TypeScript sources through the "@pmem-csi/source" export condition.
// Every project's globalSetup refuses a Node.js of another major than package.json pins
// (tools/check-node.mjs), however Jest was started (npm run unit, nx test, npx jest, e2e).
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Jest config for one project, given its jest.config.js URL and display name. */
export function projectConfig(configUrl, displayName, overrides = {}) {
  const rootDir = dirname(fileURLToPath(configUrl));
  return {
    displayName,
    rootDir,
    testEnvironment: 'node',
    globalSetup: fileURLToPath(new URL('./tools/check-node.mjs', import.meta.url)),
    testMatch: ['<rootDir>/src/**/*.test.ts'],
    // *.guest.test.ts need the QEMU guest of the real-PMEM tier (e2e/qemu): only it sets PMEM_CSI_GUEST=1.
    testPathIgnorePatterns: [
      '/node_modules/',
      ...(process.env.PMEM_CSI_GUEST === '1' ? [] : ['\\.guest\\.test\\.ts$']),
    ],
    extensionsToTreatAsEsm: ['.ts'],
    moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
    moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
    transform: {
      '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: `${rootDir}/tsconfig.spec.json` }],
    },
    testEnvironmentOptions: {
      customExportConditions: ['node', 'node-addons', '@pmem-csi/source'],
    },
    ...overrides,
  };
}
