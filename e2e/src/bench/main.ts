// The performance benchmark harness: builds the production driver (tsc -b) and the Go comparison
// tools (bootstrap.sh bench-tools), runs the scenarios with our processes and the Go reference
// alternating, prints one table (figure | Go reference | ours | target | ratio | met? | load) and
// writes the figures, raw measurements, the machine and its load to a JSON file. The full run
// writes the committed e2e/bench/results/bench.json, from which the README's Performance table is
// generated (tools/gen-perf.ts); every other run writes the git-ignored latest.json.
//   npm run bench                      full run (10-20 minutes; B1-B5)
//   npm run bench -- --smoke           the short run (about 3 minutes; CI runs it)
//   npx tsx e2e/src/bench/main.ts --help
// Targets are reported, never asserted: the exit code is 0 when every scenario ran (targets met
// or not), 1 when a scenario failed, 2 on bad flags, 3 when the full run's result was not
// committed because the machine was busy (busy.ts).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runB1 } from './b1-throughput.js';
import { b2Unavailable, runB2 } from './b2-device-path.js';
import { runB3 } from './b3-startup.js';
import { runB4 } from './b4-storm.js';
import { runB5 } from './b5-keygen.js';
import { runB6 } from './b6-soak.js';
import { runTool } from '../cluster/processes.js';
import { assembleResult, benchCommand } from './assemble.js';
import { loadThreshold, waitQuiet } from './busy.js';
import { renderTable } from './figures.js';
import { LoadLog, formatLoad, load1, machineInfo, sampleMachine } from './machine.js';
import {
  COMMITTED_RESULT,
  LATEST_RESULT,
  type BenchResult,
  type GitState,
  type LoadThreshold,
  type ScenarioRecord,
  type ScenarioResult,
} from './result.js';
import { buildAll, makeCerts, type BenchContext } from './setup.js';

export type { BenchResult } from './result.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SCENARIO_IDS = ['B1', 'B2', 'B3', 'B4', 'B5', 'B6'] as const;
type ScenarioId = (typeof SCENARIO_IDS)[number];

export const USAGE = `usage: npx tsx e2e/src/bench/main.ts [--smoke] [--out FILE] [--only B1,B4,...] [--soak] [--keep] [--allow-busy]
  --smoke        short run (~3 minutes): load runs of 2 s, one round, storms of 10 and 100 nodes
  --out FILE     the JSON result (default: ${COMMITTED_RESULT} for the full run, committed;
                 ${LATEST_RESULT} for --smoke and --only runs)
  --only LIST    scenarios to run, comma-separated, of ${SCENARIO_IDS.join(', ')} (default B1-B5)
  --soak         also B6, the long soak (manual only; ~10+ minutes)
  --keep         keep the work directory (logs of every process) instead of removing it
  --allow-busy   commit the full run's result although a scenario started on a busy machine
                 (marked "busy": true; without it such a result goes to ${LATEST_RESULT}, exit code 3)`;

export interface BenchOptions {
  readonly smoke: boolean;
  readonly out: string;
  readonly scenarios: readonly ScenarioId[];
  readonly keep: boolean;
  /** True when `out` is the committed result: the busy guard applies. */
  readonly committed: boolean;
  readonly allowBusy: boolean;
}

/** The committed result and latest.json under the repository `repo`. */
export const resultPaths = (repo: string): { committed: string; latest: string } => ({
  committed: join(repo, COMMITTED_RESULT),
  latest: join(repo, LATEST_RESULT),
});

export function parseBenchArgs(argv: readonly string[], repo = REPO): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      smoke: { type: 'boolean', default: false },
      out: { type: 'string' },
      only: { type: 'string' },
      soak: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      'allow-busy': { type: 'boolean', default: false },
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
  const paths = resultPaths(repo);
  const full = !values.smoke && values.only === undefined;
  const out = resolve(values.out ?? (full ? paths.committed : paths.latest));
  const committed = out === paths.committed;
  if (committed && !full)
    throw new Error(
      `--out: ${COMMITTED_RESULT} is the committed result of the full run (B1-B5); a --smoke or --only run writes elsewhere (default ${LATEST_RESULT})`,
    );
  const allowBusy = values['allow-busy'];
  if (allowBusy && !committed)
    throw new Error(
      `--allow-busy applies to the full run that writes ${COMMITTED_RESULT}; this run writes ${relative(repo, out)}, which is never refused`,
    );
  return { smoke: values.smoke, out, scenarios, keep: values.keep, committed, allowBusy };
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
    `\n${renderTable(result.figures)}\n\nload average (1 min) before -> after: ${loads}; ${result.machine.cpus} CPUs\n`,
  );
  for (const r of records) {
    if (r.skipped !== undefined) process.stdout.write(`${r.scenario} skipped: ${r.skipped}\n`);
    if (r.error !== undefined) process.stdout.write(`${r.scenario} FAILED: ${r.error.split('\n')[0] ?? ''}\n`);
  }
  process.stdout.write(`JSON: ${out} (${result.seconds} s)\n`);
}

