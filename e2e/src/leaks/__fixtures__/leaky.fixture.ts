// A test file for environment.test.ts, run by a nested Jest with the e2e configuration: it makes a
// process, a volume file, a loop device on it and a mount below LEAK_FIXTURE_DIR, and records
// them there. With LEAK_FIXTURE_CLEAN=1 it removes them in a top-level afterAll (which must run
// before the leak check); otherwise it leaves them for the leak check to find (and for
// environment.test.ts to remove afterwards).
import { afterAll, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runTool } from '../../cluster/processes.js';

const dir = process.env['LEAK_FIXTURE_DIR'] ?? '';
const clean = process.env['LEAK_FIXTURE_CLEAN'] === '1';
let pid: number | undefined;
let loop = '';

it('makes a process, a volume file, a loop device and a mount', async () => {
  expect(dir).not.toBe('');
  const child = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
  child.unref();
  pid = child.pid;
  writeFileSync(join(dir, 'pid'), String(pid));
  const image = join(dir, 'volume.img');
  writeFileSync(image, '');
  truncateSync(image, 1024 ** 2);
  loop = (await runTool('losetup', ['--find', '--show', image])).stdout.trim();
  writeFileSync(join(dir, 'loop'), loop);
  mkdirSync(join(dir, 'mnt'));
  await runTool('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', join(dir, 'mnt')]);
});

afterAll(async () => {
  if (!clean) return;
  if (pid !== undefined) process.kill(pid, 'SIGKILL');
  await runTool('umount', [join(dir, 'mnt')]);
  if (loop !== '') await runTool('losetup', ['--detach', loop]);
  rmSync(join(dir, 'volume.img'), { force: true });
});
