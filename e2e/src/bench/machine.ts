// The machine a run measured: what it is (CPU, memory, kernel, Node.js), and its load — the
// 1/5/15-min load averages before and after each scenario, and the 1-min load when each figure's
// measurement started and ended. Figures of a busy machine (other work on the same 2 cores) are
// noisier; the JSON, the printed table and the README keep the load beside them.
import { cpus, loadavg, release, totalmem } from 'node:os';

export interface MachineSample {
  readonly at: string;
  /** 1, 5 and 15 minute load averages. */
  readonly loadavg: readonly [number, number, number];
  readonly cpus: number;
}

export interface MachineInfo {
  readonly cpuModel: string;
  readonly cpus: number;
  readonly memoryMiB: number;
  /** process.version of the bench (the driver runs on the same pinned Node.js). */
  readonly node: string;
  /** os.release(), e.g. 6.1.0-28-amd64. */
  readonly kernel: string;
}

/** The 1-min load average when a figure's measurement started and when it ended. */
export interface LoadSpan {
  readonly start: number;
  readonly end: number;
}

const hundredths = (v: number): number => Math.round(v * 100) / 100;

export function sampleMachine(): MachineSample {
  const [one = 0, five = 0, fifteen = 0] = loadavg().map(hundredths);
  return { at: new Date().toISOString(), loadavg: [one, five, fifteen], cpus: cpus().length };
}

/** The 1-min load average, to 0.01. */
export const load1 = (): number => hundredths(loadavg()[0] ?? 0);

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cpus: list.length,
    memoryMiB: Math.round(totalmem() / 1024 ** 2),
    node: process.version,
    kernel: release(),
  };
}

export const formatLoad = (s: MachineSample): string => `load ${s.loadavg.join(' ')} on ${s.cpus} CPUs`;

/**
 * The load spans of the figures of a run, by figure id: a scenario wraps each measurement in
 * `measure([ids], fn)`. A figure measured in several phases (e.g. ours and Go alternating) gets
 * the first start and the last end.
 */
export class LoadLog {
  readonly #spans = new Map<string, LoadSpan>();
  readonly #sample: () => number;

  constructor(sample: () => number = load1) {
    this.#sample = sample;
  }

  async measure<T>(ids: readonly string[], fn: () => Promise<T>): Promise<T> {
    const start = this.#sample();
    const value = await fn();
    const end = this.#sample();
    for (const id of ids) this.#spans.set(id, { start: this.#spans.get(id)?.start ?? start, end });
    return value;
  }

  spanOf(id: string): LoadSpan | undefined {
    return this.#spans.get(id);
  }
}
