// The controller → node contract (../testing/node-port-contract.ts) against every adapter of the
// port, each on the node package's real node-controller service on fake devices: the gRPC adapter
// talking to the node's server, the in-process adapter around the node's functions, and both on
// the scripted node the controller's other tests run on (nothing scripted: it must be the node).
import * as grpc from '@grpc/grpc-js';
import { createFakeDeviceNode } from '@pmem-csi/node/testing';
import { describeNodePortContract } from '../testing/node-port-contract.js';
import { ScriptedNode } from '../testing/scripted-node.js';
import { GrpcNodePort } from './grpc-node-port.js';
import { InProcessNodePort } from './in-process-node-port.js';

const insecure = () => grpc.credentials.createInsecure();
// Nothing listens on port 1 of the loopback: connection refused at once.
const DEAD_GRPC = '127.0.0.1:1';

describeNodePortContract('gRPC adapter → the node-controller server of a node on fake devices', async (setup) => {
  const node = await createFakeDeviceNode({
    nodeId: setup.nodeId,
    totalSize: setup.totalBytes,
    granularity: setup.granularity,
  });
  const served = await node.serve();
  const port = new GrpcNodePort({ credentials: insecure, listPageSize: setup.listPageSize });
  port.connect(setup.nodeId, served.endpoint);
  return {
    port,
    nodeId: setup.nodeId,
    deadEndpoint: DEAD_GRPC,
    close: async () => {
      port.closeAll();
      await served.stop();
      await node.close();
    },
  };
});

describeNodePortContract(
  'in-process adapter → the node-controller functions of a node on fake devices',
  async (setup) => {
    const node = await createFakeDeviceNode({
      nodeId: setup.nodeId,
      totalSize: setup.totalBytes,
      granularity: setup.granularity,
    });
    const port = new InProcessNodePort(new Map([['n1.in-process:10001', node.calls]]), {
      listPageSize: setup.listPageSize,
    });
    port.connect(setup.nodeId, 'n1.in-process:10001');
    return { port, nodeId: setup.nodeId, deadEndpoint: 'nobody.in-process:10001', close: () => node.close() };
  },
);

describeNodePortContract('gRPC adapter → the scripted node of the controller tests', async (setup) => {
  const node = await ScriptedNode.create({
    nodeId: setup.nodeId,
    freeBytes: setup.totalBytes,
    granularity: setup.granularity,
  });
  const port = new GrpcNodePort({ credentials: insecure, listPageSize: setup.listPageSize });
  port.connect(setup.nodeId, await node.start());
  return {
    port,
    nodeId: setup.nodeId,
    deadEndpoint: DEAD_GRPC,
    close: async () => {
      port.closeAll();
      await node.close();
    },
  };
});

describeNodePortContract('in-process adapter → the scripted node of the controller tests', async (setup) => {
  const node = await ScriptedNode.create({
    nodeId: setup.nodeId,
    freeBytes: setup.totalBytes,
    granularity: setup.granularity,
  });
  const port = new InProcessNodePort(new Map([['n1.in-process:10001', node.inProcessCalls]]), {
    listPageSize: setup.listPageSize,
  });
  port.connect(setup.nodeId, 'n1.in-process:10001');
  return { port, nodeId: setup.nodeId, deadEndpoint: 'nobody.in-process:10001', close: () => node.close() };
});
