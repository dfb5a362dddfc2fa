// Child processes of the local stack: each is the real pmem-csi-driver binary (main.ts under tsx
// when running from sources, main.js from dist) with the V8 options of its mode that the pods get
// in NODE_OPTIONS (@pmem-csi/csi DRIVER_V8_OPTIONS), logging to its own file. Stopping sends
// SIGTERM and waits, then SIGKILL after a grace period.
// Each child is told the stack's pid (PMEM_CSI_PARENT_PID) and shuts down when it is adopted by
// another parent, so even a stack that is killed outright (SIGKILL) leaves no driver running.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { DRIVER_V8_OPTIONS, renderDriverArgs, type DriverArgs, type DriverMode } from '@pmem-csi/csi';

/** How long stop() waits after SIGTERM before it sends SIGKILL. */
export const STOP_GRACE_MS = 15_000;

export interface DriverProcess {
  readonly name: string;
  readonly mode: DriverMode;
  /** The driver's flags, by configuration key; the command line renders them (renderDriverArgs). */
  readonly flags: DriverArgs;
  readonly logFile: string;
  readonly child: ChildProcess;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process is gone. */
  stop(): Promise<void>;
  /** SIGKILL (a crash); resolves when the process is gone. */
  kill(): Promise<void>;
}

/** The environment variable that names the stack's pid to its children (read by main.ts). */
export const PARENT_PID_ENV = 'PMEM_CSI_PARENT_PID';

/**
 * Node.js arguments that run the driver binary in `mode`: the mode's V8 options, then the sources
 * through tsx or the built file (the driver's flags follow).
 */
export function driverCommand(mode: DriverMode): string[] {
  const fromSource = import.meta.url.endsWith('.ts');
  const main = fileURLToPath(new URL(fromSource ? '../main.ts' : '../main.js', import.meta.url));
  const binary = fromSource ? ['--conditions=@pmem-csi/source', '--import', 'tsx', main] : [main];
  return [...DRIVER_V8_OPTIONS[mode], ...binary];
}

/** Start `pmem-csi-driver <flags>` (rendered from DRIVER_FLAGS, --mode first) as a child process. */
export function startDriverProcess(name: string, flags: DriverArgs, logFile: string): DriverProcess {
  const { mode } = flags;
  const fd = openSync(logFile, 'a');
  const env = { ...process.env, [PARENT_PID_ENV]: String(process.pid) };
  const child = spawn(process.execPath, [...driverCommand(mode), ...renderDriverArgs(flags)], {
    stdio: ['ignore', fd, fd],
    env,
  });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
  return {
    name,
    mode,
    flags,
    logFile,
    child,
    kill: async () => {
      if (!gone()) child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (gone()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Where freePort() looks: below the kernel's ephemeral range (32768-60999 by default). */
const PORT_RANGE = { from: 20_000, to: 32_000 } as const;

function tryListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * A TCP port that is free right now on 127.0.0.1, for a child process to listen on a moment later.
 * Chosen at random below the ephemeral range: a port the kernel hands out for "port 0" (any other
 * test's server, any outgoing connection) would often be taken again by someone else before the
 * child binds it (seen as EADDRINUSE in parallel test runs).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = PORT_RANGE.from + Math.floor(Math.random() * (PORT_RANGE.to - PORT_RANGE.from));
    if (await tryListen(port)) return port;
  }
  throw new Error(`no free TCP port on 127.0.0.1 between ${PORT_RANGE.from} and ${PORT_RANGE.to} after 50 tries`);
}

export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (signal?.aborted)
      throw new Error(`gave up waiting for ${what}: ${(signal.reason as Error | undefined)?.message ?? 'aborted'}`);
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
}
