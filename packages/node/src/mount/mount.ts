// mount/umount through the command runner: argument arrays only (a mount option can never smuggle
// in another argument), time limits, and the caller's AbortSignal. A read-only bind mount needs a
// second call (`mount -o remount,bind,ro`): `mount --bind -o ro` silently ignores `ro` on older
// util-linux/kernels.
import type { CommandRunner } from '@pmem-csi/runtime';
import { InternalError } from '@pmem-csi/csi';
import { findMountAt } from './findmnt.js';
import { TOOL_TIMEOUTS, type ToolCallOptions } from './tool-options.js';

export interface MountRequest {
  readonly source: string;
  readonly target: string;
  readonly fsType?: string;
  /** Single options, already validated (see mount-options.ts). */
  readonly options?: readonly string[];
}

/** The argument list of `mount` for a request (exported for tests). */
export function mountArgs(req: MountRequest): string[] {
  const args: string[] = [];
  if (req.fsType !== undefined) args.push('-t', req.fsType);
  if (req.options !== undefined && req.options.length > 0) args.push('-o', req.options.join(','));
  args.push(req.source, req.target);
  return args;
}

/** Mount a filesystem. */
export async function mountFilesystem(
  runner: CommandRunner,
  req: MountRequest,
  o: ToolCallOptions = {},
): Promise<void> {
  await runner.run('mount', mountArgs(req), { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.mount });
}

/** Bind-mount `source` (a directory or a device node) onto `target`, read-only when asked. */
export async function bindMount(
  runner: CommandRunner,
  req: { source: string; target: string; readonly: boolean },
  o: ToolCallOptions = {},
): Promise<void> {
  const opts = { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.mount };
  await runner.run('mount', ['--bind', req.source, req.target], opts);
  if (!req.readonly) return;
  try {
    await runner.run('mount', ['-o', 'remount,bind,ro', req.target], opts);
  } catch (e) {
    // Never leave a writable bind behind a failed read-only request.
    await runner.run('umount', [req.target], opts).catch(() => undefined);
    throw e;
  }
}

/** Unmount `target` once. */
export async function unmount(runner: CommandRunner, target: string, o: ToolCallOptions = {}): Promise<void> {
  await runner.run('umount', [target], { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.mount });
}

/** Unmount everything stacked on `target`; returns how many mounts were removed (0: nothing was mounted). */
export async function unmountAll(runner: CommandRunner, target: string, o: ToolCallOptions = {}): Promise<number> {
  let count = 0;
  // A bounded loop: a path cannot carry more stacked mounts than this in practice.
  for (let i = 0; i < 16; i++) {
    if ((await findMountAt(runner, target, o)) === undefined) return count;
    await unmount(runner, target, o);
    count++;
  }
  throw new InternalError(`${target}: still mounted after ${count} unmounts`);
}
