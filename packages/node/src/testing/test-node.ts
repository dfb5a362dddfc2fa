// Test wiring of one node's CSI services on ONE unix socket (Identity, Node and the node-controller
// service), with insecure credentials: used by the unit and integration tests and by the restart
// test's entry script. Production wiring (two servers, mTLS, registration) is node-driver.ts.
import * as grpc from '@grpc/grpc-js';
import { join } from 'node:path';
import {
  bindServer,
  createIdentityService,
  grpcAddress,
  HostRunner,
  KeyedLocks,
  loadCsi,
  nullLogger,
  shutdownServer,
  unary,
  type CommandRunner,
  type ControllerClient,
  type IdentityClient,
  type Logger,
  type NodeClient,
} from '@pmem-csi/runtime';
import type { csi } from '@pmem-csi/csi';
import type { DeviceManager } from '../device/device-manager.js';
import { VolumeStateStore } from '../state/volume-store.js';
import { canExpand, type NodeServiceDeps } from '../volumes/deps.js';
import type { VolumeHooks } from '../volumes/hooks.js';
import { createNodeControllerService } from '../node-controller/node-controller-server.js';
import { createNodeService } from '../csi-node/node-server.js';

export const TEST_DRIVER = 'pmem-csi.intel.com';
export const TEST_NODE = 'node-1';

export interface TestNodeOptions {
  /** A device manager whose setup() has been called. */
  readonly dm: DeviceManager;
  /** Directory for the socket and the volume records. */
  readonly dir: string;
  readonly runner?: CommandRunner;
  readonly hooks?: VolumeHooks;
  readonly log?: Logger;
  readonly nodeId?: string;
  readonly hasCapability?: (cap: number) => Promise<boolean>;
  /** The node's volume state, init() called (one store per directory); default: a store on `<dir>/volumes`, closed by stop(). */
  readonly state?: VolumeStateStore;
}

export interface TestNode {
  readonly deps: NodeServiceDeps;
  readonly address: string;
  readonly server: grpc.Server;
  stop(): Promise<void>;
}

/** Start the services of one node on `<dir>/csi.sock`; records live in `<dir>/volumes`. */
export async function startTestNode(o: TestNodeOptions): Promise<TestNode> {
  const log = o.log ?? nullLogger;
  const state = o.state ?? new VolumeStateStore({ dir: join(o.dir, 'volumes'), log });
  if (o.state === undefined) await state.init();
  const deps: NodeServiceDeps = {
    driverName: TEST_DRIVER,
    nodeId: o.nodeId ?? TEST_NODE,
    dm: o.dm,
    state,
    runner: o.runner ?? new HostRunner(),
    locks: new KeyedLocks(),
    log,
    version: 'test',
    hooks: o.hooks,
    hasCapability: o.hasCapability,
  };
  const csi = loadCsi().csi.v1;
  const server = new grpc.Server();
  server.addService(
    csi.Identity.service,
    createIdentityService({
      driverName: TEST_DRIVER,
      version: 'test',
      plugin: { role: 'node', canExpand: canExpand(deps) },
      ready: () => true,
      log,
    }),
  );
  server.addService(csi.Node.service, createNodeService(deps));
  server.addService(csi.Controller.service, createNodeControllerService(deps));
  const address = grpcAddress(join(o.dir, 'csi.sock'));
  await bindServer(server, address, grpc.ServerCredentials.createInsecure());
  const stop = async (): Promise<void> => {
    await shutdownServer(server, 1000);
    if (o.state === undefined) await state.close();
  };
  return { deps, address, server, stop };
}

export interface TestClients {
  readonly identity: IdentityClient;
  readonly node: NodeClient;
  readonly controller: ControllerClient;
  close(): void;
}

/** Clients of the three services at `address`. */
export function testClients(address: string): TestClients {
  const csi = loadCsi().csi.v1;
  const creds = grpc.credentials.createInsecure();
  const identity = new csi.Identity(address, creds);
  const node = new csi.Node(address, creds);
  const controller = new csi.Controller(address, creds);
  return { identity, node, controller, close: () => [identity, node, controller].forEach((c) => c.close()) };
}

// The (request, callback) overload: the one TypeScript infers from (see the runtime's unary()).
type Method<Req, Res> = (request: Req, callback: grpc.requestCallback<Res>) => grpc.ClientUnaryCall;

/** One unary call with a generous deadline (loop devices and mkfs are slow on a busy machine). */
export function call<Req, Res>(
  client: grpc.Client,
  method: Method<Req, Res>,
  req: Req,
  timeoutMs = 120_000,
): Promise<Res> {
  return unary(client, method, req, { timeoutMs });
}

type AccessMode = NonNullable<NonNullable<csi.VolumeCapability['access_mode']>['mode']>;

/** A mount capability (fs type "" = the driver's default, ext4). */
export function mountCapability(
  fsType = '',
  flags: string[] = [],
  mode: AccessMode = 'SINGLE_NODE_WRITER',
): csi.VolumeCapability {
  return { access_type: 'mount', mount: { fs_type: fsType, mount_flags: flags }, access_mode: { mode } };
}

/** A raw block capability. */
export function blockCapability(mode: AccessMode = 'SINGLE_NODE_WRITER'): csi.VolumeCapability {
  return { access_type: 'block', block: {}, access_mode: { mode } };
}
