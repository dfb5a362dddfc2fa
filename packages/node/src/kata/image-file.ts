// Kata Containers image files on the host: create one inside a mounted volume (layout.ts: MBR, DAX
// info block, filesystem at 2 MiB), and bind its filesystem to a loop device for runc containers.
// Host tools (fallocate, losetup, mkfs.*) run through the one command runner with the mount layer's
// time limits; a missing tool is the runner's CommandNotFoundError (FAILED_PRECONDITION, naming the
// package). Creation is crash-consistent: the file is built under a hidden partial name and renamed
// into place only when complete and synced, so a node killed midway finds either no image (the
// partial one is removed and rebuilt) or a complete one (kept: it may already hold data).
import { open, rename, rm, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { renderCommand, runJson, CommandFailedError, type CommandRunner } from '@pmem-csi/runtime';
import { FailedPreconditionError, type FsType } from '@pmem-csi/csi';
import { checkFilesystemFits, mkfsCommand } from '../mount/filesystem.js';
import { TOOL_TIMEOUTS, type ToolCallOptions } from '../mount/tool-options.js';
import {
  alignImageSize,
  daxInfoBlock,
  DATA_OFFSET,
  IMAGE_FILE_NAME,
  INFO_BLOCK_OFFSET,
  INFO_BLOCK_SIZE,
  isDaxInfoBlock,
  masterBootRecord,
} from './layout.js';

export interface ImageRequest {
  /** The volume, for messages. */
  readonly volumeId: string;
  /** Mounted filesystem of the volume: the image is created in its root. */
  readonly dir: string;
  /** Filesystem inside the image. */
  readonly fsType: FsType;
  /** Image size; default: as large as the filesystem of `dir` can allocate. Rounded down to 2 MiB. */
  readonly sizeBytes?: number;
  /** Called when the partial image is allocated and has its header, before its filesystem is made (crash tests). */
  readonly afterHeader?: () => void;
}

export interface ImageFile {
  readonly path: string;
  /** Size of the image file. */
  readonly sizeBytes: number;
  /** Size of the filesystem area (from DATA_OFFSET to the end). */
  readonly dataBytes: number;
  /** False when a complete image was there already. */
  readonly created: boolean;
}

/** Blocks kept free in the volume's filesystem for the image's own metadata, tried in turn (fallocate may need extent blocks). */
const OVERHEAD_BLOCKS = [64, 1024, 16384] as const;

/** Path of the image file in a mounted volume. */
export function imagePath(dir: string): string {
  return join(dir, IMAGE_FILE_NAME);
}

function partialPath(dir: string): string {
  return join(dir, `.${IMAGE_FILE_NAME}.partial`);
}

/** The image of `dir` when a complete one exists (its info block valid), else undefined. @throws FailedPreconditionError when the file is there but no image */
export async function findImageFile(dir: string): Promise<Omit<ImageFile, 'created'> | undefined> {
  const path = imagePath(dir);
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const handle = await open(path, 'r');
  try {
    const block = Buffer.alloc(INFO_BLOCK_SIZE);
    const { bytesRead } = await handle.read(block, 0, INFO_BLOCK_SIZE, INFO_BLOCK_OFFSET);
    if (bytesRead !== INFO_BLOCK_SIZE || !isDaxInfoBlock(block) || size <= DATA_OFFSET)
      throw new FailedPreconditionError(
        `${path} exists but is not a Kata Containers image file (no valid DAX info block at byte ${INFO_BLOCK_OFFSET}); it was not made by PMEM-CSI, move it away`,
      );
  } finally {
    await handle.close();
  }
  return { path, sizeBytes: size, dataBytes: size - DATA_OFFSET };
}

/** Create the image file in `req.dir` unless a complete one is there. */
export async function createImageFile(
  runner: CommandRunner,
  req: ImageRequest,
  o: ToolCallOptions = {},
): Promise<ImageFile> {
  const existing = await findImageFile(req.dir);
  if (existing !== undefined) return { ...existing, created: false };
  const partial = partialPath(req.dir);
  await detachImage(runner, partial, o); // a crash may have left the mkfs loop device bound to it
  await rm(partial, { force: true });
  try {
    const sizeBytes = await allocate(runner, req, partial, o);
    await writeHeader(partial, sizeBytes);
    req.afterHeader?.();
    await makeInnerFilesystem(runner, { ...req, path: partial, sizeBytes }, o);
    await syncFile(partial);
    await rename(partial, imagePath(req.dir));
    await syncFile(req.dir);
    return { path: imagePath(req.dir), sizeBytes, dataBytes: sizeBytes - DATA_OFFSET, created: true };
  } catch (e) {
    await rm(partial, { force: true }).catch(() => undefined);
    throw e;
  }
}

/** Reserve the image's blocks (fallocate: the VM must never hit ENOSPC on the host); returns the size. */
async function allocate(runner: CommandRunner, req: ImageRequest, path: string, o: ToolCallOptions): Promise<number> {
  const sizes = req.sizeBytes !== undefined ? [alignImageSize(req.sizeBytes)] : await candidateSizes(req.dir);
  let last: unknown;
  for (const size of sizes) {
    const dataBytes = size - DATA_OFFSET;
    if (dataBytes <= 0)
      throw new FailedPreconditionError(
        `volume ${req.volumeId}: ${size} bytes are too small for a Kata Containers image file (it needs more than ${DATA_OFFSET} bytes: a 2 MiB header, then the filesystem)`,
      );
    checkFilesystemFits(req.fsType, dataBytes, req.volumeId);
    try {
      await runner.run('fallocate', ['--length', String(size), path], {
        signal: o.signal,
        timeoutMs: TOOL_TIMEOUTS.format,
      });
      return size;
    } catch (e) {
      if (!(e instanceof CommandFailedError)) throw e;
      last = e;
      await rm(path, { force: true });
    }
  }
  throw last;
}

/** Sizes to try when the image fills its filesystem: free space minus a growing reserve, 2 MiB aligned. */
async function candidateSizes(dir: string): Promise<number[]> {
  const fs = await statfs(dir);
  return OVERHEAD_BLOCKS.map((reserve) => alignImageSize(Math.max(0, fs.bavail - reserve) * fs.bsize));
}

async function writeHeader(path: string, sizeBytes: number): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.write(masterBootRecord(sizeBytes), 0, 512, 0);
    await handle.write(daxInfoBlock(), 0, INFO_BLOCK_SIZE, INFO_BLOCK_OFFSET);
  } finally {
    await handle.close();
  }
}

