// Processes of the benchmarks: the production driver (node packages/driver/dist/bundle/pmem-csi-driver.mjs), the Go
// tools (pmem-csi-bench), their JSON lines, and what /proc says about a server: CPU time
// (utime + stime) and resident memory (VmRSS). Built on the e2e host-process helpers, so every
// process started here is stopped by pid when the run ends, also on a crash.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { runTool, startHostProcess, tail, type HostProcess } from '../cluster/processes.js';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux for every architecture we run). */
const USER_HZ = 100;

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at the state, field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`cannot read utime/stime of pid ${pid}`);
  return (utime + stime) / USER_HZ;
}

/** Resident memory of a process, MiB (VmRSS). */
export function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (m?.[1] === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) / 1024;
}

/**
 * Private (anonymous) resident memory of a process, MiB (RssAnon): VmRSS without the pages of files
 * it maps (the node binary's code, shared with every process that runs it and given back under
 * memory pressure), i.e. what it holds alone.
 */
export function rssAnonMiB(pid: number): number {
  const m = /^RssAnon:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (m?.[1] === undefined) throw new Error(`no RssAnon for pid ${pid}`);
  return Number(m[1]) / 1024;
}

/** The pid of a started process (it must be running). */
export function pidOf(p: HostProcess): number {
  const pid = p.child.pid;
  if (pid === undefined || p.exited() !== undefined)
    throw new Error(`${p.name} is not running (${p.exited() ?? 'no pid'}); log:\n${tail(p.log())}`);
  return pid;
}

/** CPU use of a process over an interval. */
export class CpuMeter {
  readonly #pid: number;
  #cpu: number;
  #at: number;

  constructor(pid: number) {
    this.#pid = pid;
    this.#cpu = cpuSeconds(pid);
    this.#at = performance.now();
  }

  /** CPU seconds and wall seconds since the start (or the last reset). */
  read(): { cpu: number; wall: number } {
    return { cpu: cpuSeconds(this.#pid) - this.#cpu, wall: (performance.now() - this.#at) / 1000 };
  }

  reset(): void {
    this.#cpu = cpuSeconds(this.#pid);
    this.#at = performance.now();
  }
}

/** JSON objects among the lines of a text (other lines are skipped). */
export function jsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a log line that starts with '{' but is not one JSON object
    }
  }
  return out;
}

/** Wait until a process has logged a JSON line with `event`; fails when it exits first. */
export async function waitForEvent(p: HostProcess, event: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = jsonLines(p.log()).find((l) => l['event'] === event);
    if (found !== undefined) return found;
    if (p.exited() !== undefined)
      throw new Error(`${p.name} ended (${p.exited()}) before "${event}"; log:\n${tail(p.log())}`);
    if (Date.now() > deadline)
      throw new Error(`${p.name}: no "${event}" within ${timeoutMs / 1000} s; log:\n${tail(p.log())}`);
    await sleep(20);
  }
}

/** Wait until a process has exited by itself (it stops after its duration). */
export async function waitForExit(p: HostProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (p.exited() === undefined) {
    if (Date.now() > deadline) {
      await p.stop(5000);
      throw new Error(`${p.name} did not stop by itself within ${timeoutMs / 1000} s; stopped it`);
    }
    await sleep(50);
  }
}

/** Run a Go bench subcommand to completion and return its last JSON line. */
export async function runBench(
  bench: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const run = await runTool(bench, args, { timeoutMs });
  const last = jsonLines(run.stdout).at(-1);
  if (last === undefined)
    throw new Error(`pmem-csi-bench ${args[0] ?? ''} printed no JSON; stderr:\n${tail(run.stderr)}`);
  return last;
}

/** Start a long-running process that logs to `logFile`. */
export function start(name: string, bin: string, args: readonly string[], logFile: string): HostProcess {
  return startHostProcess(name, bin, args, { logFile });
}

export { tail, type HostProcess };
