// The performance benchmark harness: builds the production driver (tsc -b) and the Go comparison
// tools (bootstrap.sh bench-tools), runs the scenarios with our processes and the Go reference
// alternating, prints one table (figure | Go reference | ours | target | ratio | met?) and
// writes the figures, raw measurements and the machine's load to a JSON file.
//   npm run bench                      full run (10-20 minutes; B1-B5)
//   npm run bench -- --smoke           the short run (about 3 minutes; CI runs it)
//   npx tsx e2e/src/bench/main.ts --help
// Targets are reported, never asserted: the exit code is 0 when every scenario ran (targets met
// or not), 1 when a scenario failed, 2 on bad flags.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runB1 } from './b1-throughput.js';
import { b2Unavailable, runB2 } from './b2-device-path.js';
import { runB3 } from './b3-startup.js';
import { runB4 } from './b4-storm.js';
import { runB5 } from './b5-keygen.js';
import { runB6 } from './b6-soak.js';
import { figure, renderTable, type Figure } from './figures.js';
import { formatLoad, sampleMachine } from './machine.js';
import type { ScenarioRecord, ScenarioResult } from './scenario.js';
import { buildAll, makeCerts, type BenchContext } from './setup.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DEFAULT_OUT = join(REPO, 'e2e/bench/results/latest.json');
const SCENARIO_IDS = ['B1', 'B2', 'B3', 'B4', 'B5', 'B6'] as const;
type ScenarioId = (typeof SCENARIO_IDS)[number];

export const USAGE = `usage: npx tsx e2e/src/bench/main.ts [--smoke] [--out FILE] [--only B1,B4,...] [--soak] [--keep]
  --smoke        short run (~3 minutes): load runs of 2 s, one round, storms of 10 and 100 nodes
  --out FILE     the JSON result (default e2e/bench/results/latest.json)
  --only LIST    scenarios to run, comma-separated, of ${SCENARIO_IDS.join(', ')} (default B1-B5)
  --soak         also B6, the long soak (manual only; ~10+ minutes)
  --keep         keep the work directory (logs of every process) instead of removing it`;

export interface BenchOptions {
  readonly smoke: boolean;
  readonly out: string;
  readonly scenarios: readonly ScenarioId[];
  readonly keep: boolean;
}

export function parseBenchArgs(argv: readonly string[]): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      smoke: { type: 'boolean', default: false },
      out: { type: 'string' },
      only: { type: 'string' },
      soak: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  let scenarios: ScenarioId[] = ['B1', 'B2', 'B3', 'B4', 'B5'];
  if (values.only !== undefined) {
    const asked = values.only.split(',').map((s) => s.trim().toUpperCase());
    const bad = asked.filter((s) => !(SCENARIO_IDS as readonly string[]).includes(s));
    if (bad.length > 0 || asked.length === 0)
      throw new Error(`--only: "${values.only}" must list some of ${SCENARIO_IDS.join(', ')}`);
    scenarios = asked as ScenarioId[];
  }
  if (values.soak && !scenarios.includes('B6')) scenarios.push('B6');
  if (values.out === '') throw new Error('--out must name a file');
  return { smoke: values.smoke, out: resolve(values.out ?? DEFAULT_OUT), scenarios, keep: values.keep };
}

interface Scenario {
  readonly title: string;
  readonly run: (ctx: BenchContext) => Promise<ScenarioResult>;
  /** Why it cannot run on this machine (printed, and recorded as skipped). */
  readonly unavailable?: () => string | undefined;
  readonly timeoutMinutes: number;
}

const SCENARIOS: Record<ScenarioId, Scenario> = {
  B1: { title: 'throughput: single hop, end to end, GetPluginInfo (ours vs Go)', run: runB1, timeoutMinutes: 20 },
  B2: {
    title: 'emulated device path (ours vs shell script)',
    run: runB2,
    unavailable: b2Unavailable,
    timeoutMinutes: 20,
  },
  B3: { title: 'start -> first Probe (ours vs Go)', run: runB3, timeoutMinutes: 10 },
  B4: { title: 'registration storm', run: runB4, timeoutMinutes: 40 },
  B5: { title: 'certificate generation and event-loop stall', run: runB5, timeoutMinutes: 20 },
  B6: { title: 'long soak (manual)', run: runB6, timeoutMinutes: 70 },
};

