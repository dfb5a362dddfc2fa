// Shared pieces of the scenarios: their result shape, runs of the Go load tool with the CPU time
// of the server under load, and waiting for the controller to see its nodes.
import { setTimeout as sleep } from 'node:timers/promises';
import { fetchStatus } from '@pmem-csi/driver';
import { CpuMeter, runBench, tail, type HostProcess } from './procs.js';
import type { BenchContext } from './setup.js';

// The result types live in result.ts (no driver imports: the README generator reads them).
export type { ScenarioRecord, ScenarioResult } from './result.js';

/** One JSON line of `pmem-csi-bench load`. */
export interface LoadReport {
  readonly op: string;
  readonly concurrency: number;
  readonly seconds: number;
  readonly ops: number;
  readonly opsPerSec: number;
  readonly calls: number;
  readonly callsPerSec: number;
  readonly latencyMs: { p50: number; p99: number; max: number };
  readonly stepsMs: Record<string, { p50: number; p99: number; max: number }>;
  readonly errors: Record<string, number>;
  readonly firstError?: string;
  readonly readyAfterMs?: number;
}

export interface LoadRun extends LoadReport {
  /** CPU seconds the measured server(s) used during the run, by name. */
  readonly serverCpu: Record<string, number>;
}

/** Run `pmem-csi-bench load` with `args` and measure the CPU time of `servers` meanwhile. */
export async function runLoad(
  ctx: BenchContext,
  args: readonly string[],
  servers: Readonly<Record<string, number>> = {},
): Promise<LoadRun> {
  const meters = Object.entries(servers).map(([name, pid]) => [name, new CpuMeter(pid)] as const);
  const report = (await runBench(ctx.bench, ['load', ...args], 20 * 60_000)) as unknown as LoadReport;
  const serverCpu = Object.fromEntries(meters.map(([name, m]) => [name, Math.round(m.read().cpu * 1000) / 1000]));
  if (typeof report.opsPerSec !== 'number')
    throw new Error(`pmem-csi-bench load ${args.join(' ')}: unexpected report ${JSON.stringify(report)}`);
  const errors = Object.values(report.errors).reduce((a, b) => a + b, 0);
  if (errors > 0)
    ctx.say(
      `  ${errors} errors in load ${args.join(' ')}: ${JSON.stringify(report.errors)} (first: ${report.firstError ?? '?'})`,
    );
  return { ...report, serverCpu };
}

/** Seconds of each measured load run. */
export const loadSeconds = (ctx: BenchContext): number => (ctx.smoke ? 2 : 10);

/**
 * Wait until `n` nodes are available in the controller's /status (and, with `settled`, its
 * start-up settle period is over: CreateVolume answers UNAVAILABLE until then); returns the ms.
 */
export async function waitAvailable(
  ctl: { proc: HostProcess; statusUrl: string },
  n: number,
  o: { timeoutMs: number; pollMs?: number; settled?: boolean },
): Promise<number> {
  const { proc: controller, statusUrl } = ctl;
  const { timeoutMs, pollMs = 200, settled = false } = o;
  const started = performance.now();
  let last = '';
  while (performance.now() - started < timeoutMs) {
    if (controller.exited() !== undefined)
      throw new Error(`the controller ended (${controller.exited()}); log:\n${tail(controller.log())}`);
    try {
      const s = await fetchStatus(statusUrl, 10_000);
      const available = s.nodes.filter((x) => x.state === 'available').length;
      if (available >= n && (s.settled || !settled)) return performance.now() - started;
      last = `${available}/${n} available, settled ${String(s.settled)}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await sleep(pollMs);
  }
  throw new Error(`the controller did not see ${n} available nodes within ${timeoutMs / 1000} s (last: ${last})`);
}

/** Wait until the controller answers on its status endpoint (its registry listens by then). */
export async function waitServing(controller: HostProcess, statusUrl: string, timeoutMs: number): Promise<void> {
  const started = performance.now();
  for (;;) {
    if (controller.exited() !== undefined)
      throw new Error(`the controller ended (${controller.exited()}); log:\n${tail(controller.log())}`);
    try {
      await fetchStatus(statusUrl, 2000);
      return;
    } catch (e) {
      if (performance.now() - started > timeoutMs)
        throw new Error(
          `the controller did not serve ${statusUrl} within ${timeoutMs / 1000} s: ${(e as Error).message}`,
        );
    }
    await sleep(50);
  }
}
