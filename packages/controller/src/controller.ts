// Starts the central controller: the registry server (TCP, mutual TLS in production) that node
// drivers register with, and the CSI Identity + Controller server (unix socket) for
// external-provisioner. Transport security is injected — server credentials and an authorize hook
// for the registry, a credentials factory for node connections — so switching from the insecure
// test credentials to mTLS is a change of arguments, not of this package.
import * as grpc from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { DEFAULT_DRIVER_NAME, topologyKey } from '@pmem-csi/api';
import {
  type AdaptOptions,
  bindServer,
  ConnectionTracker,
  createIdentityService,
  grpcAddress,
  KeyedLocks,
  loadCsi,
  loadRegistry,
  type Logger,
  nullLogger,
  shutdownServer,
} from '@pmem-csi/runtime';
import { type Capacity, DEFAULT_VOLUME_SIZE, DRIVER_VERSION, InvalidArgumentError } from '@pmem-csi/csi';
import { CapacityRefresher } from './placement/capacity-refresh.js';
import type { ControllerDeps } from './csi/controller-deps.js';
import { createControllerService } from './csi/controller-server.js';
import { GrpcNodePort, type NodeCredentialsFactory } from './nodes/grpc-node-port.js';
import type { NodePort } from './nodes/node-port.js';
import { settleMsFor } from './registry/lease-policy.js';
import { NodeRegistry } from './registry/node-registry.js';
import type { NodeState } from './registry/node-view.js';
import { VolumeReconciler } from './volumes/volume-reconciler.js';
import { ControllerMetrics } from './metrics.js';
import { createRegistrationService } from './registration/registration-service.js';
import { SettleClock, VolumeIndex } from './volumes/volume-index.js';

export interface ControllerOptions {
  /** CSI driver name (default pmem-csi.intel.com); also the topology key prefix. */
  readonly driverName?: string;
  readonly vendorVersion?: string;
  /** CSI socket for external-provisioner: "/path/csi.sock", "unix:///path" (or host:port for tests). */
  readonly csiEndpoint: string;
  /** Registry listen address, host:port (port 0 picks a free port, see `registryPort`). */
  readonly registryAddress: string;
  /** Registry server credentials (mTLS in production). */
  readonly registryCredentials: grpc.ServerCredentials;
  /** Listen backlog of the registry port (default REGISTRY_BACKLOG; Linux caps it at net.core.somaxconn). */
  readonly registryBacklog?: number;
  /** Peer check of registry callers (the node-controller certificate's SAN). */
  readonly registryAuthorize?: AdaptOptions['authorize'];
  /** Channel credentials for node-controller connections (mTLS in production); required unless `nodePort` is given. */
  readonly nodeCredentials?: NodeCredentialsFactory;
  readonly nodeChannelOptions?: grpc.ChannelOptions;
  /**
   * The way to the nodes (nodes/node-port.ts). Default: the gRPC adapter with `nodeCredentials`
   * and the node timeouts below; tests may give an InProcessNodePort (which has its own timeouts).
   */
  readonly nodePort?: NodePort;
  readonly log?: Logger;
  /** Registration lease of a small cluster (default 30 s); see registry/lease-policy.ts. */
  readonly leaseSeconds?: number;
  /** Longest lease, granted to big clusters (default 4 × leaseSeconds = 120 s; leaseSeconds = a fixed lease). */
  readonly maxLeaseSeconds?: number;
  /** Renewal rate the lease is sized for (default 150/s). */
  readonly renewalsPerSecond?: number;
  /** Longest lease held by a node's connection (default 20 × leaseSeconds = 600 s); see registry/lease-policy.ts. */
  readonly maxHeldLeaseSeconds?: number;
  /** Renewal rate a lease held by a connection is sized for (default 25/s). */
  readonly heldRenewalsPerSecond?: number;
  /** Start-up settle period (default 1.5 × lease + (max lease − lease) / 3); see volumes/volume-index.ts. */
  readonly settleMs?: number;
  /** Node volume listings at once after registrations (default 16). */
  readonly maxConcurrentListings?: number;
  /** Delay of the background capacity refresh after a create/delete (default 500 ms). */
  readonly capacityRefreshDelayMs?: number;
  /** Close a node connection after this long without calls (default 30 s). */
  readonly nodeIdleMs?: number;
  /** Size when CreateVolume gives neither required nor limit bytes (default 1 GiB). */
  readonly defaultVolumeSize?: number;
  /** Deadline of CreateVolume/DeleteVolume on nodes (default 60 s). */
  readonly mutateTimeoutMs?: number;
  /** Deadline of ListVolumes pages on nodes (default 10 s). */
  readonly queryTimeoutMs?: number;
  /** Entries per ListVolumes page when collecting a node's volumes (default 500). */
  readonly nodeListPageSize?: number;
  /** Clock (tests). */
  readonly now?: () => number;
  /** The process's Prometheus registry (createProcessRegistry); default: a private one (RunningController.metrics). */
  readonly metrics?: Registry;
}

