// Node memory under churn (issue 28 item 2: "after 1 h of churn, no drift"): the production node
// driver (the bundle, fake devices, the node's V8 options as its pods run it) takes CreateVolume +
// DeleteVolume pairs on its node-controller port over mutual TLS, minute after minute, from the Go
// load client; after each minute the driver's resident memory (VmRSS, and RssAnon: the part no
// other process shares) is sampled. Prints one line per minute and the drift: the least-squares
// slope of RssAnon over the samples after the warm-up, in MiB per hour, and writes JSON.
//
// Manual only (it runs for an hour):
//   node --conditions=@pmem-csi/source --import tsx e2e/src/bench/churn.ts [--minutes 60] [--concurrency 4]
//        [--warmup-minutes 5] [--out e2e/bench/results/churn.json] [--no-build]
// --no-build uses the bundle and the Go tools as found (the JSON says so).
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { DRIVER_V8_OPTIONS, GiB } from '@pmem-csi/csi';
import { runTool } from '../cluster/processes.js';
import { cpuSeconds, pidOf, rssMiB, runBench } from './procs.js';
import { buildAll, goTls, makeCerts, startNode, type BenchContext } from './setup.js';

const repo = resolve(dirname(new URL(import.meta.url).pathname), '../../..');

export interface ChurnSample {
  readonly minute: number;
  readonly pairs: number;
  readonly errors: number;
  readonly pairsPerSec: number;
  readonly rssMiB: number;
  readonly rssAnonMiB: number;
  readonly cpuSeconds: number;
  readonly load1: number;
}

/** RssAnon of a process, MiB: its private resident memory (heap, stacks, native allocations). */
function rssAnonMiB(pid: number): number {
  const m = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (m?.[1] === undefined) throw new Error(`no RssAnon for pid ${pid}`);
  return Number(m[1]) / 1024;
}

