// Releasing what a directory holds on the host: every mount at or below it (deepest first; a lazy
// unmount as the last resort) and every loop device whose backing file lies below it (deleted files
// too). For the owner of such a directory when it goes away — the local stack on stop, tests after
// their run — never for directories shared with others. Reports what it could not release.
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandRunner } from '@pmem-csi/runtime';
import { detachLoopDevice, listLoopDevices, type LoopDevice } from '../device/emulated-losetup.js';
import { findMountsUnder } from './findmnt.js';
import { TOOL_TIMEOUTS } from './tool-options.js';

export interface ReleasedHostDir {
  /** Mount points unmounted, in order. */
  readonly unmounted: readonly string[];
  /** Loop devices detached. */
  readonly detached: readonly string[];
  /** What is still there: "mounted: PATH" or "loop device: DEV (FILE)". */
  readonly left: readonly string[];
}

async function unmountUnder(runner: CommandRunner, dir: string, unmounted: string[]): Promise<string[]> {
  const opts = { timeoutMs: TOOL_TIMEOUTS.mount };
  for (let attempt = 0; attempt < 5; attempt++) {
    const mounts = await findMountsUnder(runner, dir);
    if (mounts.length === 0) return [];
    for (const m of mounts) {
      const done = await runner.run('umount', [m.target], opts).then(
        () => true,
        () =>
          runner.run('umount', ['-l', m.target], opts).then(
            () => true,
            () => false,
          ),
      );
      if (done) unmounted.push(m.target);
    }
  }
  return (await findMountsUnder(runner, dir)).map((m) => `mounted: ${m.target}`);
}

/** Loop devices whose backing file (deleted or not) lies below `dir`. */
export async function loopDevicesUnder(runner: CommandRunner, dir: string): Promise<LoopDevice[]> {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return (await listLoopDevices(runner)).filter((l) => l.backFile.startsWith(prefix));
}

async function detachUnder(runner: CommandRunner, dir: string, detached: string[]): Promise<string[]> {
  // The kernel releases a loop device a moment after its last mount is gone: retry for ~5 s.
  for (let attempt = 0; attempt < 50; attempt++) {
    const ours = await loopDevicesUnder(runner, dir);
    if (ours.length === 0) return [];
    for (const l of ours) {
      if (
        await detachLoopDevice(runner, l.name).then(
          () => true,
          () => false,
        )
      )
        detached.push(l.name);
    }
    await sleep(100);
  }
  return (await loopDevicesUnder(runner, dir)).map((l) => `loop device: ${l.name} (${l.backFile})`);
}

/** Unmount everything at or below `dir` and detach the loop devices of files below it. */
export async function releaseHostDir(runner: CommandRunner, dir: string): Promise<ReleasedHostDir> {
  const unmounted: string[] = [];
  const detached: string[] = [];
  const mountsLeft = await unmountUnder(runner, dir, unmounted);
  const loopsLeft = await detachUnder(runner, dir, detached);
  return { unmounted, detached, left: [...mountsLeft, ...loopsLeft] };
}
