// One local stack per state directory: `<dir>/stack.lock` names the process that owns it (pid, its
// start time from /proc so a reused pid is not mistaken for the owner, and a random token). The file
// is made with link(2) from a private temporary file, which fails atomically when a lock exists. A
// lock whose owner no longer runs is taken over, saying so; a live owner is never disturbed — before,
// a second `npm start` deleted the first one's sockets and certificates while it ran.
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const LOCK_FILE = 'stack.lock';

/** What the lock file records about its owner. */
export interface LockOwner {
  readonly pid: number;
  /** Start time of the process in clock ticks since boot (field 22 of /proc/<pid>/stat), when known. */
  readonly startTicks?: string;
  readonly startedAt: string;
  readonly command: string;
  readonly token: string;
}

/** Thrown when a live process owns the directory; the message names the directory and the owner. */
export class StackLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly owner: LockOwner,
  ) {
    super(
      `the local stack in ${dir} is in use by process ${owner.pid} (${owner.command}, running since ${owner.startedAt}); ` +
        `stop it first (Ctrl-C in its terminal, or kill -TERM ${owner.pid}), or give this one another directory with --state-dir DIR`,
    );
    this.name = 'StackLockedError';
  }
}

export interface StackLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** Remove the lock if it is still ours (idempotent). */
  release(): Promise<void>;
}

/** Start time of a process (clock ticks since boot), or undefined when /proc does not say. */
export async function processStartTicks(pid: number): Promise<string | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

/** Whether the recorded owner still runs (same pid and, when recorded, the same start time). */
export async function ownerAlive(owner: LockOwner): Promise<boolean> {
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false; // ESRCH: gone
  }
  if (owner.startTicks === undefined) return true;
  const now = await processStartTicks(owner.pid);
  return now === undefined || now === owner.startTicks;
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockOwner>;
    if (typeof v.pid !== 'number' || !Number.isSafeInteger(v.pid) || v.pid <= 0 || typeof v.token !== 'string')
      return undefined;
    return {
      pid: v.pid,
      ...(typeof v.startTicks === 'string' ? { startTicks: v.startTicks } : {}),
      startedAt: typeof v.startedAt === 'string' ? v.startedAt : 'an unknown time',
      command: typeof v.command === 'string' ? v.command : 'unknown command',
      token: v.token,
    };
  } catch {
    return undefined;
  }
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

async function tryLink(tmp: string, path: string): Promise<boolean> {
  try {
    await link(tmp, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

/**
 * Take `<dir>/stack.lock` for this process. A lock of a process that no longer runs (or an
 * unreadable one) is taken over and `notice` says so. @throws StackLockedError when a live process owns it
 */
export async function acquireStackLock(
  dir: string,
  notice: (line: string) => void = () => undefined,
): Promise<StackLock> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const startTicks = await processStartTicks(process.pid);
  const owner: LockOwner = {
    pid: process.pid,
    ...(startTicks === undefined ? {} : { startTicks }),
    startedAt: new Date().toISOString(),
    command: process.argv.slice(1).join(' ').slice(0, 200),
    token: randomBytes(8).toString('hex'),
  };
  const text = `${JSON.stringify(owner)}\n`;
  const tmp = `${path}.${process.pid}.${owner.token}.tmp`;
  await writeFile(tmp, text, { mode: 0o644 });
  try {
    // Few rounds: each one either takes the lock, meets a live owner, or removes a stale lock.
    for (let round = 0; round < 5; round++) {
      if (await tryLink(tmp, path)) return { path, owner, release: () => releaseIfOurs(path, owner.token) };
      const found = await readText(path);
      if (found === undefined) continue; // released meanwhile
      const other = parseOwner(found);
      if (other !== undefined && (await ownerAlive(other))) throw new StackLockedError(dir, other);
      notice(
        other === undefined
          ? `taking over ${path}: it is unreadable (left by an interrupted start?)`
          : `taking over ${path}: its owner, process ${other.pid} (running since ${other.startedAt}), is no longer running`,
      );
      // Remove it only if it is still the stale lock we judged (another starter may have taken over).
      if ((await readText(path)) === found) await unlink(path).catch(() => undefined);
    }
    throw new Error(`could not take ${path}: other processes keep taking it; try again`);
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function releaseIfOurs(path: string, token: string): Promise<void> {
  const found = await readText(path);
  if (found !== undefined && parseOwner(found)?.token === token) await unlink(path).catch(() => undefined);
}