/** Least-squares slope of y over x (per unit of x); 0 for fewer than two points. */
export function slope(points: ReadonlyArray<readonly [number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${flag} must be a positive integer, got ${value}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string' },
      concurrency: { type: 'string' },
      'warmup-minutes': { type: 'string' },
      out: { type: 'string' },
      'no-build': { type: 'boolean', default: false },
    },
  });
  const minutes = positiveInt(values.minutes, 'minutes', 60);
  const concurrency = positiveInt(values.concurrency, 'concurrency', 4);
  const warmup = positiveInt(values['warmup-minutes'], 'warmup-minutes', 5);
  if (warmup >= minutes) throw new Error(`--warmup-minutes (${warmup}) must be below --minutes (${minutes})`);
  const out = resolve(values.out ?? join(repo, 'e2e/bench/results/churn.json'));
  const say = (line: string): void => void process.stdout.write(`${line}\n`);

  const tools = values['no-build']
    ? {
        bench: process.env['PMEM_CSI_PMEM_CSI_BENCH'] ?? '',
        driverMain: join(repo, 'packages/driver/dist/bundle/pmem-csi-driver.mjs'),
      }
    : await buildAll(repo, say);
  if (!existsSync(tools.driverMain))
    throw new Error(`no driver bundle at ${tools.driverMain}: run node tools/bundle.mjs`);
  if (tools.bench === '' || !existsSync(tools.bench))
    throw new Error('--no-build needs PMEM_CSI_PMEM_CSI_BENCH (bash e2e/tools/bootstrap.sh --print-env bench-tools)');

  const dir = await mkdtemp(join(tmpdir(), 'pmem-churn-'));
  try {
    const certs = await makeCerts(join(dir, 'certs'));
    const ctx: BenchContext = {
      repo,
      dir,
      bench: tools.bench,
      driverMain: tools.driverMain,
      certs,
      smoke: false,
      rounds: 1,
      say,
      measure: (_ids, fn) => fn(),
    };
    const node = await startNode(ctx, { name: 'churn-node', deviceMode: 'fake', sizeBytes: 64 * GiB });
    const pid = pidOf(node.proc);
    await waitListening(node.nodeController, 60_000);
    const client = goTls(certs.registry);
    say(`node driver pid ${pid} (${DRIVER_V8_OPTIONS_TEXT}); ${minutes} min of pairs at c=${concurrency}`);
    const samples: ChurnSample[] = [];
    const started = new Date();
    for (let minute = 1; minute <= minutes; minute++) {
      const report = await runBench(
        tools.bench,
        [
          'load',
          '-target',
          node.nodeController,
          ...client,
          '-op',
          'pairs',
          '-c',
          String(concurrency),
          '-duration',
          '60s',
        ],
        3 * 60_000,
      );
      const errors = Object.values((report['errors'] ?? {}) as Record<string, number>).reduce((a, b) => a + b, 0);
      const s: ChurnSample = {
        minute,
        pairs: Number(report['pairs']),
        errors,
        pairsPerSec: Number(report['pairsPerSec']),
        rssMiB: Math.round(rssMiB(pid) * 10) / 10,
        rssAnonMiB: Math.round(rssAnonMiB(pid) * 10) / 10,
        cpuSeconds: cpuSeconds(pid),
        load1: Math.round((loadavg()[0] ?? 0) * 100) / 100,
      };
      samples.push(s);
      if (errors > 0)
        say(`  errors: ${JSON.stringify(report['errors'])} (first: ${String(report['firstError'] ?? '?')})`);
      say(
        `minute ${String(minute).padStart(3)}: ${s.pairs} pairs (${s.pairsPerSec.toFixed(0)}/s, ${errors} errors), RSS ${s.rssMiB} MiB, RssAnon ${s.rssAnonMiB} MiB, load ${s.load1}`,
      );
    }
    const steady = samples.filter((s) => s.minute > warmup);
    const driftAnon = slope(steady.map((s) => [s.minute / 60, s.rssAnonMiB] as const));
    const driftRss = slope(steady.map((s) => [s.minute / 60, s.rssMiB] as const));
    const pairs = samples.reduce((a, s) => a + s.pairs, 0);
    const errors = samples.reduce((a, s) => a + s.errors, 0);
    const first = steady[0];
    const last = samples.at(-1);
    say(
      `drift after the ${warmup}-min warm-up: RssAnon ${driftAnon.toFixed(2)} MiB/h, RSS ${driftRss.toFixed(2)} MiB/h; ` +
        `RSS ${first?.rssMiB} → ${last?.rssMiB} MiB over ${pairs} pairs (${errors} errors)`,
    );
    const result = {
      version: 1,
      startedAt: started.toISOString(),
      minutes,
      warmupMinutes: warmup,
      concurrency,
      built: !values['no-build'],
      git: (await gitHead()).trim(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '' },
      nodeOptions: DRIVER_V8_OPTIONS.node,
      pairs,
      errors,
      driftMiBPerHour: { rssAnon: Math.round(driftAnon * 100) / 100, rss: Math.round(driftRss * 100) / 100 },
      samples,
    };
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
    say(`wrote ${out}`);
    await node.proc.stop();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const DRIVER_V8_OPTIONS_TEXT = DRIVER_V8_OPTIONS.node.join(' ');

/** Wait until `hostPort` accepts a TCP connection (the node-controller serves once the driver started). */
async function waitListening(hostPort: string, timeoutMs: number): Promise<void> {
  const [host, port] = [
    hostPort.slice(0, hostPort.lastIndexOf(':')),
    Number(hostPort.slice(hostPort.lastIndexOf(':') + 1)),
  ];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((done) => {
      const socket = connect({ host, port }, () => {
        socket.destroy();
        done(true);
      });
      socket.once('error', () => done(false));
    });
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(
        `the node driver's node-controller port ${hostPort} did not accept a connection within ${timeoutMs / 1000} s`,
      );
    await sleep(100);
  }
}

async function gitHead(): Promise<string> {
  return (await runTool('git', ['rev-parse', 'HEAD'], { cwd: repo, timeoutMs: 10_000 })).stdout;
}

await main();
