// The pmem-csi-driver binary: its command line, production modes, and the local stack (also used by e2e).
export { driverProgram, type CliActions, type LocalFlags, type StatusFlags } from './cli.js';
export { COMPILE_CACHE_ENV } from './compile-cache.js';
export * from './modes.js';
export * from './status-table.js';
export {
  controllerStatusSource,
  nodeStatusSource,
  serveStatus,
  type StatusServer,
  type StatusSource,
} from './status-http.js';
export { startLocalStack, chooseDeviceMode, NODE_SIZES, type LocalStack, type LocalNode } from './local/stack.js';
export { fetchStatus } from './local/status-command.js';
export { makeLocalCerts, type LocalCerts, type LocalCertsOptions } from './local/certs.js';
export { freePort, waitUntil } from './local/processes.js';
export { ControllerCsi, NodeCsi, mountCapability } from './local/csi-clients.js';
