// The bench's JSON result: what a scenario returns, what the run writes, and where. Kept apart
// from the scenarios (which import the driver) so that the README generator (tools/gen-perf.ts,
// readme.ts) reads the committed result with nothing but these types.
import type { Figure, FigureSpec } from './figures.js';
import type { LoadSpan, MachineInfo, MachineSample } from './machine.js';

/** The full run's result, committed: the README's Performance table is generated from it. */
export const COMMITTED_RESULT = 'e2e/bench/results/bench.json';
/** Every other run (smoke, --only, a busy full run that was refused): git-ignored. */
export const LATEST_RESULT = 'e2e/bench/results/latest.json';

export interface ScenarioResult {
  readonly figures: FigureSpec[];
  /** Raw measurements for the JSON file. */
  readonly details: Record<string, unknown>;
}

export interface ScenarioRecord extends ScenarioResult {
  readonly scenario: string;
  readonly seconds: number;
  /** Sampled when the scenario starts (after the wait for a quiet machine, in a committed run). */
  readonly before: MachineSample;
  readonly after: MachineSample;
  /** Why the scenario did not run, or how it failed. */
  readonly skipped?: string;
  readonly error?: string;
}

/** A figure as written: its verdict and the 1-min load average when its measurement started and ended. */
export interface FigureRecord extends Figure {
  readonly load: LoadSpan;
}

/** A scenario that started on a machine busier than the threshold allows. */
export interface BusyScenario {
  readonly scenario: string;
  /** 1-min load average when it started. */
  readonly load: number;
  readonly threshold: number;
  /** Ids of the figures it produced. */
  readonly figures: readonly string[];
}

export interface LoadThreshold {
  /** Busy above this 1-min load average per CPU. */
  readonly perCpu: number;
  readonly cpus: number;
  /** perCpu × cpus. */
  readonly value: number;
}

export interface GitState {
  readonly commit: string;
  /** Tracked files with uncommitted changes when the run started (`git status --porcelain`). */
  readonly dirty: readonly string[];
}

export interface BenchResult {
  readonly version: 2;
  readonly mode: 'smoke' | 'full';
  readonly startedAt: string;
  readonly seconds: number;
  /** The command that reproduces the run, e.g. `npm run bench`. */
  readonly command: string;
  /** null when git could not tell (no repository). */
  readonly git: GitState | null;
  readonly machine: MachineInfo;
  readonly benchTool: string;
  readonly loadThreshold: LoadThreshold;
  /** True when written with --allow-busy although some scenario started above the threshold. */
  readonly busy: boolean;
  readonly busyScenarios: readonly BusyScenario[];
  readonly figures: readonly FigureRecord[];
  readonly scenarios: readonly ScenarioRecord[];
}
