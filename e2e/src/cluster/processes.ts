// Host processes of the cluster tier: short tool runs (kwokctl, kubectl, helm) with captured
// output and a hard timeout, and long-running components (the operator, external-provisioner)
// that log to a file and are stopped with SIGTERM, then SIGKILL. Arguments are arrays, never
// shell strings. Every process started here is remembered so that a crashed test run still
// stops what it started (the exit hook below), and only those, by pid.
// Not the runtime's HostRunner (the product's runner for host tools): these runs need their own
// environment and working directory, and end on 'exit' rather than 'close' because kwokctl hands
// its pipes to the daemons it leaves running.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

export interface ToolRun {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
  readonly ms: number;
}

export interface ToolOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly input?: string;
  readonly timeoutMs?: number;
  readonly cwd?: string;
  /** Exit codes that count as success (default [0]). */
  readonly okCodes?: readonly number[];
}

/** A tool run that failed: exit code, or timeout; carries the command and the end of stderr. */
export class ToolError extends Error {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;

  constructor(
    readonly command: string,
    result: { code: number | null; stdout: string; stderr: string },
    why: string,
  ) {
    const tail = result.stderr.trim().split('\n').slice(-8).join('\n  ');
    super(`${command}: ${why}${tail === '' ? '' : `\n  ${tail}`}`);
    this.name = 'ToolError';
    this.code = result.code;
    this.stdout = result.stdout;
    this.stderr = result.stderr;
  }
}

const render = (bin: string, args: readonly string[]): string =>
  [bin.split('/').pop() ?? bin, ...args]
    .map((a) => (/^[\w./:=,@%+-]*$/.test(a) && a !== '' ? a : JSON.stringify(a)))
    .join(' ');

/** Run a tool to completion (stdin closed after `input`), failing with its stderr. */
export function runTool(bin: string, args: readonly string[], options: ToolOptions = {}): Promise<ToolRun> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const command = render(bin, args);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, [...args], {
      env: { ...process.env, LC_ALL: 'C', ...options.env },
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 5000).unref();
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new ToolError(command, { code: null, stdout: '', stderr: '' }, e.message));
    });
    // 'exit', not 'close': a tool that leaves daemons behind (kwokctl) may hand them its pipes.
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      // Give the pipes a moment to drain what the tool itself wrote.
      setTimeout(() => {
        const stdout = Buffer.concat(out).toString('utf8');
        const stderr = Buffer.concat(err).toString('utf8');
        child.stdout.destroy();
        child.stderr.destroy();
        const ms = Date.now() - started;
        if (timedOut)
          reject(
            new ToolError(
              command,
              { code, stdout, stderr },
              `no result after ${Math.round(timeoutMs / 1000)} s, killed`,
            ),
          );
        else if (code === null)
          reject(new ToolError(command, { code: null, stdout, stderr }, `killed by ${signal ?? 'a signal'}`));
        else if (!(options.okCodes ?? [0]).includes(code))
          reject(new ToolError(command, { code, stdout, stderr }, `exit code ${code}`));
        else resolve({ stdout, stderr, code, ms });
      }, 50);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

export interface HostProcess {
  readonly name: string;
  readonly logFile: string;
  readonly child: ChildProcess;
  /** Exit code, signal name, or undefined while running. */
  exited(): string | undefined;
  /** The log so far (for failure messages). */
  log(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** On process exit, SIGKILL every long-running process this module started and did not stop. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
}

/** Start a long-running component with its output appended to `logFile`. */
export function startHostProcess(
  name: string,
  bin: string,
  args: readonly string[],
  options: { logFile: string; env?: Readonly<Record<string, string>>; cwd?: string },
): HostProcess {
  installExitHook();
  const fd = openSync(options.logFile, 'a');
  const child = spawn(bin, [...args], {
    env: { ...process.env, ...options.env },
    cwd: options.cwd,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  running.add(child);
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void gone.then(() => running.delete(child));
  const exited = (): string | undefined =>
    child.exitCode !== null ? `exit code ${child.exitCode}` : child.signalCode !== null ? child.signalCode : undefined;
  return {
    name,
    logFile: options.logFile,
    child,
    exited,
    log: () => {
      try {
        return readFileSync(options.logFile, 'utf8');
      } catch {
        return '';
      }
    },
    stop: async (graceMs = 15_000) => {
      if (exited() !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** The last `lines` lines of a log, for failure messages. */
export function tail(text: string, lines = 20): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
