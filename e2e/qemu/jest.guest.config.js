// Jest config of the real-PMEM tier, used INSIDE the QEMU guest only (e2e/qemu/harness.mjs passes
// it with --config): the node project's settings, but only the *.guest.test.ts files, which need
// root, ndctl, LVM and emulated NVDIMMs. The repository is a read-only 9p share there, so the
// transform cache goes to /cache (a host directory the harness shares, kept between boots: ts-jest
// transpiling the imports costs minutes under TCG) or else to the guest's tmpfs.
import { existsSync } from 'node:fs';
import { projectConfig } from '../../jest.preset.js';

const base = projectConfig(new URL('../../packages/node/jest.config.js', import.meta.url), 'node-guest');

export default {
  ...base,
  testMatch: ['<rootDir>/src/**/*.guest.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  cacheDirectory: existsSync('/cache') ? '/cache/jest' : '/tmp/jest-cache',
  // One guest CPU: no worker processes.
  maxWorkers: 1,
};
