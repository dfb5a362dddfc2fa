// Cleanup for tests on real mounts and loop devices: unmount everything under a test directory
// (deepest first, lazily as a last resort), detach every loop device whose backing file lies under
// it (deleted files too), then remove the directory. Runs even after failed tests; reports what it
// could not remove instead of hiding it.
import { access, constants, rm } from 'node:fs/promises';
import type { CommandRunner } from '@pmem-csi/runtime';
import { releaseHostDir } from '../mount/host-dir.js';

/** Remove every mount, loop device and file under `dir`; throws listing what is left. */
export async function cleanUpHostDir(runner: CommandRunner, dir: string): Promise<void> {
  const { left } = await releaseHostDir(runner, dir);
  if (!left.some((l) => l.startsWith('mounted: '))) await rm(dir, { recursive: true, force: true });
  if (left.length > 0) throw new Error(`cleanup of ${dir} incomplete: ${left.join('; ')}`);
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
