// Start-up wiring of the node driver: check the host (tools; /sys writable in direct mode), set up
// the device manager, reconcile the volume records against the devices (records without a device
// are dropped, orphaned devices logged and kept), then serve the CSI Identity+Node services on the
// kubelet's unix socket (Probe ready from then on), the node-controller service on TCP (mutual
// TLS; credentials and peer check injected), and finally register with the controller — with
// every replica its registry endpoint resolves to (registration/registrar-set.ts), pushing the
// volume inventory to all of them after each create, delete and expansion. stop() undoes it in
// reverse.
import * as grpc from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { PMEM_DEVICE_MODES, type CxlRegionPolicy, type VolumeDeviceMode } from '@pmem-csi/api';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  bindServer,
  createIdentityService,
  grpcAddress,
  HostRunner,
  KeyedLocks,
  loadCsi,
  requireTools,
  shutdownServer,
  unixSocketPath,
  type CommandRunner,
  type ControllerHandlers,
  type Logger,
} from '@pmem-csi/runtime';
import { canExpand, type NodeServiceDeps } from './volumes/deps.js';
import type { VolumeHooks } from './volumes/hooks.js';
import { volumeInventory } from './node-controller/controller-list.js';
import { createNodeControllerService } from './node-controller/node-controller-server.js';
import { createNodeService } from './csi-node/node-server.js';
import { DRIVER_VERSION, nodeTools, splitHostPortList, type Capacity } from '@pmem-csi/csi';
import type { DeviceManager } from './device/device-manager.js';
import { createDeviceManager } from './device/factory.js';
import { NodeMetrics } from './metrics.js';
import { CAP_SYS_RESOURCE, hasCapability } from './mount/process-caps.js';
import type { RegistrarOptions } from './registration/registrar.js';
import { RegistrarSet, type RegistrarSetOptions, type RegistrarSetStatus } from './registration/registrar-set.js';
import type { RegistryResolver } from './registration/resolver.js';
import { reconcile, type ReconcileResult } from './state/reconcile.js';
import { VolumeStateStore } from './state/volume-store.js';

export interface NodeDriverOptions {
  readonly driverName: string;
  readonly nodeId: string;
  /** A ready-made device manager (setup() not yet called); otherwise one is made for `deviceMode`. */
  readonly deviceManager?: DeviceManager;
  readonly deviceMode?: VolumeDeviceMode;
  /** Settings for createDeviceManager: lvm pmemPercentage (0 = 100), emulated/fake pool sizes. */
  readonly deviceOptions?: {
    readonly pmemPercentage?: number;
    readonly emulatedSize?: number;
    readonly fakeSize?: number;
  };
  /**
   * lvm and direct mode: what to do at start-up with CXL persistent capacity that no region maps
   * (device/cxl-startup.ts): `manual` (default) reports it, `assemble` makes one pmem region per device.
   */
  readonly cxlRegions?: CxlRegionPolicy;
  /** Defaults to the host runner. */
  readonly runner?: CommandRunner;
  /** /var/lib/<driver>: volume records in `volumes/`, emulated backing files in `emulated/`. */
  readonly stateDir: string;
  /** The kubelet's plugin socket, e.g. unix:///var/lib/kubelet/plugins/<driver>/csi.sock. */
  readonly csiEndpoint: string;
  /** host:port to listen on for the node-controller service (port 0 = any). */
  readonly nodeControllerAddress: string;
  /** host:port the controller dials (registered); defaults to nodeControllerAddress with the bound port. */
  readonly advertisedEndpoint?: string;
  /**
   * host:port of the controller's registry, or several, comma-separated; each host is resolved to
   * all its addresses and the node registers with every one (every controller replica). Omit to
   * run without registration.
   */
  readonly registryAddress?: string;
  /** How registry host names are resolved (default: the system resolver). */
  readonly registryResolver?: RegistryResolver;
  readonly serverCredentials: grpc.ServerCredentials;
  readonly channelCredentials: grpc.ChannelCredentials;
  readonly registryChannelOptions?: grpc.ChannelOptions;
  /** Peer check of the node-controller service (the controller's certificate). */
  readonly authorize?: (call: grpc.ServerUnaryCall<unknown, unknown>) => void;
  readonly log: Logger;
  readonly version?: string;
  /** Registrar tuning (tests): deadlines, backoff. */
  readonly registrarTuning?: Pick<RegistrarOptions, 'callTimeoutMs' | 'backoff' | 'random' | 'defaultLeaseSeconds'> &
    Pick<RegistrarSetOptions, 'resolveIntervalMs' | 'minResolveIntervalMs'>;
  /** Direct-mode /sys check (default: checkSysWritable from device/direct.ts). */
  readonly checkSys?: () => Promise<void>;
  /** Test-only observation points of volume creation/deletion. */
  readonly hooks?: VolumeHooks;
  /** The process's Prometheus registry (createProcessRegistry); default: a private one (NodeDriver.metrics). */
  readonly metrics?: Registry;
}

