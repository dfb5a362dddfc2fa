// B4: registration storm. A swarm of N fake nodes (pmem-csi-bench swarm: each registers over
// mutual TLS, renews at a third of the lease and serves its own node-controller port) against a
// fresh production controller: time until the controller reports all N available (its /status),
// the controller's CPU time until then (a figure a busy machine disturbs less than the wall time:
// the storm is one handshake and one registration per node on one event loop), controller CPU
// during steady renewals, its resident memory, lease expiries, renewal latency,
// and CreateVolume latency and pairs/s through the controller socket with the swarm's nodes.
import { setTimeout as sleep } from 'node:timers/promises';
import { heldLeaseSecondsFor, leasePolicy } from '@pmem-csi/controller';
import type { FigureSpec } from './figures.js';
import { CpuMeter, jsonLines, pidOf, rssMiB, start, tail, waitForEvent } from './procs.js';
import { loadSeconds, runLoad, waitAvailable, waitServing, type LoadRun, type ScenarioResult } from './scenario.js';
import { goTls, startController, type BenchContext, type Controller } from './setup.js';
import { join } from 'node:path';

interface SwarmReport {
  readonly registered: number;
  readonly listed: number;
  readonly allRegisteredMs: number;
  readonly allListedMs: number;
  readonly registerErrors: Record<string, number>;
  readonly renewals: number;
  readonly renewErrors: Record<string, number>;
  readonly expiries: number;
  readonly renewMs: { p50: number; p99: number; max: number };
  readonly maxLeaseSeconds: number;
}

interface StormRun {
  readonly nodes: number;
  readonly leaseSeconds: number;
  readonly availableMs: number;
  /** Controller CPU seconds from the swarm's start until all N were available (printed and in the JSON's details, not a figure). */
  readonly stormCpuS: number;
  readonly renewalCpuPercent: number;
  readonly renewalWindowS: number;
  readonly rssMiB: { available: number; steady: number; afterLoad: number };
  readonly load: LoadRun;
  readonly swarm: SwarmReport;
}

/** Storm sizes of a run. */
export const stormSizes = (ctx: BenchContext): number[] => (ctx.smoke ? [10, 100] : [10, 100, 1000, 5000]);

/** The production lease (30 s) in full runs; 6 s in smoke runs (the maximum lease is 4 × it, so the controller settles in 15 s). */
const leaseOf = (ctx: BenchContext): number => (ctx.smoke ? 6 : 30);

async function storm(ctx: BenchContext, nodes: number, ctl: Controller): Promise<StormRun> {
  const lease = leaseOf(ctx);
  // The storm starts when the controller serves: its start-up time is B3's figure, not this one.
  await waitServing(ctl.proc, ctl.statusUrl, 60_000);
  const stormMeter = new CpuMeter(pidOf(ctl.proc)); // the controller is idle until the swarm dials
  const swarm = start(
    `b4-swarm-${nodes}`,
    ctx.bench,
    [
      'swarm',
      '-registry',
      `127.0.0.1:${ctl.registryPort}`,
      '-nodes',
      String(nodes),
      ...goTls(ctx.certs.nodeController),
      '-prefix',
      `swarm${nodes}`,
      '-duration',
      '20m',
    ],
    join(ctx.dir, `b4-swarm-${nodes}.log`),
  );
  // The load of each figure's phase; expiries and renewal latency are the swarm's whole life.
  const id = (f: string): string => `b4.n${nodes}.${f}`;
  const whole = [id('lease-expiries'), id('renewal-p99-ms')];
  try {
    const ctlPid = pidOf(ctl.proc);
    const registering = await waitForEvent(swarm, 'registering', 120_000);
    const since = Number(registering['atUnixMs']);
    await ctx.measure([...whole, id('all-available-s')], () =>
      waitAvailable(ctl, nodes, { timeoutMs: 10 * 60_000, pollMs: nodes >= 1000 ? 500 : 100 }).catch((e: unknown) => {
        throw new Error(`${(e as Error).message}\nswarm log:\n${tail(swarm.log())}`);
      }),
    );
    const availableMs = Date.now() - since;
    const stormCpuS = stormMeter.read().cpu;
    const rssAvailable = rssMiB(ctlPid);
    // Renewals: without status polling, for one renewal interval of the lease a node's connection holds
    // (a third of it; at least the base lease): every node renews about once in it, and nodes that
    // registered early in the storm, with the shorter lease of a smaller cluster, more often. The
    // settle period may end meanwhile.
    const window = Math.max(lease, Math.ceil(heldLeaseSecondsFor(nodes, leasePolicy({ leaseSeconds: lease })) / 3));
    const meter = new CpuMeter(ctlPid);
    await ctx.measure([id('renewal-cpu-percent'), id('controller-rss-mib')], () => sleep(window * 1000));
    const cpu = meter.read();
    const rssSteady = rssMiB(ctlPid);
    ctx.say(
      `  ${nodes} nodes: all available after ${availableMs} ms (controller CPU ${stormCpuS.toFixed(1)} s); renewals ${((100 * cpu.cpu) / cpu.wall).toFixed(1)} % of a core`,
    );
    const loadIds = [id('create-p50-ms'), id('create-p99-ms'), id('pairs-per-s'), id('controller-rss-mib')];
    const load = await ctx.measure(loadIds, () =>
      runLoad(
        ctx,
        [
          '-target',
          `unix://${ctl.socket}`,
          '-op',
          'pairs',
          '-c',
          '32',
          '-duration',
          `${loadSeconds(ctx)}s`,
          '-wait-ready',
          '300s',
        ],
        { controller: ctlPid },
      ),
    );
    const rssAfterLoad = rssMiB(ctlPid);
    await ctx.measure(whole, () => swarm.stop(30_000));
    const report = jsonLines(swarm.log()).find((l) => l['event'] === 'report') as unknown as SwarmReport | undefined;
    if (report === undefined) throw new Error(`the swarm printed no report:\n${tail(swarm.log())}`);
    return {
      nodes,
      leaseSeconds: lease,
      availableMs,
      stormCpuS,
      renewalCpuPercent: (100 * cpu.cpu) / cpu.wall,
      renewalWindowS: cpu.wall,
      rssMiB: { available: rssAvailable, steady: rssSteady, afterLoad: rssAfterLoad },
      load,
      swarm: report,
    };
  } finally {
    await swarm.stop(30_000);
  }
}