/** A registered node as the controller's /status shows it (the node driver's own: @pmem-csi/node NodeStatus). */
export interface RegisteredNodeStatus {
  readonly nodeId: string;
  readonly endpoint: string;
  readonly state: NodeState;
  readonly reason?: string;
  readonly deviceMode: string;
  readonly version: string;
  readonly capacity: Capacity;
  readonly volumes: number;
  readonly registeredAt: string;
  readonly leaseExpiresAt?: string;
}

export interface ControllerStatus {
  readonly driverName: string;
  readonly startedAt: string;
  /** Whether the start-up settle period has passed. */
  readonly settled: boolean;
  readonly nodes: readonly RegisteredNodeStatus[];
  readonly volumes: number;
}

export interface RunningController {
  /** The bound registry port (useful with port 0). */
  readonly registryPort: number;
  /** The registry with the controller's series (the one given in the options, or its own). */
  readonly metrics: Registry;
  status(): ControllerStatus;
  /** Resolves when no node volume listing or capacity refresh is running or waiting (tests). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

function buildStatus(deps: ControllerDeps, index: VolumeIndex): ControllerStatus {
  const counts = index.countByNode();
  return {
    driverName: deps.driverName,
    startedAt: deps.settle.startedAt.toISOString(),
    settled: deps.settle.settled(),
    volumes: index.size,
    nodes: deps.registry.list().map((n) => ({
      nodeId: n.nodeId,
      endpoint: n.endpoint,
      state: n.state,
      ...(n.reason === undefined ? {} : { reason: n.reason }),
      deviceMode: n.deviceMode,
      version: n.version,
      capacity: n.capacity,
      volumes: counts.get(n.nodeId) ?? 0,
      registeredAt: n.registeredAt.toISOString(),
      ...(n.leaseExpiresAt === undefined ? {} : { leaseExpiresAt: n.leaseExpiresAt.toISOString() }),
    })),
  };
}

function grpcNodePort(opts: ControllerOptions, log: Logger): NodePort {
  if (opts.nodeCredentials === undefined)
    throw new InvalidArgumentError('nodeCredentials is required: give the node-controller credentials, or a nodePort');
  return new GrpcNodePort({
    credentials: opts.nodeCredentials,
    channelOptions: opts.nodeChannelOptions,
    mutateTimeoutMs: opts.mutateTimeoutMs,
    queryTimeoutMs: opts.queryTimeoutMs,
    listPageSize: opts.nodeListPageSize,
    idleMs: opts.nodeIdleMs,
    log,
  });
}

function buildDeps(
  opts: ControllerOptions,
  log: Logger,
  metrics: ControllerMetrics,
  connections: ConnectionTracker,
): ControllerDeps {
  const driverName = opts.driverName ?? DEFAULT_DRIVER_NAME;
  const registry = new NodeRegistry({
    connections,
    leaseSeconds: opts.leaseSeconds,
    maxLeaseSeconds: opts.maxLeaseSeconds,
    renewalsPerSecond: opts.renewalsPerSecond,
    maxHeldLeaseSeconds: opts.maxHeldLeaseSeconds,
    heldRenewalsPerSecond: opts.heldRenewalsPerSecond,
    now: opts.now,
    log,
    onLeaseExpired: () => metrics.leaseExpiries.inc(),
  });
  const settleMs = opts.settleMs ?? settleMsFor(registry.baseLeaseSeconds, registry.maxLeaseSeconds);
  const nodePort = opts.nodePort ?? grpcNodePort(opts, log);
  return {
    driverName,
    topologyKey: topologyKey(driverName),
    registry,
    index: new VolumeIndex(),
    nodePort,
    capacity: new CapacityRefresher({ registry, nodePort, delayMs: opts.capacityRefreshDelayMs, log }),
    settle: new SettleClock(settleMs, opts.now),
    defaultVolumeSize: opts.defaultVolumeSize ?? DEFAULT_VOLUME_SIZE,
    nameLocks: new KeyedLocks(),
    volumeLocks: new KeyedLocks(),
    log,
  };
}

/**
 * The registry's listen backlog: as many connections as the kernel allows (net.core.somaxconn, 4096 by
 * default since Linux 5.4; Go's listeners take the same). After a controller start every node dials at
 * once; with Node's default of 511 the queue stayed full for seconds of a 5,000-node storm and the
 * nodes whose half-open connections the kernel pruned got a reset for their ClientHello and retried.
 */
export const REGISTRY_BACKLOG = 65_535;

/** Start the registry and CSI servers; resolves once both listen. */
export async function startController(opts: ControllerOptions): Promise<RunningController> {
  const log = (opts.log ?? nullLogger).child({ component: 'controller' });
  const metrics = new ControllerMetrics(opts.metrics);
  // The registry's connections: a node's lease is held by the connection it registered over (registry/lease-policy.ts).
  const connections = new ConnectionTracker();
  const deps = buildDeps(opts, log, metrics, connections);
  const reconciler = new VolumeReconciler({
    registry: deps.registry,
    index: deps.index,
    nodePort: deps.nodePort,
    log,
    maxConcurrentListings: opts.maxConcurrentListings,
  });
  let ready = false;

  // Channelz off (GRPC_OPTIONS): grpc-js would otherwise track every call and every one of the nodes' connections.
  // Every call is timed (csi_plugin_operations_seconds).
  const registryServer = metrics.operations.createServer(deps.driverName);
  registryServer.addService(
    loadRegistry().pmemcsi.registry.v1.Registry.service,
    createRegistrationService({ registry: deps.registry, reconciler, log, authorize: opts.registryAuthorize }),
  );
  const csiServer = metrics.operations.createServer(deps.driverName);
  const identity = createIdentityService({
    driverName: deps.driverName,
    version: opts.vendorVersion ?? DRIVER_VERSION,
    plugin: { role: 'controller' },
    // Not ready until the start-up settle period has passed: before it, CreateVolume cannot prove that a name
    // is absent (volumes/volume-index.ts) and answers UNAVAILABLE. external-provisioner probes until ready before it
    // joins leader election, so a replica that restarted (its sidecar restarts with it, under the same identity)
    // does not take the Lease back and stall provisioning for the settle period while a settled standby waits.
    ready: () => ready && deps.settle.settled(),
    log,
  });
  csiServer.addService(loadCsi().csi.v1.Identity.service, identity);
  csiServer.addService(loadCsi().csi.v1.Controller.service, createControllerService(deps, log));

  const registryBacklog = opts.registryBacklog ?? REGISTRY_BACKLOG;
  const registryPort = await bindServer(registryServer, opts.registryAddress, opts.registryCredentials, {
    backlog: registryBacklog,
    log,
    connections,
  });
  try {
    await bindServer(csiServer, grpcAddress(opts.csiEndpoint), grpc.ServerCredentials.createInsecure());
  } catch (err) {
    await shutdownServer(registryServer, 0);
    throw err;
  }
  const sweeper = setInterval(() => deps.registry.sweep(), Math.max(100, (deps.registry.baseLeaseSeconds * 1000) / 3));
  sweeper.unref();
  ready = true;
  log.info('controller started', {
    driver: deps.driverName,
    csiEndpoint: opts.csiEndpoint,
    registryPort,
    registryBacklog,
    leaseSeconds: deps.registry.baseLeaseSeconds,
    maxLeaseSeconds: deps.registry.maxLeaseSeconds,
    maxHeldLeaseSeconds: deps.registry.maxHeldLeaseSeconds,
    settleMs: deps.settle.settleMs,
  });

  metrics.observe(() => buildStatus(deps, deps.index));
  return {
    registryPort,
    metrics: metrics.registry,
    status: () => buildStatus(deps, deps.index),
    idle: async () => {
      await reconciler.idle();
      await deps.capacity.idle();
    },
    stop: async () => {
      ready = false;
      clearInterval(sweeper);
      await shutdownServer(registryServer, 2000);
      await reconciler.stop();
      await shutdownServer(csiServer, 5000);
      await deps.capacity.stop();
      deps.nodePort.closeAll();
      log.info('controller stopped');
    },
  };
}