function withTimeout<T>(p: Promise<T>, minutes: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${minutes} minutes`)), minutes * 60_000);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

async function runScenario(ctx: BenchContext, id: ScenarioId): Promise<ScenarioRecord> {
  const s = SCENARIOS[id];
  const before = sampleMachine();
  const t0 = performance.now();
  const done = (r: ScenarioResult, extra: { skipped?: string; error?: string } = {}): ScenarioRecord => {
    const after = sampleMachine();
    ctx.say(
      `${id} done in ${((performance.now() - t0) / 1000).toFixed(1)} s; before: ${formatLoad(before)}; after: ${formatLoad(after)}`,
    );
    return { scenario: id, ...r, ...extra, seconds: Math.round(performance.now() - t0) / 1000, before, after };
  };
  const why = s.unavailable?.();
  if (why !== undefined) {
    ctx.say(`${id} skipped: ${why}`);
    return done({ figures: [], details: {} }, { skipped: why });
  }
  ctx.say(`${id}: ${s.title} (${formatLoad(before)})`);
  try {
    return done(await withTimeout(s.run(ctx), s.timeoutMinutes, id));
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    ctx.say(`${id} FAILED: ${error}`);
    return done({ figures: [], details: {} }, { error });
  }
}

export interface BenchResult {
  readonly version: 1;
  readonly mode: 'smoke' | 'full';
  readonly startedAt: string;
  readonly seconds: number;
  readonly node: string;
  readonly benchTool: string;
  readonly figures: readonly Figure[];
  readonly scenarios: readonly ScenarioRecord[];
}

function options(argv: readonly string[]): BenchOptions | number {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    return parseBenchArgs(argv);
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
}

function printReport(result: BenchResult, out: string): void {
  const records = result.scenarios;
  const loads = records.map((r) => `${r.scenario}: ${r.before.loadavg[0]} -> ${r.after.loadavg[0]}`).join(', ');
  process.stdout.write(
    `\n${renderTable(result.figures)}\n\nload average (1 min) before -> after: ${loads}; ${records[0]?.before.cpus ?? '?'} CPUs\n`,
  );
  for (const r of records) {
    if (r.skipped !== undefined) process.stdout.write(`${r.scenario} skipped: ${r.skipped}\n`);
    if (r.error !== undefined) process.stdout.write(`${r.scenario} FAILED: ${r.error.split('\n')[0] ?? ''}\n`);
  }
  process.stdout.write(`JSON: ${out} (${result.seconds} s)\n`);
}

async function main(argv: readonly string[]): Promise<number> {
  const o = options(argv);
  if (typeof o === 'number') return o;
  const say = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  const startedAt = new Date();
  const t0 = performance.now();
  const { bench, driverMain } = await buildAll(REPO, say);
  const dir = await mkdtemp(join(tmpdir(), 'pmem-csi-bench-'));
  say(`work directory ${dir}; ${o.smoke ? 'smoke' : 'full'} run of ${o.scenarios.join(' ')}`);
  const ctx: BenchContext = {
    repo: REPO,
    dir,
    bench,
    driverMain,
    certs: await makeCerts(join(dir, 'certs')),
    smoke: o.smoke,
    rounds: o.smoke ? 1 : 3,
    say,
  };
  const records: ScenarioRecord[] = [];
  try {
    for (const id of o.scenarios) records.push(await runScenario(ctx, id));
  } finally {
    if (!o.keep) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
  const result: BenchResult = {
    version: 1,
    mode: o.smoke ? 'smoke' : 'full',
    startedAt: startedAt.toISOString(),
    seconds: Math.round(performance.now() - t0) / 1000,
    node: process.version,
    benchTool: bench,
    figures: records.flatMap((r) => r.figures.map(figure)),
    scenarios: records,
  };
  await mkdir(dirname(o.out), { recursive: true });
  await writeFile(o.out, `${JSON.stringify(result, null, 2)}\n`);
  printReport(result, o.out);
  return records.some((r) => r.error !== undefined) ? 1 : 0;
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
