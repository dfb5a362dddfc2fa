// Test kits of the runtime (`@pmem-csi/runtime/testing`): for unit tests only, never imported by
// production code, so the production index (`@pmem-csi/runtime`) and the bundles do not carry them.
export * from './scripted-runner.js';
export * from './listen-backlog.js';
export * from './raw-call.js';
export * from './log-capture.js';
