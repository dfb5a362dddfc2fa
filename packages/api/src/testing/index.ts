// Test kits of @pmem-csi/api (the "@pmem-csi/api/testing" subpath; never imported by production code).
export { SECRET, malformedDeployment } from './malformed.js';
export { fuzzRuns, fuzzSeed } from './fuzz-env.js';