/** What a node reports on its status endpoint (no secrets). */
export interface NodeStatus {
  readonly nodeId: string;
  readonly deviceMode: VolumeDeviceMode;
  readonly version: string;
  /** undefined when the node runs without a registry; registered with N (registeredReplicas) of M (replicas). */
  readonly registration?: RegistrarSetStatus;
  readonly capacity: Capacity;
  /** Volume records: persistent volumes and ephemeral inline volumes. */
  readonly volumes: { readonly persistent: number; readonly ephemeral: number };
}

export interface NodeDriver {
  /** Current status: registration, capacity and volumes (reads the device manager; bounded by `timeoutMs`). */
  status(timeoutMs?: number): Promise<NodeStatus>;
  /** The bound TCP port of the node-controller service. */
  readonly nodeControllerPort: number;
  readonly deviceManager: DeviceManager;
  readonly reconciled: ReconcileResult;
  readonly registrar: RegistrarSet | undefined;
  /** The registry with the node's series (the one given in the options, or its own). */
  readonly metrics: Registry;
  stop(): Promise<void>;
}

/** Check the host and create the device manager (setup() not yet called). */
async function openDeviceManager(o: NodeDriverOptions, runner: CommandRunner, log: Logger): Promise<DeviceManager> {
  const mode = o.deviceManager?.mode ?? o.deviceMode;
  if (mode === undefined) throw new TypeError('startNodeDriver: give deviceManager or deviceMode');
  requireTools(runner, nodeTools(mode), `the node driver in ${mode} device mode`);
  if (mode === 'direct') await (o.checkSys ?? (async () => (await import('./device/direct.js')).checkSysWritable()))();
  if (o.deviceManager !== undefined) return o.deviceManager;
  return createDeviceManager(mode, {
    ...o.deviceOptions,
    runner,
    log,
    stateDir: o.stateDir,
    pmemPercentage: o.deviceOptions?.pmemPercentage ?? 0,
    driverName: o.driverName, // lvm and direct mode mark their PMEM as this driver's (device/ownership.ts)
  });
}

/** Start the node driver; rejects with a message naming the problem when the host is not fit. */
export async function startNodeDriver(o: NodeDriverOptions): Promise<NodeDriver> {
  const log = o.log.child({ node: o.nodeId });
  const metrics = new NodeMetrics(o.nodeId, o.metrics);
  const runner = metrics.meterRunner(o.runner ?? new HostRunner()); // mkfs timed
  const dm = metrics.meterDeviceManager(await openDeviceManager(o, runner, log)); // create, delete, erase, resize timed
  const cleanup: Array<() => Promise<void>> = [() => dm.close()];
  try {
    if ((PMEM_DEVICE_MODES as readonly string[]).includes(dm.mode)) {
      // Loaded only in lvm and direct mode (like the device managers' own code, factory.ts).
      const { prepareCxlRegions } = await import('./device/cxl-startup.js');
      await prepareCxlRegions({ runner, log }, o.cxlRegions ?? 'manual');
    }
    await dm.setup();
    const state = new VolumeStateStore({ dir: join(o.stateDir, 'volumes'), log });
    await state.init();
    cleanup.unshift(() => state.close()); // after the servers stopped, before the device manager
    const reconciled = await reconcile(state, dm, log);
    metrics.orphanedDevices.set({ node: o.nodeId }, reconciled.orphans.length);
    const version = o.version ?? DRIVER_VERSION;
    const deps: NodeServiceDeps = {
      driverName: o.driverName,
      nodeId: o.nodeId,
      dm,
      state,
      runner,
      locks: new KeyedLocks(),
      log,
      version,
      hooks: o.hooks,
    };
    let ready = false;
    const csiServer = await serveCsi(o, deps, () => ready, metrics);
    cleanup.unshift(() => shutdownServer(csiServer, 2000));
    // Probe's ready (CSI spec: "ready to service calls to its Controller and/or Node services") is
    // the Node service on this socket, the one the CO calls here. The node-controller server and
    // registration serve the pmem-csi controller, not the CO: they start next, and if either fails
    // the start still fails (startNodeDriver rejects, the CSI server is shut down on the way).
    ready = true;
    // The registrar starts once the port is known; volume changes before that are in its first registration.
    const pushTo: { registrar?: RegistrarSet } = {};
    const { server: ncServer, port } = await serveNodeController(o, deps, metrics, () =>
      pushTo.registrar?.pushInventory(),
    );
    cleanup.unshift(() => shutdownServer(ncServer, 2000));
    const registrar = startRegistrar(o, deps, port);
    pushTo.registrar = registrar;
    if (registrar !== undefined) cleanup.unshift(() => registrar.stop());
    await warnAboutCapabilities(deps);
    log.info('node driver started', {
      deviceMode: dm.mode,
      csiEndpoint: o.csiEndpoint,
      nodeControllerPort: port,
      registry: o.registryAddress ?? 'none',
    });
    const status = async (timeoutMs = 10_000): Promise<NodeStatus> => {
      const [capacity, records] = await Promise.all([
        dm.getCapacity({ signal: AbortSignal.timeout(timeoutMs) }),
        state.list(),
      ]);
      const ephemeral = records.filter((r) => r.ephemeral === true).length;
      return {
        nodeId: o.nodeId,
        deviceMode: dm.mode,
        version,
        ...(registrar ? { registration: registrar.status } : {}),
        capacity,
        volumes: { persistent: records.length - ephemeral, ephemeral },
      };
    };
    metrics.observe(status);
    return {
      status,
      nodeControllerPort: port,
      deviceManager: dm,
      reconciled,
      registrar,
      metrics: metrics.registry,
      stop: () => runAll(cleanup, log),
    };
  } catch (e) {
    await runAll(cleanup, log);
    throw e;
  }
}

