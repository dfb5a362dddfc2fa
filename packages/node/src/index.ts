// The node driver for its production users: the driver binary starts it (startNodeDriver) and
// serves its status; the local stack releases its host directory; e2e tooling lists the loop
// devices of emulated PMEM and checks the dashboards against the node's metric names. Test kits
// and the node's internals for tests are exported by '@pmem-csi/node/testing' (src/testing/index.ts).
export { startNodeDriver, type NodeDriver, type NodeDriverOptions, type NodeStatus } from './node-driver.js';
export { releaseHostDir, type ReleasedHostDir } from './mount/host-dir.js';
export { fileIdentity, listLoopDevices, type LoopDevice } from './device/emulated-losetup.js';
export { NodeMetrics, type DeviceOperation } from './metrics.js';
