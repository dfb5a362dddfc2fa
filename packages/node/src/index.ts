// CSI node service, node-controller service, PMEM device managers and node state.
export * from './device/device-manager.js';
export * from './device/factory.js';
export { FakeDeviceManager } from './device/fake.js';
export { EmulatedDeviceManager } from './device/emulated.js';
export { boundTo, fileIdentity, listLoopDevices, type LoopDevice } from './device/emulated-losetup.js';
export { LvmDeviceManager } from './device/lvm.js';
export { DirectDeviceManager, checkSysWritable } from './device/direct.js';
export * from './state/index.js';
export * from './csi/index.js';
export * from './mount/index.js';
export * from './registration/index.js';
// The host tools per device mode are CSI vocabulary (@pmem-csi/csi); passed on for the image tests.
export { nodeTools, FILESYSTEM_TOOLS } from '@pmem-csi/csi';
export { startNodeDriver, type NodeDriver, type NodeDriverOptions, type NodeStatus } from './node-driver.js';
export { NodeMetrics, type DeviceOperation } from './metrics.js';
