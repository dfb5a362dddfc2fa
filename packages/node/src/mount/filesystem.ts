// Filesystems on PMEM devices: detect what a device holds (blkid), create ext4/xfs with the
// geometry that DAX wants (4 KiB blocks, 2 MiB alignment, no reflink on xfs: reflink and dax
// exclude each other), set the xfs extent size hint, and grow a filesystem after the device grew:
// a mounted one (online), or an unmounted ext4 before it is mounted (offline, which needs no
// CAP_SYS_RESOURCE: hosts and containers without it can still grow ext4 volumes that are expanded
// while no pod uses them). Parameters follow the Go driver, so volumes it formatted look the same.
import { GiB, XFS_MIN_BYTES, type FsType, InternalError, OutOfRangeError } from '@pmem-csi/csi';
import type { CommandRunner } from '@pmem-csi/runtime';
import { TOOL_TIMEOUTS, type ToolCallOptions } from './tool-options.js';

// mkfs.xfs (6.x) refuses filesystems below 300 MiB ("Filesystem must be larger than 300MB"):
// XFS_MIN_BYTES, defined once in @pmem-csi/csi, where CreateVolume raises xfs volumes to it.
export { XFS_MIN_BYTES };
/**
 * With a stripe unit set, mkfs.xfs picks "multi-disk" allocation groups (8 for small devices);
 * below 1 GiB those get too small for the 64 MiB minimum log and mkfs fails ("Log size must be at
 * least 64MB"). Four groups, the single-disk default, fit from 300 MiB on.
 */
const XFS_SMALL_DEVICE = GiB;

/** What blkid found on a device. */
export interface DeviceSignature {
  /** Filesystem (or other content) type, e.g. "ext4", "xfs", "swap". */
  readonly type?: string;
  /** Partition table type, e.g. "dos", "gpt". */
  readonly ptType?: string;
}

/** Parse `blkid -o export` output (KEY=value lines). */
export function parseBlkidExport(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return out;
}

/** What the device holds; undefined when blkid finds nothing (exit code 2). Probes the device itself (-p), not the cache. */
export async function probeDevice(
  runner: CommandRunner,
  device: string,
  o: ToolCallOptions = {},
): Promise<DeviceSignature | undefined> {
  const res = await runner.run('blkid', ['-p', '-o', 'export', device], {
    signal: o.signal,
    timeoutMs: TOOL_TIMEOUTS.query,
    okExitCodes: [0, 2],
  });
  if (res.exitCode === 2) return undefined;
  const kv = parseBlkidExport(res.stdout);
  const sig: DeviceSignature = {
    ...(kv['TYPE'] ? { type: kv['TYPE'] } : {}),
    ...(kv['PTTYPE'] ? { ptType: kv['PTTYPE'] } : {}),
  };
  return sig.type === undefined && sig.ptType === undefined ? undefined : sig;
}

/** Refuse xfs on devices mkfs.xfs cannot format. @throws OutOfRangeError */
export function checkFilesystemFits(fsType: FsType, sizeBytes: number, volumeId: string): void {
  if (fsType === 'xfs' && sizeBytes < XFS_MIN_BYTES) {
    throw new OutOfRangeError(
      `volume ${JSON.stringify(volumeId)} has ${sizeBytes} bytes, but xfs needs at least ${XFS_MIN_BYTES} bytes (300 MiB); use ext4 or a larger volume`,
    );
  }
}

/** The mkfs command for a device of `sizeBytes` (exported for tests). */
export function mkfsCommand(fsType: FsType, device: string, sizeBytes: number): { command: string; args: string[] } {
  if (fsType === 'ext4') {
    // -b 4096: small devices would otherwise get 1 KiB blocks, and dax needs page-sized blocks.
    return { command: 'mkfs.ext4', args: ['-b', '4096', '-E', 'stride=512,stripe_width=512', '-F', device] };
  }
  const data = sizeBytes < XFS_SMALL_DEVICE ? 'su=2m,sw=1,agcount=4' : 'su=2m,sw=1';
  return { command: 'mkfs.xfs', args: ['-b', 'size=4096', '-m', 'reflink=0', '-d', data, '-f', device] };
}

/** Create a filesystem on `device` (overwrites whatever is there: callers probe first). */
export async function makeFilesystem(
  runner: CommandRunner,
  req: { fsType: FsType; device: string; sizeBytes: number },
  o: ToolCallOptions = {},
): Promise<void> {
  const { command, args } = mkfsCommand(req.fsType, req.device, req.sizeBytes);
  await runner.run(command, args, { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.format });
}

/** xfs: 2 MiB extent size hint on the root directory (inherited by new files), so DAX can map huge pages. */
export async function setXfsExtentSize(
  runner: CommandRunner,
  mountpoint: string,
  o: ToolCallOptions = {},
): Promise<void> {
  await runner.run('xfs_io', ['-c', 'extsize 2m', mountpoint], { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.query });
}

/** Grow a mounted filesystem to fill its (already grown) device. */
export async function growFilesystem(
  runner: CommandRunner,
  req: { fsType: FsType; device: string; mountpoint: string },
  o: ToolCallOptions = {},
): Promise<void> {
  const opts = { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.format };
  if (req.fsType === 'ext4') await runner.run('resize2fs', [req.device], opts);
  else await runner.run('xfs_growfs', ['-d', req.mountpoint], opts);
}

/** The size of an ext4 filesystem, from its superblock (`dumpe2fs -h`). */
export interface Ext4Geometry {
  readonly blockCount: number;
  readonly blockSize: number;
}

/** Parse `dumpe2fs -h` output; undefined when it lacks the block count or size. */
export function parseExt4Geometry(text: string): Ext4Geometry | undefined {
  const count = /^Block count:\s+(\d+)\s*$/m.exec(text)?.[1];
  const size = /^Block size:\s+(\d+)\s*$/m.exec(text)?.[1];
  if (count === undefined || size === undefined) return undefined;
  return { blockCount: Number(count), blockSize: Number(size) };
}

export async function ext4Geometry(
  runner: CommandRunner,
  device: string,
  o: ToolCallOptions = {},
): Promise<Ext4Geometry> {
  const res = await runner.run('dumpe2fs', ['-h', device], { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.query });
  const geometry = parseExt4Geometry(res.stdout);
  if (geometry === undefined)
    throw new InternalError(`dumpe2fs -h ${device} printed no "Block count" and "Block size"`);
  return geometry;
}

/**
 * Grow the UNMOUNTED ext4 filesystem on `device` to fill it, when the device has room for at least
 * one more block: e2fsck -f -p first (resize2fs refuses a filesystem that was not checked since it
 * was last mounted; -p repairs only what is safe without questions and fails otherwise), then
 * resize2fs. Returns whether it grew. Callers make sure nothing mounts the device meanwhile (e2fsck
 * also refuses a mounted filesystem).
 */
export async function growExt4Offline(
  runner: CommandRunner,
  req: { device: string; sizeBytes: number },
  o: ToolCallOptions = {},
): Promise<boolean> {
  const { blockCount, blockSize } = await ext4Geometry(runner, req.device, o);
  if (Math.floor(req.sizeBytes / blockSize) <= blockCount) return false;
  const opts = { signal: o.signal, timeoutMs: TOOL_TIMEOUTS.format };
  // Exit 1: errors were corrected. 4 and up (left uncorrected, or an operational error) throw.
  await runner.run('e2fsck', ['-f', '-p', req.device], { ...opts, okExitCodes: [0, 1] });
  await runner.run('resize2fs', [req.device], opts);
  return true;
}
