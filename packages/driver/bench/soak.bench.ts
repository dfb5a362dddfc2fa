// Soak: the controller and three node drivers (fake devices) in this process, driven through the
// controller's CSI socket with CreateVolume + DeleteVolume pairs, round after round. Prints per
// round the throughput, the latency percentiles and the memory after a full GC, then the trend of
// the heap per 1000 operations after the warm-up round — a long-running gRPC server in Node.js
// must not grow with the work it has done.
// Run: node --expose-gc --conditions=@pmem-csi/source --import tsx packages/driver/bench/soak.bench.ts [rounds] [pairs per round] [concurrency]
//      (defaults 8, 1000, 16)
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startController } from '@pmem-csi/controller';
import { startNodeDriver, type NodeDriver } from '@pmem-csi/node';
import { createLogger } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';
import { ControllerCsi, mountCapability } from '../src/local/csi-clients.js';
import { waitUntil } from '../src/local/processes.js';

const ROUNDS = Number(process.argv[2] ?? 8);
const PAIRS = Number(process.argv[3] ?? 1000);
const CONCURRENCY = Number(process.argv[4] ?? 16);
const NODES = 3;
const out = (line: string): void => void process.stdout.write(`${line}\n`);

function fullGc(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run node with --expose-gc (memory figures need a full GC)');
  gc();
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function main(): Promise<void> {
  fullGc();
  const dir = await mkdtemp(join(tmpdir(), 'pmem-soak-'));
  const log = createLogger({ level: 'error' });
  const csiSocket = `unix://${join(dir, 'controller.sock')}`;
  const controller = await startController({
    csiEndpoint: csiSocket,
    registryAddress: '127.0.0.1:0',
    registryCredentials: grpc.ServerCredentials.createInsecure(),
    nodeCredentials: () => grpc.credentials.createInsecure(),
    log,
    settleMs: 200,
  });
  const nodes: NodeDriver[] = [];
  for (let i = 0; i < NODES; i++) {
    nodes.push(
      await startNodeDriver({
        driverName: 'pmem-csi.intel.com',
        nodeId: `soak-${i}`,
        deviceMode: 'fake',
        deviceOptions: { fakeSize: 64 * 1024 * MiB },
        stateDir: join(dir, `node-${i}`),
        csiEndpoint: `unix://${join(dir, `node-${i}.sock`)}`,
        nodeControllerAddress: '127.0.0.1:0',
        registryAddress: `127.0.0.1:${controller.registryPort}`,
        serverCredentials: grpc.ServerCredentials.createInsecure(),
        channelCredentials: grpc.credentials.createInsecure(),
        log,
      }),
    );
  }
  await waitUntil(
    `registration of ${NODES} nodes`,
    () => {
      const s = controller.status();
      return Promise.resolve(
        s.settled && s.nodes.filter((n) => n.state === 'available').length === NODES ? true : undefined,
      );
    },
    30_000,
  );

  const client = new ControllerCsi(csiSocket);
  let serial = 0;
  const pair = async (latencies: number[]): Promise<void> => {
    const name = `soak-${serial++}`;
    const t0 = performance.now();
    const res = await client.createVolume({
      name,
      capacity_range: { required_bytes: String(4 * MiB) },
      volume_capabilities: [mountCapability('ext4')],
    });
    const t1 = performance.now();
    await client.deleteVolume(res.volume?.volume_id ?? '');
    latencies.push(t1 - t0, performance.now() - t1);
  };

  out(
    `soak: controller + ${NODES} fake nodes in one process (Node.js ${process.version}); ${ROUNDS} rounds x ${PAIRS} create+delete pairs, ${CONCURRENCY} in flight`,
  );
  out('round  ops/s  p50 ms  p99 ms  heapUsed MiB  rss MiB  external MiB  volumes left');
  const heaps: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const latencies: number[] = [];
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < PAIRS) {
          next++;
          await pair(latencies);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    fullGc();
    await new Promise((r) => setTimeout(r, 100));
    fullGc();
    const m = process.memoryUsage();
    heaps.push(m.heapUsed);
    latencies.sort((a, b) => a - b);
    const left = controller.status().volumes;
    out(
      `${String(round).padStart(5)}  ${String(Math.round((2 * PAIRS) / seconds)).padStart(5)}  ${percentile(latencies, 50).toFixed(1).padStart(6)}  ${percentile(
        latencies,
        99,
      )
        .toFixed(1)
        .padStart(6)}  ${(m.heapUsed / MiB).toFixed(1).padStart(12)}  ${(m.rss / MiB).toFixed(0).padStart(7)}  ${(
        m.external / MiB
      )
        .toFixed(1)
        .padStart(12)}  ${String(left).padStart(12)}`,
    );
  }
  if (heaps.length >= 3) {
    // Least-squares slope of heapUsed over the rounds after the warm-up round: robust to GC noise.
    const ys = heaps.slice(1);
    const xs = ys.map((_, i) => i);
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
    const my = ys.reduce((a, b) => a + b, 0) / ys.length;
    const slope =
      xs.reduce((a, x, i) => a + (x - mx) * ((ys[i] ?? 0) - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
    const perThousandOps = slope / ((2 * PAIRS) / 1000);
    out(
      `heap trend after the warm-up round (least squares over rounds 2-${heaps.length}): ${(perThousandOps / 1024).toFixed(2)} KiB per 1000 operations` +
        ` (${((slope * (heaps.length - 1)) / MiB).toFixed(2)} MiB over ${(heaps.length - 1) * 2 * PAIRS} operations)`,
    );
  }
  client.close();
  for (const n of nodes) await n.stop();
  await controller.stop();
  await rm(dir, { recursive: true, force: true });
}

main().catch((e: unknown) => {
  process.stderr.write(`soak.bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
