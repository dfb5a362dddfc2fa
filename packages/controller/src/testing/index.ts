// Test helpers of the controller package, exported as `@pmem-csi/controller/testing` for
// integration tests: a scripted node (the real node-controller service on fake devices, with
// scripted failures, delays and registrations), a node's session with one of several controller
// replicas, and a controller on a temporary socket.
export { NodeSession, registryClient } from './node-session.js';
export { ScriptedNode, type ScriptedMethod, type ScriptedNodeOptions } from './scripted-node.js';
export {
  call,
  createRequest,
  failure,
  nodeState,
  startScriptedNode,
  startTestController,
  TestClock,
  waitFor,
  type TestController,
  type TestControllerOptions,
} from './harness.js';
