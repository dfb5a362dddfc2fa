// Test kits of the node package, for its own tests and those of other packages
// ('@pmem-csi/node/testing'; production code imports '@pmem-csi/node'). Loads @jest/globals
// (the device contract): import it from jest tests only.
//
// The node's node-controller service on fake devices: what the controller's tests run on.
export {
  createFakeDeviceNode,
  type FakeDeviceNode,
  type FakeDeviceNodeOptions,
  type NodeControllerCalls,
  type ServedNodeController,
} from './fake-device-node.js';
export { FakeDeviceManager, FakeStore, type FakeDeviceManagerOptions } from '../device/fake.js';
// One node's CSI services on a unix socket, scripted mounts, host clean-up after root tests.
export * from './test-node.js';
export * from './scripted-mounts.js';
export * from './host-cleanup.js';
// The controller's side of the registry protocol, for registration tests.
export * from '../registration/testing/fake-registry.js';
// One contract suite for every DeviceManager implementation.
export * from '../device/testing/contract.js';
// Host inspection for leak checks: mounts and loop devices under a directory, loop devices of a file.
export { findMountsUnder } from '../mount/findmnt.js';
export { loopDevicesUnder } from '../mount/host-dir.js';
export { boundTo, fileIdentity } from '../device/emulated-losetup.js';
// The host tools per device mode (CSI vocabulary), passed on for the image tests.
export { nodeTools, FILESYSTEM_TOOLS } from '@pmem-csi/csi';
