// End-to-end suites and harness; see e2e/src/conformance, e2e/src/cluster, e2e/src/deploy.
export { toolPath, toolInfo, listTools } from './tools.js';
