import { projectConfig } from '../jest.preset.js';

// End-to-end suites (*.e2e.test.ts): real components, run one at a time.
export default projectConfig(import.meta.url, 'e2e', {
  testMatch: ['<rootDir>/src/**/*.e2e.test.ts', '<rootDir>/src/**/*.test.ts'],
  maxWorkers: 1,
  testTimeout: 20 * 60_000,
});
