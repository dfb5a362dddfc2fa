// A node driver's Prometheus series (prom-client, on the process registry given to
// startNodeDriver). Registration, capacity and volume gauges are read from the node's status at
// scrape time (one read per scrape); device operations are timed by wrapping the device manager
// (create, delete, erase, resize) and the command runner (mkfs.*); the CSI operations histogram
// (runtime/metrics) times every call of the CSI and node-controller servers. Series (README "Monitoring"):
//   pmem_csi_node_registered{node}                      1 registered with the controller (any replica), 0 not (absent without a registry)
//   pmem_csi_node_registry_replicas{node,state}         controller replicas by state: resolved (all the registry
//                                                       endpoint resolves to), registered (registered with now)
//   pmem_csi_node_registrations_total{node}             successful registrations (re-registrations included)
//   pmem_csi_node_capacity_bytes{node,kind}             kind: total, managed, available, used, maxVolumeSize
//   pmem_csi_node_volumes{node,kind}                    kind: persistent, ephemeral
//   pmem_csi_node_orphaned_devices{node}                devices without a volume record found at start-up (kept, not deleted)
//   pmem_csi_node_device_operation_seconds{node,operation,result}
//       operation: create, delete (first 4 KiB zeroed), erase (whole device zeroed, then removed),
//       resize, mkfs; result: ok, error
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import {
  createProcessRegistry,
  CsiOperationMetrics,
  type CommandRunner,
  type RunOptions,
  type RunResult,
} from '@pmem-csi/runtime';
import type {
  AllocationOptions,
  CreateDeviceRequest,
  DeviceCallOptions,
  DeviceManager,
  PmemDeviceInfo,
} from './device/device-manager.js';
import type { NodeStatus } from './node-driver.js';

export type DeviceOperation = 'create' | 'delete' | 'erase' | 'resize' | 'mkfs';
export const DEVICE_OPERATION_BUCKETS: readonly number[] = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
];
const CAPACITY_KINDS = ['total', 'managed', 'available', 'used', 'maxVolumeSize'] as const;

export class NodeMetrics {
  readonly registry: Registry;
  readonly operations: CsiOperationMetrics;
  readonly deviceOperations: Histogram<'node' | 'operation' | 'result'>;
  readonly orphanedDevices: Gauge<'node'>;
  readonly #node: string;
  #status: ((timeoutMs?: number) => Promise<NodeStatus>) | undefined;
  #snapshot: Promise<NodeStatus> | undefined;

  /** `registry`: the process's (createProcessRegistry); a library user without one gets a private registry. */
  constructor(nodeId: string, registry?: Registry) {
    if (nodeId === '') throw new TypeError('NodeMetrics: nodeId must not be empty');
    this.#node = nodeId;
    this.registry = registry ?? createProcessRegistry({ component: 'node', version: 'library', processMetrics: false });
    const registers = [this.registry];
    const node = { node: nodeId };
    this.operations = new CsiOperationMetrics(this.registry);
    this.deviceOperations = new Histogram({
      name: 'pmem_csi_node_device_operation_seconds',
      help: 'Duration of device operations on this node: create, delete (head zeroed), erase (whole device zeroed), resize, mkfs; by result.',
      labelNames: ['node', 'operation', 'result'] as const,
      buckets: [...DEVICE_OPERATION_BUCKETS],
      registers,
    });
    this.orphanedDevices = new Gauge({
      name: 'pmem_csi_node_orphaned_devices',
      help: 'Devices of this driver without a volume record, found at start-up and left in place (see the node log).',
      labelNames: ['node'] as const,
      registers,
    });
    this.orphanedDevices.set(node, 0);
    const read = (): Promise<NodeStatus> | undefined => this.#read();
    new Gauge({
      name: 'pmem_csi_node_registered',
      help: 'Whether this node is registered with the controller (1) or not (0); absent without a registry.',
      labelNames: ['node'] as const,
      registers,
      async collect() {
        const reg = (await read())?.registration;
        this.reset();
        if (reg !== undefined) this.set(node, reg.registered ? 1 : 0);
      },
    });
    new Gauge({
      name: 'pmem_csi_node_registry_replicas',
      help: 'Controller replicas by state: resolved (addresses the registry endpoint resolves to) and registered (registered with now); absent without a registry.',
      labelNames: ['node', 'state'] as const,
      registers,
      async collect() {
        const reg = (await read())?.registration;
        this.reset();
        if (reg === undefined) return;
        this.set({ ...node, state: 'resolved' }, reg.replicas);
        this.set({ ...node, state: 'registered' }, reg.registeredReplicas);
      },
    });
    new Counter({
      name: 'pmem_csi_node_registrations_total',
      help: 'Successful registrations with the controller (re-registrations included).',
      labelNames: ['node'] as const,
      registers,
      async collect() {
        const reg = (await read())?.registration;
        this.reset();
        if (reg !== undefined) this.inc(node, reg.registrations);
      },
    });
    new Gauge({
      name: 'pmem_csi_node_capacity_bytes',
      help: 'PMEM of this node, by kind (total, managed, available, used = managed - available, maxVolumeSize = largest volume that fits).',
      labelNames: ['node', 'kind'] as const,
      registers,
      async collect() {
        const s = await read();
        if (s === undefined) return;
        const c = { ...s.capacity, used: Math.max(0, s.capacity.managed - s.capacity.available) };
        for (const kind of CAPACITY_KINDS) this.set({ ...node, kind }, c[kind]);
      },
    });
    new Gauge({
      name: 'pmem_csi_node_volumes',
      help: 'Volumes on this node, by kind (persistent, ephemeral).',
      labelNames: ['node', 'kind'] as const,
      registers,
      async collect() {
        const s = await read();
        if (s === undefined) return;
        this.set({ ...node, kind: 'persistent' }, s.volumes.persistent);
        this.set({ ...node, kind: 'ephemeral' }, s.volumes.ephemeral);
      },
    });
  }

