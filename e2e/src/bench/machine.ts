// The machine while a scenario runs: load average and CPU count before and after it. The figures
// of a busy machine (other work on the same 2 cores) are noisier; the JSON keeps the load beside them.
import { cpus, loadavg } from 'node:os';

export interface MachineSample {
  readonly at: string;
  /** 1, 5 and 15 minute load averages. */
  readonly loadavg: readonly [number, number, number];
  readonly cpus: number;
}

export function sampleMachine(): MachineSample {
  const [one = 0, five = 0, fifteen = 0] = loadavg().map((v) => Math.round(v * 100) / 100);
  return { at: new Date().toISOString(), loadavg: [one, five, fifteen], cpus: cpus().length };
}

export const formatLoad = (s: MachineSample): string => `load ${s.loadavg.join(' ')} on ${s.cpus} CPUs`;
