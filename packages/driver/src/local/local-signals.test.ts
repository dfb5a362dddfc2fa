// The local stack's lifecycle with real processes (issue 14, R7): the real `npm start` and the real
// `pmem-csi-driver local`, signalled as a user or a supervisor would. After every stop no process
// that names the state directory survives, and the directory holds no socket, mount, loop device or
// lock. Before the fix, SIGTERM to npm orphaned the controller and node processes, SIGINT to npm did
// nothing, and a second stack silently took over the first one's directory. The emulated case
// needs root and loop devices (CI has both); without them it fails with the reason.
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { releaseHostDir } from '@pmem-csi/node';
import { findMountsUnder, loopDevicesUnder } from '@pmem-csi/node/testing';
import { HostRunner } from '@pmem-csi/runtime';
import { ControllerCsi, mountCapability, NodeCsi } from './csi-clients.js';
import { LOCK_FILE } from './lock.js';
import { fetchStatus } from './status-command.js';

jest.setTimeout(240_000);
const root = resolve(import.meta.dirname, '../../../..');
const host = new HostRunner();
const MAIN = ['--conditions=@pmem-csi/source', '--import', 'tsx', 'packages/driver/src/main.ts'];

interface Run {
  readonly child: ChildProcess;
  output(): string;
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  exited(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawn in its own process group (so afterAll can always end it), collecting stdout and stderr. */
function run(command: string, args: readonly string[]): Run {
  const child = spawn(command, [...args], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PMEM_CSI_LOCAL_DIR: '' },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('close', (code, signal) => r({ code, signal })),
  );
  const deadline = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
    Promise.race([
      p,
      new Promise<T>((_, reject) =>
        setTimeout(
          () => reject(new Error(`timed out after ${ms / 1000} s waiting for ${what}; output:\n${out}`)),
          ms,
        ).unref(),
      ),
    ]);
  return {
    child,
    output: () => out,
    waitFor: (text, ms = 120_000) =>
      deadline(
        new Promise<void>((r, reject) => {
          const t = setInterval(() => {
            if (out.includes(text)) r();
            else if (child.exitCode !== null)
              reject(new Error(`exited (${child.exitCode}) before printing ${JSON.stringify(text)}; output:\n${out}`));
            else return;
            clearInterval(t);
          }, 100);
        }),
        ms,
        JSON.stringify(text),
      ),
    exited: (ms = 60_000) => deadline(done, ms, `${command} to exit`),
  };
}

/** Processes (other than this one) whose command line names `dir`. */
async function processesNaming(dir: string): Promise<Array<{ pid: number; cmd: string }>> {
  const found: Array<{ pid: number; cmd: string }> = [];
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').then(
      (t) => t.split('\0').join(' '),
      () => '',
    );
    if (cmd.includes(`${dir}/`) || cmd.endsWith(dir) || cmd.includes(`${dir} `)) found.push({ pid, cmd });
  }
  return found;
}

async function waitGone(dir: string, ms: number): Promise<Array<{ pid: number; cmd: string }>> {
  const deadline = Date.now() + ms;
  let left = await processesNaming(dir);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    left = await processesNaming(dir);
  }
  return left;
}

/** What a stopped stack must not leave in `dir`. */
async function leftovers(dir: string): Promise<string[]> {
  const files = [
    'controller/csi.sock',
    'nodes/node-a/csi.sock',
    'nodes/node-b/csi.sock',
    'nodes/node-c/csi.sock',
    LOCK_FILE,
    'status-url',
  ].filter((f) => existsSync(join(dir, f)));
  const mounts = (await findMountsUnder(host, dir)).map((m) => `mount ${m.target}`);
  const loops = process.getuid?.() === 0 ? (await loopDevicesUnder(host, dir)).map((l) => `loop ${l.name}`) : [];
  return [...files, ...mounts, ...loops];
}

/** The parent pid of a process, from /proc (undefined once it is gone). */
function ppidOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** The stack's own process: the `local` process npm started. */
async function localPid(npmPid: number, dir: string): Promise<number> {
  const p = (await processesNaming(dir)).find((x) => x.cmd.includes('main.ts local') && ppidOf(x.pid) === npmPid);
  if (p === undefined) throw new Error(`no local stack process under npm (pid ${npmPid})`);
  return p.pid;
}