function stormFigures(r: StormRun): FigureSpec[] {
  const n = r.nodes;
  const base = { scenario: 'B4', reference: null } as const;
  const create = r.load.stepsMs['CreateVolume'];
  return [
    {
      ...base,
      id: `b4.n${n}.all-available-s`,
      label: `B4 ${n} nodes: all available`,
      unit: 's',
      ours: r.availableMs / 1000,
      target: { kind: 'max', value: 10 },
    },
    {
      ...base,
      id: `b4.n${n}.lease-expiries`,
      label: `B4 ${n} nodes: lease expiries`,
      unit: '',
      ours: r.swarm.expiries,
      target: { kind: 'max', value: 0 },
    },
    {
      ...base,
      id: `b4.n${n}.renewal-cpu-percent`,
      label: `B4 ${n} nodes: controller CPU, renewals (lease ${r.swarm.maxLeaseSeconds} s)`,
      unit: '%',
      ours: r.renewalCpuPercent,
      // Issue 28 (round 3): ≤ 5 % of a core.
      target: { kind: 'max', value: 5 },
    },
    {
      ...base,
      id: `b4.n${n}.renewal-p99-ms`,
      label: `B4 ${n} nodes: renewal p99`,
      unit: 'ms',
      ours: r.swarm.renewMs.p99,
    },
    {
      ...base,
      id: `b4.n${n}.controller-rss-mib`,
      label: `B4 ${n} nodes: controller RSS`,
      unit: 'MiB',
      ours: Math.max(r.rssMiB.steady, r.rssMiB.afterLoad),
      target: { kind: 'max', value: 250 },
    },
    {
      ...base,
      id: `b4.n${n}.create-p50-ms`,
      label: `B4 ${n} nodes: CreateVolume p50 c=32`,
      unit: 'ms',
      ours: create?.p50 ?? null,
    },
    {
      ...base,
      id: `b4.n${n}.create-p99-ms`,
      label: `B4 ${n} nodes: CreateVolume p99 c=32`,
      unit: 'ms',
      ours: create?.p99 ?? null,
      target: { kind: 'max', value: 20 },
    },
    {
      ...base,
      id: `b4.n${n}.pairs-per-s`,
      label: `B4 ${n} nodes: pairs/s via controller c=32`,
      unit: '/s',
      ours: r.load.ops > 0 ? r.load.opsPerSec : null,
    },
  ];
}

// Every storm's controller is started at the beginning, so that the start-up settle periods
// (1.5 × lease + (max lease − lease) / 3 with max lease = 4 × lease, i.e. 2.5 × lease, during which
// CreateVolume answers UNAVAILABLE; see controller/src/registry/lease-policy.ts settleMsFor) run at the
// same time; each controller is idle until its storm and stopped after it.
export async function runB4(ctx: BenchContext): Promise<ScenarioResult> {
  const sizes = stormSizes(ctx);
  const controllers = new Map<number, Controller>();
  try {
    for (const n of sizes) controllers.set(n, await startController(ctx, `b4-controller-${n}`, leaseOf(ctx)));
    const runs: StormRun[] = [];
    for (const [n, ctl] of controllers) {
      ctx.say(`  storm of ${n} nodes (lease ${leaseOf(ctx)} s)`);
      runs.push(await storm(ctx, n, ctl));
      await ctl.proc.stop();
    }
    return { figures: runs.flatMap(stormFigures), details: { runs } };
  } finally {
    await Promise.all([...controllers.values()].map((c) => c.proc.stop()));
  }
}
