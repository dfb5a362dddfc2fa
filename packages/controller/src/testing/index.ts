// Test helpers of the controller package, exported as `@pmem-csi/controller/testing` for
// integration tests: a fake node driver (node-controller server + registry client).
export { FakeNode, type FakeCapacity, type FakeNodeOptions, type FakeVolume } from './fake-node.js';
export {
  call,
  createRequest,
  failure,
  nodeState,
  startFakeNode,
  startTestController,
  TestClock,
  waitFor,
  type TestController,
  type TestControllerOptions,
} from './harness.js';