describe('npm start / pmem-csi-driver local: signals, lock, clean-up (real processes)', () => {
  // Made now, not in a hook: the cases run concurrently (about 45 s instead of 100 s on 2 cores).
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'pmem-local-sig-')));
  const dirOf = (name: string): string => join(base, name);

  afterAll(async () => {
    for (const p of await processesNaming(base)) process.kill(p.pid, 'SIGKILL');
    if (process.getuid?.() === 0) await releaseHostDir(host, base);
    await rm(base, { recursive: true, force: true });
  });

  it.concurrent(
    'SIGTERM to the npm process stops every child and releases the directory; a second stack on it is refused meanwhile',
    async () => {
      const dir = dirOf('term-npm');
      const npm = run('npm', ['start', '--', '--keep', '--fake', '--state-dir', dir]);
      await npm.waitFor('The stack keeps running');
      const owner = await localPid(npm.child.pid!, dir);
      // A second stack on the same directory: refused, naming the directory and the owner; the first keeps its files.
      const second = run(process.execPath, [...MAIN, 'local', '--fake', '--state-dir', dir]);
      expect((await second.exited()).code).toBe(2);
      expect(second.output()).toContain(`pmem-csi-driver: the local stack in ${dir} is in use by process ${owner} (`);
      expect(existsSync(join(dir, 'certs', 'registry', 'tls.key'))).toBe(true);
      expect((await fetchStatus((await readFile(join(dir, 'status-url'), 'utf8')).trim())).nodes).toHaveLength(3);

      process.kill(npm.child.pid!, 'SIGTERM');
      expect(await npm.exited()).toEqual({ code: 0, signal: null });
      expect(npm.output()).toContain('Stopping the node drivers and the controller (SIGTERM)');
      expect(await waitGone(dir, 10_000)).toEqual([]);
      expect(await leftovers(dir)).toEqual([]);
    },
  );

  it.concurrent(
    'SIGINT to the npm process with a volume staged and published: processes, mounts and loop devices gone (emulated, root)',
    async () => {
      if (process.getuid?.() !== 0)
        throw new Error('this case needs root (emulated PMEM on loop devices); CI runs as root');
      const dir = dirOf('int-npm');
      const npm = run('npm', ['start', '--', '--keep', '--state-dir', dir]);
      await npm.waitFor('The stack keeps running');
      expect(npm.output()).toContain('device mode: emulated');
      const ctl = new ControllerCsi(join(dir, 'controller', 'csi.sock'));
      const created = await ctl.createVolume({
        name: 'r7-signals',
        capacity_range: { required_bytes: String(64 * 1024 ** 2) },
        volume_capabilities: [mountCapability('ext4')],
      });
      ctl.close();
      const volume = created.volume!;
      const nodeId = Object.values(volume.accessible_topology[0]!.segments)[0]!;
      const nc = new NodeCsi(join(dir, 'nodes', nodeId, 'csi.sock'));
      const [staging, target] = [join(dir, 'mnt', 'r7', 'staging'), join(dir, 'mnt', 'r7', 'target')];
      await nc.stage({
        volume_id: volume.volume_id,
        staging_target_path: staging,
        volume_capability: mountCapability('ext4'),
      });
      await nc.publish({
        volume_id: volume.volume_id,
        staging_target_path: staging,
        target_path: target,
        volume_capability: mountCapability('ext4'),
        readonly: false,
      });
      nc.close();
      expect((await findMountsUnder(host, dir)).map((m) => m.target).sort()).toEqual([staging, target]);

      process.kill(npm.child.pid!, 'SIGINT');
      expect(await npm.exited()).toEqual({ code: 0, signal: null });
      expect(npm.output()).toContain('Stopping the node drivers and the controller (SIGINT)');
      expect(await waitGone(dir, 10_000)).toEqual([]);
      expect(await leftovers(dir)).toEqual([]);
    },
  );

  it.concurrent("SIGINT to the stack's own process (under npm) stops it; npm ends with it", async () => {
    const dir = dirOf('int-own');
    const npm = run('npm', ['start', '--', '--keep', '--fake', '--state-dir', dir]);
    await npm.waitFor('The stack keeps running');
    process.kill(await localPid(npm.child.pid!, dir), 'SIGINT');
    expect(await npm.exited()).toEqual({ code: 0, signal: null });
    expect(await waitGone(dir, 10_000)).toEqual([]);
    expect(await leftovers(dir)).toEqual([]);
  });

  it.concurrent(
    'SIGKILL to the stack: its drivers stop by themselves; the next start takes the stale lock over, and SIGTERM during its start-up stops it',
    async () => {
      const dir = dirOf('kill-own');
      const first = run(process.execPath, [...MAIN, 'local', '--keep', '--fake', '--state-dir', dir]);
      await first.waitFor('The stack keeps running');
      process.kill(first.child.pid!, 'SIGKILL');
      expect((await first.exited()).signal).toBe('SIGKILL');
      expect(await waitGone(dir, 10_000)).toEqual([]);

      const next = run(process.execPath, [...MAIN, 'local', '--fake', '--state-dir', dir]);
      await next.waitFor(`taking over ${join(dir, LOCK_FILE)}: its owner, process ${first.child.pid} (`);
      process.kill(next.child.pid!, 'SIGTERM');
      expect(await next.exited()).toEqual({ code: 143, signal: null });
      expect(next.output()).toMatch(
        /stopped during start-up \(SIGTERM\)|Stopping the node drivers and the controller \(SIGTERM\)/,
      );
      expect(await waitGone(dir, 10_000)).toEqual([]);
      expect(await leftovers(dir)).toEqual([]);
    },
  );
});
