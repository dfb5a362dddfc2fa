// The busy-machine guard of the committed result. Figures measured while other work shared the
// CPUs are not comparable (the first full run started B1 at a load of 17.7 on 2 CPUs), so the full
// run waits before each scenario for the 1-min load average to fall to the threshold, and when a
// scenario still started above it, refuses to write the committed result (it writes the
// git-ignored latest.json and says why) unless --allow-busy, which commits it marked busy.
// The wait is what lets the bench's own load pass: a scenario keeps both CPUs busy (load 2-5),
// and the 1-min average decays with a time constant of a minute, so right after one scenario the
// next would always look busy; other work does not go away by waiting.
import { relative } from 'node:path';
import type { BusyScenario, LoadThreshold, ScenarioRecord } from './result.js';

/** Busy above 0.75 runnable tasks per CPU (1.5 on the 2-core VM); see e2e/bench/README.md. */
export const LOAD_PER_CPU = 0.75;
/** Longest wait for a quiet machine before a scenario: a load of 5 falls to 1.5 in ~72 s. */
export const QUIET_WAIT_MS = 120_000;
/** The kernel updates the load averages every 5 s. */
export const QUIET_POLL_MS = 5_000;

export function loadThreshold(cpus: number): LoadThreshold {
  return { perCpu: LOAD_PER_CPU, cpus, value: Math.round(LOAD_PER_CPU * cpus * 100) / 100 };
}

export const describeThreshold = (t: LoadThreshold): string => `${t.value} (${t.perCpu} × ${t.cpus} CPUs)`;

/** Scenarios that ran (not skipped) and started above the threshold. */
export function busyScenarios(records: readonly ScenarioRecord[], t: LoadThreshold): BusyScenario[] {
  return records
    .filter((r) => r.skipped === undefined && r.before.loadavg[0] > t.value)
    .map((r) => ({
      scenario: r.scenario,
      load: r.before.loadavg[0],
      threshold: t.value,
      figures: r.figures.map((f) => f.id),
    }));
}

/** One line per busy scenario: which, at what load, above which threshold, and its figures. */
export function describeBusy(busy: readonly BusyScenario[], t: LoadThreshold): string[] {
  return busy.map(
    (b) =>
      `${b.scenario} started at load average (1 min) ${b.load}, above the threshold ${describeThreshold(t)}; ` +
      `its figures: ${b.figures.length === 0 ? 'none' : b.figures.join(', ')}`,
  );
}

export interface WritePlan {
  /** Where the JSON goes (absolute). */
  readonly path: string;
  /** Why the committed result was not written (printed; the exit code is 3). */
  readonly refusal?: string;
}

export interface WriteRequest {
  /** The repository: the refusal names files relative to it. */
  readonly repo: string;
  /** Where the run was asked to write (absolute). */
  readonly out: string;
  /** True when `out` is the committed result (the full run). */
  readonly committed: boolean;
  readonly allowBusy: boolean;
  readonly busy: readonly BusyScenario[];
  readonly threshold: LoadThreshold;
  /** Where a refused committed result goes instead. */
  readonly latest: string;
}

/** Where the result goes: the committed file only when the machine was quiet or --allow-busy. */
export function planWrite(r: WriteRequest): WritePlan {
  if (!r.committed || r.busy.length === 0 || r.allowBusy) return { path: r.out };
  const refusal = [
    `not writing ${relative(r.repo, r.out)}: the machine was busy.`,
    ...describeBusy(r.busy, r.threshold).map((l) => `  ${l}`),
    `The result is in ${relative(r.repo, r.latest)}. Rerun \`npm run bench\` on a quiet machine, or add --allow-busy to commit it marked busy.`,
  ].join('\n');
  return { path: r.latest, refusal };
}

export interface QuietWait {
  readonly threshold: LoadThreshold;
  readonly sample: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly say: (line: string) => void;
  readonly maxMs?: number;
  readonly pollMs?: number;
}

/** Wait until the 1-min load is at most the threshold, up to maxMs; returns the last sample. */
export async function waitQuiet(w: QuietWait): Promise<number> {
  const { maxMs = QUIET_WAIT_MS, pollMs = QUIET_POLL_MS } = w;
  let load = w.sample();
  if (load <= w.threshold.value) return load;
  w.say(`  waiting up to ${maxMs / 1000} s for load ${load} to fall to ${describeThreshold(w.threshold)}`);
  for (let waited = 0; waited < maxMs && load > w.threshold.value; waited += pollMs) {
    await w.sleep(pollMs);
    load = w.sample();
  }
  w.say(load <= w.threshold.value ? `  load ${load}: quiet` : `  load still ${load}: the machine is busy`);
  return load;
}
