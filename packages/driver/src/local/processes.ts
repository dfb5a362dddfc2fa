// Child processes of the local stack: each is the real pmem-csi-driver binary (this same entry
// point, with this process's Node.js flags, so it works from sources under tsx and from dist),
// logging to its own file. Stopping sends SIGTERM and waits, then SIGKILL after a grace period.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { createServer } from 'node:net';

export interface DriverProcess {
  readonly name: string;
  readonly logFile: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Start `pmem-csi-driver <args>` as a child process. */
export function startDriverProcess(name: string, args: readonly string[], logFile: string): DriverProcess {
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1] ?? '', ...args], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    logFile,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A TCP port that is free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Poll `check` until it returns a value, or fail naming what we waited for. */
export async function waitUntil<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
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