/** Online ext4 growth needs CAP_SYS_RESOURCE; say so at start-up rather than at the first expansion. */
async function warnAboutCapabilities(deps: NodeServiceDeps): Promise<void> {
  if (deps.dm.mode === 'fake' || !canExpand(deps) || (await hasCapability(CAP_SYS_RESOURCE))) return;
  deps.log.warn(
    'CAP_SYS_RESOURCE is missing: mounted ext4 volumes cannot be expanded (xfs can); run the node driver privileged',
  );
}

async function runAll(steps: ReadonlyArray<() => Promise<void>>, log: Logger): Promise<void> {
  for (const step of steps) {
    try {
      await step();
    } catch (e) {
      log.warn('shutdown step failed', { error: e });
    }
  }
}

async function serveCsi(
  o: NodeDriverOptions,
  deps: NodeServiceDeps,
  ready: () => boolean,
  metrics: NodeMetrics,
): Promise<grpc.Server> {
  const address = grpcAddress(o.csiEndpoint);
  const socket = unixSocketPath(address);
  if (socket !== undefined) await mkdir(dirname(socket), { recursive: true, mode: 0o750 });
  const csi = loadCsi().csi.v1;
  const server = metrics.operations.createServer(o.driverName);
  server.addService(
    csi.Identity.service,
    createIdentityService({
      driverName: o.driverName,
      version: deps.version ?? DRIVER_VERSION,
      plugin: { role: 'node', canExpand: canExpand(deps) },
      ready,
      log: deps.log,
    }),
  );
  server.addService(csi.Node.service, createNodeService(deps));
  // The kubelet connects over the local socket without TLS; file permissions protect it.
  await bindServer(server, address, grpc.ServerCredentials.createInsecure());
  return server;
}

/**
 * The node-controller handlers, calling `changed` when a create, delete or expansion ends (also
 * a failed one: it may have changed something before failing), before the answer goes out.
 */
function notifyVolumeChanges(handlers: ControllerHandlers, changed: () => void): ControllerHandlers {
  const wrap =
    <Req, Res>(handler: grpc.handleUnaryCall<Req, Res>): grpc.handleUnaryCall<Req, Res> =>
    (call, callback) =>
      handler(call, (error, value, trailer, flags) => {
        changed();
        callback(error, value, trailer, flags);
      });
  return {
    ...handlers,
    CreateVolume: wrap(handlers.CreateVolume),
    DeleteVolume: wrap(handlers.DeleteVolume),
    ControllerExpandVolume: wrap(handlers.ControllerExpandVolume),
  };
}

async function serveNodeController(
  o: NodeDriverOptions,
  deps: NodeServiceDeps,
  metrics: NodeMetrics,
  volumesChanged: () => void,
): Promise<{ server: grpc.Server; port: number }> {
  const server = metrics.operations.createServer(o.driverName);
  server.addService(
    loadCsi().csi.v1.Controller.service,
    notifyVolumeChanges(createNodeControllerService(deps, { authorize: o.authorize }), volumesChanged),
  );
  const port = await bindServer(server, grpcAddress(o.nodeControllerAddress), o.serverCredentials);
  return { server, port };
}

function startRegistrar(o: NodeDriverOptions, deps: NodeServiceDeps, port: number): RegistrarSet | undefined {
  if (o.registryAddress === undefined) return undefined;
  const endpoint = o.advertisedEndpoint ?? o.nodeControllerAddress.replace(/:\d+$/, `:${port}`);
  const registrar = new RegistrarSet({
    registryEndpoints: splitHostPortList(o.registryAddress),
    ...(o.registryResolver === undefined ? {} : { resolver: o.registryResolver }),
    credentials: o.channelCredentials,
    channelOptions: o.registryChannelOptions,
    nodeId: o.nodeId,
    endpoint,
    deviceMode: deps.dm.mode,
    version: deps.version ?? DRIVER_VERSION,
    capacity: (signal) => deps.dm.getCapacity({ signal }),
    volumes: () => volumeInventory(deps),
    log: deps.log,
    ...o.registrarTuning,
  });
  registrar.start();
  return registrar;
}
