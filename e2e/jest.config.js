import { projectConfig } from '../jest.preset.js';

// End-to-end suites (*.e2e.test.ts): real components, run one at a time. Every file runs in the
// leak-checking environment (src/leaks/environment.ts): loop devices, mounts, processes and
// emulated volume files that the file created and left behind fail it, printed with what they are.
export default projectConfig(import.meta.url, 'e2e', {
  testMatch: ['<rootDir>/src/**/*.e2e.test.ts', '<rootDir>/src/**/*.test.ts'],
  testEnvironment: '<rootDir>/src/leaks/environment.mjs',
  maxWorkers: 1,
  testTimeout: 20 * 60_000,
});