/** The commit and the tracked files with uncommitted changes; null outside a git checkout. */
async function gitState(repo: string): Promise<GitState | null> {
  try {
    const git = (args: string[]): Promise<string> =>
      runTool('git', args, { cwd: repo, timeoutMs: 30_000 }).then((r) => r.stdout);
    const commit = (await git(['rev-parse', 'HEAD'])).trim();
    const status = await git(['status', '--porcelain', '--untracked-files=no']);
    return {
      commit,
      dirty: status
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => l.slice(3)),
    };
  } catch {
    return null;
  }
}

/** The JSON as prettier formats it: the committed file passes `npm run check:format`. */
async function formatJson(path: string, value: unknown): Promise<string> {
  const prettier = await import('prettier');
  const config = (await prettier.resolveConfig(path)) ?? {};
  return prettier.format(JSON.stringify(value), { ...config, filepath: path, parser: 'json' });
}

async function runAll(ctx: BenchContext, o: BenchOptions, threshold: LoadThreshold): Promise<ScenarioRecord[]> {
  const records: ScenarioRecord[] = [];
  for (const id of o.scenarios) {
    // Only the committed run waits: its figures must come from a quiet machine.
    if (o.committed) {
      const load = await waitQuiet({ threshold, sample: load1, sleep: (ms) => sleep(ms), say: ctx.say });
      if (load > threshold.value && !o.allowBusy)
        ctx.say(
          `  ${id} starts on a busy machine: this run's result will go to ${LATEST_RESULT}, not ${COMMITTED_RESULT}`,
        );
    }
    records.push(await runScenario(ctx, id));
  }
  return records;
}

async function main(argv: readonly string[]): Promise<number> {
  const o = options(argv);
  if (typeof o === 'number') return o;
  const say = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  const startedAt = new Date();
  const t0 = performance.now();
  const git = await gitState(REPO);
  const machine = machineInfo();
  const threshold = loadThreshold(machine.cpus);
  const { bench, driverMain } = await buildAll(REPO, say);
  const dir = await mkdtemp(join(tmpdir(), 'pmem-csi-bench-'));
  say(`work directory ${dir}; ${o.smoke ? 'smoke' : 'full'} run of ${o.scenarios.join(' ')}`);
  const loads = new LoadLog();
  const ctx: BenchContext = {
    repo: REPO,
    dir,
    bench,
    driverMain,
    certs: await makeCerts(join(dir, 'certs')),
    smoke: o.smoke,
    rounds: o.smoke ? 1 : 3,
    say,
    measure: (ids, fn) => loads.measure(ids, fn),
  };
  let records: ScenarioRecord[];
  try {
    records = await runAll(ctx, o, threshold);
  } finally {
    if (!o.keep) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
  const { result, plan } = assembleResult(
    {
      smoke: o.smoke,
      startedAt: startedAt.toISOString(),
      seconds: Math.round(performance.now() - t0) / 1000,
      command: benchCommand(argv),
      git,
      machine,
      benchTool: bench,
      threshold,
    },
    records,
    loads,
    { repo: REPO, out: o.out, committed: o.committed, allowBusy: o.allowBusy, latest: resultPaths(REPO).latest },
  );
  await mkdir(dirname(plan.path), { recursive: true });
  await writeFile(plan.path, await formatJson(plan.path, result));
  printReport(result, plan.path);
  const failed = records.some((r) => r.error !== undefined);
  if (plan.refusal !== undefined) {
    process.stdout.write(`${plan.refusal}\n`);
    return failed ? 1 : 3;
  }
  if (plan.path === resultPaths(REPO).committed)
    process.stdout.write(
      `commit ${COMMITTED_RESULT}, then \`npm run generate\` renders the README's Performance table from it\n`,
    );
  return failed ? 1 : 0;
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