async function makeInnerFilesystem(
  runner: CommandRunner,
  img: { fsType: FsType; path: string; sizeBytes: number },
  o: ToolCallOptions,
): Promise<void> {
  const device = await attachImage(runner, img.path, o);
  try {
    const { command, args } = innerMkfsCommand(img.fsType, device, img.sizeBytes - DATA_OFFSET);
    await runner.run(command, args, { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.format });
  } finally {
    await runner.run('losetup', ['--detach', device], { timeoutMs: TOOL_TIMEOUTS.query });
  }
}

/**
 * mkfs of the inner filesystem: the volume's DAX geometry (mount/filesystem.ts), without discard —
 * a discard on a loop device punches holes into its backing file, and the image must stay
 * allocated (fallocate) so that writes from the VM never meet ENOSPC on the host. Exported for tests.
 */
export function innerMkfsCommand(
  fsType: FsType,
  device: string,
  dataBytes: number,
): { command: string; args: string[] } {
  const { command, args } = mkfsCommand(fsType, device, dataBytes);
  if (fsType === 'xfs') return { command, args: ['-K', ...args] };
  // mke2fs keeps only the last -E, so nodiscard joins the existing extended options.
  return { command, args: args.map((a, i) => (args[i - 1] === '-E' ? `${a},nodiscard` : a)) };
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The loop device over the filesystem area of image `path` (offset 2 MiB): the one already bound
 * to exactly that range (losetup --nooverlap), else a new one. Returns the device node.
 */
export async function attachImage(runner: CommandRunner, path: string, o: ToolCallOptions = {}): Promise<string> {
  const size = (await stat(path)).size;
  const args = [
    '--find',
    '--show',
    '--nooverlap',
    '--offset',
    String(DATA_OFFSET),
    '--sizelimit',
    String(size - DATA_OFFSET),
    path,
  ];
  const res = await runner.run('losetup', args, { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.mount });
  const device = res.stdout.trim();
  if (!/^\/dev\/loop\d+$/.test(device))
    throw new CommandFailedError(
      `${renderCommand('losetup', args)}: no loop device in its output ${JSON.stringify(device)}`,
      renderCommand('losetup', args),
      0,
      '',
    );
  return device;
}

/** Loop devices bound to image `path` (any offset). */
export async function imageLoopDevices(
  runner: CommandRunner,
  path: string,
  o: ToolCallOptions = {},
): Promise<string[]> {
  const args = ['--json', '--list', '--associated', path, '--output', 'NAME'];
  return runJson(
    runner,
    { command: 'losetup', args, options: { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.query } },
    (v) => {
      if (v === undefined) return [];
      const list = (v as { loopdevices?: unknown } | null)?.loopdevices;
      if (!Array.isArray(list)) throw new TypeError('losetup JSON: "loopdevices" is not an array');
      return list.map((e: unknown) => {
        const name = (e as { name?: unknown } | null)?.name;
        if (typeof name !== 'string') throw new TypeError('losetup JSON: a loop device has no "name"');
        return name;
      });
    },
  );
}

/** Detach every loop device bound to image `path` (none, or the file gone: nothing to do). */
/**
 * How long detachImage waits for the kernel to let go of the image: `losetup --detach` of a loop
 * device that is still open (the filesystem on it only just unmounted) only marks it for removal,
 * and until it is gone its backing file keeps the volume's filesystem busy (the crash campaign saw
 * `umount <staging>: target is busy` right after a successful detach).
 */
export const DETACH_SETTLE_MS = 10_000;

export async function detachImage(
  runner: CommandRunner,
  path: string,
  o: ToolCallOptions & { settleMs?: number } = {},
): Promise<string[]> {
  try {
    await stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const devices = await imageLoopDevices(runner, path, o);
  for (const device of devices)
    await runner.run('losetup', ['--detach', device], { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.query });
  if (devices.length === 0) return devices;
  const settleMs = o.settleMs ?? DETACH_SETTLE_MS;
  const deadline = Date.now() + settleMs;
  for (;;) {
    const left = await imageLoopDevices(runner, path, o);
    if (left.length === 0) return devices;
    if (Date.now() >= deadline)
      throw new FailedPreconditionError(
        `the Kata Containers image ${path} is still bound to ${left.join(', ')} ${settleMs / 1000} s after they were detached: something holds them open (a mount of the image's filesystem, perhaps in another mount namespace); unmount it, then retry`,
      );
    o.signal?.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
