// CreateVolume placement CPU at 10 / 100 / 1,000 / 5,000 registered nodes, in this process: the
// controller's CreateVolume path (createVolumeLocked: index lookups, the settle/creation check,
// placement, the index update, the local capacity adjustment) with the node call stubbed out, so
// every microsecond measured is the controller's own work. Prints per node count the CPU per
// CreateVolume and its p50/p99, then placement alone: the first candidate without topology, and
// with requisite + preferred naming every node (what external-provisioner sends for immediate
// binding: the whole list is read).
// Run: node --expose-gc --conditions=@pmem-csi/source --import tsx packages/controller/bench/placement.bench.ts [creates per size]
//      (default 2000)
import { performance } from 'node:perf_hooks';
import { type CallContext, KeyedLocks, nullLogger } from '@pmem-csi/runtime';
import { CapacityRefresher } from '../src/placement/capacity-refresh.js';
import type { ControllerDeps } from '../src/csi/controller-deps.js';
import { createVolumeLocked, planControllerCreate } from '../src/csi/create-volume.js';
import type { NodePort } from '../src/nodes/node-port.js';
import { NodeRegistry } from '../src/registry/node-registry.js';
import { candidates, type PlacementRequest } from '../src/placement/placement.js';
import { type csi, GiB } from '@pmem-csi/csi';
import { SettleClock, VolumeIndex } from '../src/volumes/volume-index.js';

const CREATES = Number(process.argv[2] ?? 2000);
const SIZES = [10, 100, 1000, 5000];
const KEY = 'pmem-csi.intel.com/node';
const out = (line: string): void => void process.stdout.write(`${line}\n`);

/** Node calls answer at once: what remains is the controller's work. */
function stubNodePort(): NodePort {
  const stub = {
    createVolume: (_node: string, req: csi.CreateVolumeRequest) =>
      Promise.resolve({
        volume_id: '',
        capacity_bytes: String(req.capacity_range?.required_bytes ?? 0),
        volume_context: { name: req.name ?? '' },
        content_source: null,
        accessible_topology: [],
      }),
    getCapacity: () => Promise.resolve({ available: 100 * GiB, maxVolumeSize: 100 * GiB }),
  };
  return stub as unknown as NodePort;
}

function deps(nodes: number): ControllerDeps {
  const registry = new NodeRegistry({ leaseSeconds: 3600 });
  const nodePort = stubNodePort();
  for (let i = 0; i < nodes; i++) {
    const nodeId = `node-${String(i).padStart(5, '0')}`;
    const size = (1 + ((i * 7919) % 997)) * GiB;
    const reg = registry.register({
      nodeId,
      endpoint: `10.0.${i >> 8}.${i & 255}:10001`,
      capacity: { maxVolumeSize: size, available: size, managed: size, total: size },
      deviceMode: 'fake',
      version: 'bench',
    });
    registry.markListed(nodeId, reg.registrationId);
  }
  return {
    driverName: 'pmem-csi.intel.com',
    topologyKey: KEY,
    registry,
    index: new VolumeIndex(),
    nodePort,
    capacity: new CapacityRefresher({ registry, nodePort, log: nullLogger }),
    settle: new SettleClock(0),
    defaultVolumeSize: GiB,
    nameLocks: new KeyedLocks(),
    volumeLocks: new KeyedLocks(),
    log: nullLogger,
  };
}

const ctx: CallContext = {
  signal: new AbortController().signal,
  deadline: undefined,
  log: nullLogger,
  method: 'CreateVolume',
  peer: 'in-process',
};
const request = (name: string): csi.CreateVolumeRequest__Output =>
  ({
    name,
    capacity_range: { required_bytes: String(GiB), limit_bytes: '0' },
    volume_capabilities: [
      {
        mount: { fs_type: 'ext4', mount_flags: [], volume_mount_group: '' },
        access_mode: { mode: 'SINGLE_NODE_WRITER' },
        access_type: 'mount',
      },
    ],
    parameters: {},
    secrets: {},
    volume_content_source: null,
    accessibility_requirements: null,
    mutable_parameters: {},
  }) as unknown as csi.CreateVolumeRequest__Output;

function pct(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function measureCreate(d: ControllerDeps, label: string): Promise<string> {
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < CREATES; i++) {
    const plan = planControllerCreate(request(`${label}-${i}`), GiB);
    const t0 = performance.now();
    await createVolumeLocked(d, plan, ctx);
    times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  return `${((cpu.user + cpu.system) / 1000 / CREATES).toFixed(3).padStart(9)}  ${pct(times, 50).toFixed(3).padStart(7)}  ${pct(times, 99).toFixed(3).padStart(7)}`;
}

/** The first candidate, as a CreateVolume that the first node accepts sees it. */
function measurePlacement(d: ControllerDeps, requirements: PlacementRequest['requirements']): string {
  const rounds = Math.max(50, Math.floor(CREATES / 4));
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    candidates({ topologyKey: KEY, requirements, nodes: d.registry, size: GiB }).next();
    times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  return `${((cpu.user + cpu.system) / 1000 / rounds).toFixed(3).padStart(7)}  ${pct(times, 50).toFixed(3).padStart(7)}  ${pct(times, 99).toFixed(3).padStart(7)}`;
}

/** requisite = every node, preferred = the same list rotated by half. */
function everyNode(d: ControllerDeps): PlacementRequest['requirements'] {
  const requisite = d.registry.list().map((n) => ({ segments: { [KEY]: n.nodeId } }));
  const half = requisite.length >> 1;
  return { requisite, preferred: [...requisite.slice(half), ...requisite.slice(0, half)] };
}

async function main(): Promise<void> {
  out(
    `placement: CreateVolume in process with the node call stubbed (Node.js ${process.version}); ${CREATES} creates per node count`,
  );
  out('(cpu = process CPU per operation, the figure that counts on a shared machine; p50/p99 = wall time)');
  out('                 CreateVolume             placement: no topology        all nodes in topology');
  out('nodes  cpu ms/create  p50 ms  p99 ms      cpu ms   p50 ms   p99 ms      cpu ms   p50 ms   p99 ms');
  for (const n of SIZES) {
    const d = deps(n);
    await measureCreate(d, `warm-${n}`);
    const create = await measureCreate(d, `pvc-${n}`);
    out(
      `${String(n).padStart(5)}  ${create}     ${measurePlacement(d, null)}     ${measurePlacement(d, everyNode(d))}`,
    );
    await d.capacity.stop();
  }
}

await main();
