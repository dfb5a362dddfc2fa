// Shared runtime of the driver: errors, logging, locks, the command runner, gRPC and mTLS helpers.
export * from './errors.js';
export * from './logger.js';
export * from './locks.js';
export * from './exec.js';
export * from './scripted-runner.js';
