// The state-directory lock of the local stack: one owner, a live owner is never disturbed, a dead
// or unreadable one is taken over (saying so), a reused pid is not mistaken for the owner, and only
// the owner's release removes the lock.
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  acquireStackLock,
  LOCK_FILE,
  ownerAlive,
  processStartTicks,
  StackLockedError,
  type LockOwner,
} from './lock.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function freshDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'pmem-lock-'));
  dirs.push(d);
  return d;
}

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

function owner(o: Partial<LockOwner>): LockOwner {
  return {
    pid: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    command: 'pmem-csi-driver local',
    token: 'feedfeedfeedfeed',
    ...o,
  };
}

describe('stack lock', () => {
  it('is taken once; a second taker meets the live owner and learns its pid and directory', async () => {
    const dir = await freshDir();
    const lock = await acquireStackLock(dir);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({
      pid: process.pid,
      token: lock.owner.token,
    });
    const second = acquireStackLock(dir);
    await expect(second).rejects.toBeInstanceOf(StackLockedError);
    await expect(second).rejects.toThrow(
      `the local stack in ${dir} is in use by process ${process.pid} (${lock.owner.command}, running since ${lock.owner.startedAt}); ` +
        `stop it first (Ctrl-C in its terminal, or kill -TERM ${process.pid}), or give this one another directory with --state-dir DIR`,
    );
    await lock.release();
    await expect(stat(join(dir, LOCK_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
    const again = await acquireStackLock(dir);
    await again.release();
    await again.release(); // idempotent
  });

  it('takes over the lock of a process that no longer runs, and says so', async () => {
    const dir = await freshDir();
    const pid = deadPid();
    await writeFile(join(dir, LOCK_FILE), JSON.stringify(owner({ pid })));
    const notices: string[] = [];
    const lock = await acquireStackLock(dir, (l) => notices.push(l));
    expect(notices).toEqual([
      `taking over ${join(dir, LOCK_FILE)}: its owner, process ${pid} (running since 2026-01-01T00:00:00.000Z), is no longer running`,
    ]);
    expect(lock.owner.pid).toBe(process.pid);
    await lock.release();
  });

  it('takes over an unreadable lock file', async () => {
    const dir = await freshDir();
    await writeFile(join(dir, LOCK_FILE), '{"pid": ');
    const notices: string[] = [];
    const lock = await acquireStackLock(dir, (l) => notices.push(l));
    expect(notices).toEqual([`taking over ${join(dir, LOCK_FILE)}: it is unreadable (left by an interrupted start?)`]);
    await lock.release();
  });

  it('a reused pid (another start time) is not the owner; the same pid and start time is', async () => {
    const ticks = await processStartTicks(process.pid);
    expect(ticks).toMatch(/^\d+$/);
    expect(await ownerAlive(owner({ pid: process.pid, startTicks: ticks! }))).toBe(true);
    expect(await ownerAlive(owner({ pid: process.pid, startTicks: String(Number(ticks) + 1) }))).toBe(false);
    expect(await ownerAlive(owner({ pid: deadPid() }))).toBe(false);
  });

  it('release leaves a lock that another process took meanwhile alone', async () => {
    const dir = await freshDir();
    const lock = await acquireStackLock(dir);
    const other = JSON.stringify(owner({ pid: process.pid, token: '0123456789abcdef' }));
    await writeFile(join(dir, LOCK_FILE), other);
    await lock.release();
    expect(await readFile(join(dir, LOCK_FILE), 'utf8')).toBe(other);
  });
});
