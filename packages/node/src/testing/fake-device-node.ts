// The node's own node-controller service on the fake device manager, for tests of the node's
// callers (the central controller above all): the real validation, idempotency by name, size
// rounding, capacity accounting, volume journal and error codes, with no root, no host tools and
// no second implementation of the node. It comes in three forms: the grpc-js handlers that
// node-driver.ts serves (serve() puts them on a TCP port, as the node-controller port), the same
// RPCs as async functions for callers in the same process (no gRPC), and the inventory a
// registration carries (registry.proto).
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bindServer,
  KeyedLocks,
  loadCsi,
  nullLogger,
  shutdownServer,
  type CommandRunner,
  type ControllerHandlers,
  type Logger,
  type RunResult,
} from '@pmem-csi/runtime';
import type { registry } from '@pmem-csi/csi';
import { volumeInventory } from '../node-controller/controller-list.js';
import type { NodeServiceDeps } from '../volumes/deps.js';
import {
  createNodeControllerService,
  nodeControllerCalls,
  type NodeControllerCalls,
} from '../node-controller/node-controller-server.js';
import { TEST_DRIVER, TEST_NODE } from './test-node.js';
import { FakeDeviceManager, type FakeStore } from '../device/fake.js';
import { VolumeStateStore } from '../state/volume-store.js';

export type { NodeControllerCalls };

export interface FakeDeviceNodeOptions {
  /** The node's id (default TEST_NODE). */
  readonly nodeId?: string;
  /** CSI driver name, also the topology key prefix (default TEST_DRIVER). */
  readonly driverName?: string;
  /** Bytes of the fake pool (default the fake device manager's 1 TiB). */
  readonly totalSize?: number;
  /** Allocation unit in bytes (default the fake device manager's 4 MiB). */
  readonly granularity?: number;
  /** Devices that exist already (a node restarted on the same store). */
  readonly store?: FakeStore;
  /** State directory (volume journal); default a new temporary directory that close() removes. */
  readonly dir?: string;
  readonly log?: Logger;
}

/** A node-controller endpoint served by serve(). */
export interface ServedNodeController {
  /** host:port */
  readonly endpoint: string;
  stop(): Promise<void>;
}

export interface FakeDeviceNode {
  readonly nodeId: string;
  readonly deps: NodeServiceDeps;
  readonly dm: FakeDeviceManager;
  /** The node-controller service as grpc-js handlers, exactly what the node driver serves. */
  readonly handlers: ControllerHandlers;
  /** The same RPCs as async functions, for callers in this process. */
  readonly calls: NodeControllerCalls;
  /** The volumes a registration carries (what ListVolumes reports, all pages). */
  inventory(): Promise<registry.InventoryVolume[]>;
  /** Serve the node-controller service on `address` (default 127.0.0.1, any free port), insecure. */
  serve(address?: string): Promise<ServedNodeController>;
  /** Close the state and the device manager; removes the state directory when it made it. */
  close(): Promise<void>;
}

/** Fake devices need no host tool: any call is a bug in the test set-up, so it fails naming the command. */
class NoHostTools implements CommandRunner {
  async run(command: string, args: readonly string[]): Promise<RunResult> {
    throw new Error(`a node on fake devices runs no host tools, but was asked to run ${[command, ...args].join(' ')}`);
  }

  which(): string | undefined {
    return undefined;
  }
}

async function serveHandlers(handlers: ControllerHandlers, address: string): Promise<ServedNodeController> {
  const server = new grpc.Server();
  server.addService(loadCsi().csi.v1.Controller.service, handlers);
  const port = await bindServer(server, address, grpc.ServerCredentials.createInsecure());
  const host = address.slice(0, address.lastIndexOf(':'));
  return { endpoint: `${host}:${port}`, stop: () => shutdownServer(server, 0) };
}

/** The node-controller service of one node on fake devices (set up, state initialised, not served). */
export async function createFakeDeviceNode(options: FakeDeviceNodeOptions = {}): Promise<FakeDeviceNode> {
  const log = options.log ?? nullLogger;
  const ownDir = options.dir === undefined ? await mkdtemp(join(tmpdir(), 'pmem-fake-node-')) : undefined;
  const dir = options.dir ?? (ownDir as string);
  const dm = new FakeDeviceManager({
    totalSize: options.totalSize,
    granularity: options.granularity,
    store: options.store,
    log,
  });
  await dm.setup();
  const state = new VolumeStateStore({ dir: join(dir, 'volumes'), log });
  await state.init();
  const deps: NodeServiceDeps = {
    driverName: options.driverName ?? TEST_DRIVER,
    nodeId: options.nodeId ?? TEST_NODE,
    dm,
    state,
    runner: new NoHostTools(),
    locks: new KeyedLocks(),
    log,
    version: 'test',
  };
  const handlers = createNodeControllerService(deps);
  return {
    nodeId: deps.nodeId,
    deps,
    dm,
    handlers,
    calls: nodeControllerCalls(deps),
    inventory: () => volumeInventory(deps),
    serve: (address = '127.0.0.1:0') => serveHandlers(handlers, address),
    close: async () => {
      await state.close();
      await dm.close();
      if (ownDir !== undefined) await rm(ownDir, { recursive: true, force: true });
    },
  };
}