  /** Where the gauges read the node's state (startNodeDriver sets it once the node runs). */
  observe(status: (timeoutMs?: number) => Promise<NodeStatus>): void {
    this.#status = status;
    this.#snapshot = undefined;
  }

  /** Time `fn` as one device operation. */
  async time<T>(operation: DeviceOperation, fn: () => Promise<T>): Promise<T> {
    const end = this.deviceOperations.startTimer({ node: this.#node, operation });
    try {
      const result = await fn();
      end({ result: 'ok' });
      return result;
    } catch (e) {
      end({ result: 'error' });
      throw e;
    }
  }

  /** The device manager with its create, delete/erase and resize timed. */
  meterDeviceManager(dm: DeviceManager): DeviceManager {
    return new MeteredDeviceManager(dm, this);
  }

  /** The command runner with mkfs.* timed (every other command passes through untouched). */
  meterRunner(runner: CommandRunner): CommandRunner {
    return {
      run: (command: string, args: readonly string[], options?: RunOptions): Promise<RunResult> =>
        /(^|\/)mkfs\.[a-z0-9]+$/.test(command)
          ? this.time('mkfs', () => runner.run(command, args, options))
          : runner.run(command, args, options),
      which: (tool: string) => runner.which(tool),
    };
  }

  /**
   * The status, read once per scrape: prom-client starts every metric's collect in the same
   * synchronous pass, so the snapshot is dropped in the next microtask. A status that fails
   * (device manager stuck) fails the scrape with its message, like /status.
   */
  #read(): Promise<NodeStatus> | undefined {
    if (this.#status === undefined) return undefined;
    if (this.#snapshot === undefined) {
      this.#snapshot = this.#status(5000);
      queueMicrotask(() => (this.#snapshot = undefined));
    }
    return this.#snapshot;
  }
}

class MeteredDeviceManager implements DeviceManager {
  readonly #dm: DeviceManager;
  readonly #m: NodeMetrics;

  constructor(dm: DeviceManager, metrics: NodeMetrics) {
    this.#dm = dm;
    this.#m = metrics;
  }

  get mode(): DeviceManager['mode'] {
    return this.#dm.mode;
  }

  setup(options?: DeviceCallOptions): Promise<void> {
    return this.#dm.setup(options);
  }

  createDevice(req: CreateDeviceRequest, options?: DeviceCallOptions): Promise<PmemDeviceInfo> {
    return this.#m.time('create', () => this.#dm.createDevice(req, options));
  }

  findDevice(volumeId: string, options?: DeviceCallOptions): Promise<PmemDeviceInfo | undefined> {
    return this.#dm.findDevice(volumeId, options);
  }

  getDevice(volumeId: string, options?: DeviceCallOptions): Promise<PmemDeviceInfo> {
    return this.#dm.getDevice(volumeId, options);
  }

  deleteDevice(volumeId: string, erase: boolean, options?: DeviceCallOptions): Promise<void> {
    return this.#m.time(erase ? 'erase' : 'delete', () => this.#dm.deleteDevice(volumeId, erase, options));
  }

  listDevices(options?: DeviceCallOptions): Promise<PmemDeviceInfo[]> {
    return this.#dm.listDevices(options);
  }

  getCapacity(options?: DeviceCallOptions): ReturnType<DeviceManager['getCapacity']> {
    return this.#dm.getCapacity(options);
  }

  allocationSize(size: number, options?: AllocationOptions): Promise<number> {
    return this.#dm.allocationSize(size, options);
  }

  resizeDevice(volumeId: string, size: number, options?: DeviceCallOptions): Promise<PmemDeviceInfo> {
    return this.#m.time('resize', () => this.#dm.resizeDevice(volumeId, size, options));
  }

  close(): Promise<void> {
    return this.#dm.close();
  }
}
