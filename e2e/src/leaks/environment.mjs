// The e2e test environment for e2e/jest.config.js: Jest imports a test environment natively,
// outside the module system that transpiles the tests, so this shim loads the TypeScript one
// (environment.ts) through tsx once per process and hands Jest its class.
import { tsImport } from 'tsx/esm/api';

const { LeakCheckEnvironment } = await tsImport('./environment.ts', import.meta.url);
export default LeakCheckEnvironment;
