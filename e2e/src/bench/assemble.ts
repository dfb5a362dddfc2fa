// From the scenario records of a run to the JSON result and where it goes: each figure with its
// verdict and load span, the busy scenarios, and the busy guard's decision (busy.ts). Pure, so
// that the guard and the marking are unit-tested without running a benchmark.
import { busyScenarios, planWrite, type WritePlan } from './busy.js';
import { figure } from './figures.js';
import type { LoadLog, MachineInfo } from './machine.js';
import type { BenchResult, FigureRecord, GitState, LoadThreshold, ScenarioRecord } from './result.js';

/** Each figure with its verdict and load span (its scenario's when no measurement recorded one). */
export function figureRecords(records: readonly ScenarioRecord[], loads: Pick<LoadLog, 'spanOf'>): FigureRecord[] {
  return records.flatMap((r) =>
    r.figures.map((spec) => ({
      ...figure(spec),
      load: loads.spanOf(spec.id) ?? { start: r.before.loadavg[0], end: r.after.loadavg[0] },
    })),
  );
}

export interface RunFacts {
  readonly smoke: boolean;
  readonly startedAt: string;
  readonly seconds: number;
  readonly command: string;
  readonly git: GitState | null;
  readonly machine: MachineInfo;
  readonly benchTool: string;
  readonly threshold: LoadThreshold;
}

export interface Destination {
  readonly repo: string;
  readonly out: string;
  readonly committed: boolean;
  readonly allowBusy: boolean;
  readonly latest: string;
}

/** The result (busy when a scenario started above the threshold) and where to write it. */
export function assembleResult(
  facts: RunFacts,
  records: readonly ScenarioRecord[],
  loads: Pick<LoadLog, 'spanOf'>,
  dest: Destination,
): { result: BenchResult; plan: WritePlan } {
  const busy = busyScenarios(records, facts.threshold);
  const result: BenchResult = {
    version: 2,
    mode: facts.smoke ? 'smoke' : 'full',
    startedAt: facts.startedAt,
    seconds: facts.seconds,
    command: facts.command,
    git: facts.git,
    machine: facts.machine,
    benchTool: facts.benchTool,
    loadThreshold: facts.threshold,
    busy: busy.length > 0,
    busyScenarios: busy,
    figures: figureRecords(records, loads),
    scenarios: records,
  };
  return { result, plan: planWrite({ ...dest, busy, threshold: facts.threshold }) };
}

/** The npm command that repeats a run with the same flags. */
export const benchCommand = (argv: readonly string[]): string =>
  ['npm run bench', ...(argv.length > 0 ? ['--', ...argv] : [])].join(' ');
