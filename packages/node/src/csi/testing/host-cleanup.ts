// Cleanup for tests on real mounts and loop devices: unmount everything under a test directory
// (deepest first, lazily as a last resort), detach every loop device whose backing file lies under
// it (deleted files too), then remove the directory. Runs even after failed tests; reports what it
// could not remove instead of hiding it.
import { access, constants, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandRunner } from '@pmem-csi/runtime';
import { detachLoopDevice, listLoopDevices } from '../../device/emulated-losetup.js';
import { findMountsUnder } from '../../mount/findmnt.js';

async function unmountUnder(runner: CommandRunner, dir: string): Promise<string[]> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const mounts = await findMountsUnder(runner, dir);
    if (mounts.length === 0) return [];
    for (const m of mounts) {
      await runner.run('umount', [m.target]).catch(() => runner.run('umount', ['-l', m.target]).catch(() => undefined));
    }
  }
  return (await findMountsUnder(runner, dir)).map((m) => m.target);
}

async function detachUnder(runner: CommandRunner, dir: string): Promise<string[]> {
  let left: string[] = [];
  for (let attempt = 0; attempt < 50; attempt++) {
    left = (await listLoopDevices(runner)).filter((l) => l.backFile.startsWith(`${dir}/`)).map((l) => l.name);
    if (left.length === 0) return [];
    for (const dev of left) await detachLoopDevice(runner, dev).catch(() => undefined);
    await sleep(100);
  }
  return left;
}

/** Remove every mount, loop device and file under `dir`; throws listing what is left. */
export async function cleanUpHostDir(runner: CommandRunner, dir: string): Promise<void> {
  const mounts = await unmountUnder(runner, dir);
  const loops = await detachUnder(runner, dir);
  if (mounts.length === 0) await rm(dir, { recursive: true, force: true });
  const problems = [...mounts.map((m) => `still mounted: ${m}`), ...loops.map((l) => `loop device still attached: ${l}`)];
  if (problems.length > 0) throw new Error(`cleanup of ${dir} incomplete: ${problems.join('; ')}`);
}

/** Why tests on loop devices and real mounts cannot run here (empty when they can). */
export async function hostTestProblems(runner: CommandRunner, tools: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push(`they need root, running as uid ${String(process.getuid?.())}`);
  for (const tool of tools) if (runner.which(tool) === undefined) problems.push(`${tool} is not installed`);
  try {
    await access('/dev/loop-control', constants.R_OK | constants.W_OK);
  } catch (e) {
    problems.push(`no loop device support (/dev/loop-control: ${(e as Error).message})`);
  }
  return problems;
}
