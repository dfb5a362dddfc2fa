// The controller's Prometheus series (prom-client, on the process registry given to
// startController). The registry gauges are read from the controller's status at scrape time, so
// nothing on the call path updates them; the CSI operations histogram (runtime/metrics) times
// every call of the registry and CSI servers, and the lease expiry counter is bumped by the node
// registry when it finds a lease that ran out. Series (README "Monitoring"):
//   pmem_csi_controller_volumes                               volumes known to the controller
//   pmem_csi_controller_nodes{state}                          nodes by state (available, syncing,
//                                                             unavailable, unregistered; all four always present)
//   pmem_csi_controller_node_available{node}                  1 available, 0 not
//   pmem_csi_controller_node_capacity_bytes{node,kind}        kind: total, managed, available, used, maxVolumeSize
//   pmem_csi_controller_node_volumes{node}                    volumes per node
//   pmem_csi_controller_lease_expiries_total                  registrations whose lease ran out without renewal
import { Counter, Gauge, type Registry } from 'prom-client';
import { createProcessRegistry, CsiOperationMetrics } from '@pmem-csi/runtime';
import type { ControllerStatus } from './controller.js';
import type { NodeState } from './registry/node-view.js';

const NODE_STATES: readonly NodeState[] = ['available', 'syncing', 'unavailable', 'unregistered'];
const CAPACITY_KINDS = ['total', 'managed', 'available', 'used', 'maxVolumeSize'] as const;

/** Bytes in use on a node: what it manages minus what is still free (never negative). */
export function usedBytes(c: { readonly managed: number; readonly available: number }): number {
  return Math.max(0, c.managed - c.available);
}

export class ControllerMetrics {
  readonly registry: Registry;
  readonly operations: CsiOperationMetrics;
  readonly leaseExpiries: Counter;
  #status: (() => ControllerStatus) | undefined;
  #snapshot: ControllerStatus | undefined;

  /** `registry`: the process's (createProcessRegistry); a library user without one gets a private registry. */
  constructor(registry?: Registry) {
    this.registry =
      registry ?? createProcessRegistry({ component: 'controller', version: 'library', processMetrics: false });
    const registers = [this.registry];
    this.operations = new CsiOperationMetrics(this.registry);
    this.leaseExpiries = new Counter({
      name: 'pmem_csi_controller_lease_expiries_total',
      help: 'Node registrations whose lease ran out without renewal (the node became unavailable).',
      registers,
    });
    const read = (): ControllerStatus | undefined => this.#read();
    new Gauge({
      name: 'pmem_csi_controller_volumes',
      help: 'Volumes known to the controller.',
      registers,
      collect() {
        const s = read();
        if (s !== undefined) this.set(s.volumes);
      },
    });
    new Gauge({
      name: 'pmem_csi_controller_nodes',
      help: 'Nodes known to the controller, by state (registered = all but unregistered).',
      labelNames: ['state'] as const,
      registers,
      collect() {
        const s = read();
        if (s === undefined) return;
        const counts = new Map<NodeState, number>(NODE_STATES.map((st) => [st, 0]));
        for (const n of s.nodes) counts.set(n.state, (counts.get(n.state) ?? 0) + 1);
        for (const [state, n] of counts) this.set({ state }, n);
      },
    });
    new Gauge({
      name: 'pmem_csi_controller_node_available',
      help: 'Whether a registered node is available (1) or not (0).',
      labelNames: ['node'] as const,
      registers,
      collect() {
        this.reset();
        for (const n of read()?.nodes ?? []) this.set({ node: n.nodeId }, n.state === 'available' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'pmem_csi_controller_node_capacity_bytes',
      help: 'PMEM of a node as the controller knows it, by kind (total, managed, available, used = managed - available, maxVolumeSize = largest volume that fits).',
      labelNames: ['node', 'kind'] as const,
      registers,
      collect() {
        this.reset();
        for (const n of read()?.nodes ?? []) {
          const c = { ...n.capacity, used: usedBytes(n.capacity) };
          for (const kind of CAPACITY_KINDS) this.set({ node: n.nodeId, kind }, c[kind]);
        }
      },
    });
    new Gauge({
      name: 'pmem_csi_controller_node_volumes',
      help: 'Volumes per node.',
      labelNames: ['node'] as const,
      registers,
      collect() {
        this.reset();
        for (const n of read()?.nodes ?? []) this.set({ node: n.nodeId }, n.volumes);
      },
    });
  }

  /** Where the gauges read the controller's state (startController sets it once its servers run). */
  observe(status: () => ControllerStatus): void {
    this.#status = status;
    this.#snapshot = undefined;
  }

  /**
   * The status, read once per scrape: prom-client starts every metric's collect in the same
   * synchronous pass, so the snapshot is dropped in the next microtask.
   */
  #read(): ControllerStatus | undefined {
    if (this.#status === undefined) return undefined;
    if (this.#snapshot === undefined) {
      this.#snapshot = this.#status();
      queueMicrotask(() => (this.#snapshot = undefined));
    }
    return this.#snapshot;
  }
}
