// The `emulated` device manager: real block devices on machines without PMEM, so that mkfs, mount
// and the whole stage/publish path run for real on a laptop and in CI. Each volume is a sparse
// file `<dir>/<volumeId>.img` attached to a loop device; the files are the persistent truth, so a
// restarted driver (or a rebooted host, which drops every loop device) finds its volumes again.
// Capacity is a configured pool handed out in 4 MiB units, like a volume group.
// Loop devices are shared with the rest of the host: we only ever erase, resize or detach a device
// after checking that its backing file is one of ours.
// A file appears under its final name only once it has its full size (written as `.<id>.img.creating`,
// then linked): a driver killed mid-create leaves a scratch file that setup() removes, never a
// short `<id>.img` that would be listed as a volume of the wrong size.
import { constants } from 'node:fs';
import { access, mkdir, realpath, rm, statfs, truncate } from 'node:fs/promises';
import { requireTools, SerialQueue, type CommandRunner, type Logger } from '@pmem-csi/runtime';
import {
  DeviceExistsError,
  DeviceNotFoundError,
  type AllocationOptions,
  type CreateDeviceRequest,
  type DeviceCallOptions,
  type DeviceManager,
  type PmemDeviceInfo,
} from './device-manager.js';
import {
  attachLoopDevice,
  boundTo,
  detachLoopDevice,
  fileIdentity,
  listLoopDevices,
  refreshLoopDevice,
  type LoopDevice,
} from './emulated-losetup.js';
import {
  formatBytes,
  GiB,
  MiB,
  type Capacity,
  AbortedError,
  FailedPreconditionError,
  InternalError,
} from '@pmem-csi/csi';
import {
  assertSafeId,
  backingFile,
  reportStrayLoops,
  scanBackingFiles,
  syncDirectory,
  writeBackingFile,
} from './emulated-files.js';
import { SpaceLedger } from './space-ledger.js';
import { claimExclusive, HEAD_ERASE_BYTES, zeroDevice } from './wipe.js';

export const EMULATED_DEFAULT_SIZE = 4 * GiB;
export const EMULATED_GRANULARITY = 4 * MiB;

export interface EmulatedDeviceManagerOptions {
  runner: CommandRunner;
  log: Logger;
  /** Backing directory of the volume files, e.g. `<stateDir>/emulated`. */
  dir: string;
  /** Pool size in bytes (default 4 GiB). */
  totalSize?: number;
  /** Effective uid, for tests (default: process.getuid()). */
  uid?: number;
  /** The loop control device, for tests (default /dev/loop-control). */
  loopControl?: string;
}

export class EmulatedDeviceManager implements DeviceManager {
  readonly mode = 'emulated';
  readonly #runner: CommandRunner;
  readonly #log: Logger;
  readonly #configuredDir: string;
  readonly #totalSize: number;
  readonly #loopControl: string;
  /** Serializes attach/detach so our own concurrent `losetup --find` calls never race. */
  readonly #losetup = new SerialQueue();
  /** Volume ids with a create, delete or resize in flight. */
  readonly #busy = new Set<string>();
  #devices = new Map<string, string>();
  #dir = '';
  #ledger: SpaceLedger | undefined;

  constructor(options: EmulatedDeviceManagerOptions) {
    const uid = options.uid ?? process.getuid?.();
    if (uid !== 0) {
      throw new FailedPreconditionError(
        `emulated device mode needs root to attach loop devices; running as uid ${String(uid)}`,
      );
    }
    requireTools(options.runner, ['losetup', 'dd'], 'emulated device mode');
    this.#runner = options.runner;
    this.#log = options.log.child({ deviceMode: 'emulated' });
    this.#configuredDir = options.dir;
    this.#totalSize = options.totalSize ?? EMULATED_DEFAULT_SIZE;
    this.#loopControl = options.loopControl ?? '/dev/loop-control';
    new SpaceLedger(this.#totalSize, EMULATED_GRANULARITY); // validates the sizes now
  }

  /** Create the backing directory and attach a loop device to every backing file that lacks one. */
  async setup(options?: DeviceCallOptions): Promise<void> {
    checkSignal(options);
    if (this.#busy.size > 0)
      throw new AbortedError('emulated device manager: setup() while device operations are in flight');
    await this.#checkLoopSupport();
    await mkdir(this.#configuredDir, { recursive: true, mode: 0o700 });
    this.#dir = await realpath(this.#configuredDir);
    const loops = await listLoopDevices(this.#runner, options?.signal);
    const files = await scanBackingFiles(this.#dir, loops, this.#log);
    const ledger = new SpaceLedger(this.#totalSize, EMULATED_GRANULARITY);
    const devices = new Map<string, string>();
    for (const [volumeId, size] of files) {
      devices.set(volumeId, await this.#adopt(volumeId, loops, options?.signal));
      ledger.assign(volumeId, size);
    }
    reportStrayLoops(this.#dir, loops, files, this.#log);
    this.#devices = devices;
    this.#ledger = ledger;
    await this.#checkHostSpace(ledger);
    this.#log.info('emulated device manager ready', {
      dir: this.#dir,
      volumes: files.size,
      totalSize: this.#totalSize,
      available: ledger.available,
    });
  }

  async createDevice(req: CreateDeviceRequest, options?: DeviceCallOptions): Promise<PmemDeviceInfo> {
    checkSignal(options);
    const ledger = this.#ready();
    assertSafeId(req.volumeId);
    if (ledger.has(req.volumeId))
      throw new DeviceExistsError(`device for volume ${JSON.stringify(req.volumeId)} already exists`);
    const size = ledger.reserve(req.volumeId, req.size);
    this.#busy.add(req.volumeId);
    try {
      const path = await this.#materialize(req.volumeId, size, options?.signal);
      this.#devices.set(req.volumeId, path);
      this.#log.debug('created emulated device', { volumeId: req.volumeId, device: path, size });
      return info(req.volumeId, path, size);
    } catch (e) {
      ledger.release(req.volumeId);
      throw e;
    } finally {
      this.#busy.delete(req.volumeId);
    }
  }

  async findDevice(volumeId: string, options?: DeviceCallOptions): Promise<PmemDeviceInfo | undefined> {
    checkSignal(options);
    const ledger = this.#ready();
    const path = this.#devices.get(volumeId);
    const size = ledger.sizeOf(volumeId);
    return path === undefined || size === undefined ? undefined : info(volumeId, path, size);
  }

  async getDevice(volumeId: string, options?: DeviceCallOptions): Promise<PmemDeviceInfo> {
    const device = await this.findDevice(volumeId, options);
    if (device === undefined) throw notFound(volumeId);
    return device;
  }

  async deleteDevice(volumeId: string, erase: boolean, options?: DeviceCallOptions): Promise<void> {
    checkSignal(options);
    const ledger = this.#ready();
    const size = ledger.sizeOf(volumeId);
    if (size === undefined) return;
    this.#take(volumeId);
    try {
      const file = this.#file(volumeId);
      const devices = await this.#boundDevices(volumeId, options?.signal);
      await this.#eraseClaimed(volumeId, devices, erase ? size : Math.min(HEAD_ERASE_BYTES, size), options?.signal);
      await this.#detachOurs(file, options?.signal);
      await rm(file, { force: true });
      this.#devices.delete(volumeId);
      ledger.release(volumeId);
      this.#log.debug('deleted emulated device', { volumeId, devices, erased: erase ? 'all' : 'head' });
    } finally {
      this.#busy.delete(volumeId);
    }
  }

  async listDevices(options?: DeviceCallOptions): Promise<PmemDeviceInfo[]> {
    checkSignal(options);
    const ledger = this.#ready();
    return [...this.#devices]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([id, path]) => info(id, path, ledger.sizeOf(id) ?? 0));
  }

  async getCapacity(options?: DeviceCallOptions): Promise<Capacity> {
    checkSignal(options);
    return this.#ready().capacity();
  }

  async allocationSize(size: number, options?: AllocationOptions): Promise<number> {
    checkSignal(options);
    const ledger = this.#ready();
    const grow = options?.grow;
    if (grow !== undefined && !(this.#devices.has(grow) && ledger.has(grow))) throw notFound(grow);
    return ledger.sizeFor(size, grow);
  }

  async resizeDevice(volumeId: string, size: number, options?: DeviceCallOptions): Promise<PmemDeviceInfo> {
    checkSignal(options);
    const ledger = this.#ready();
    const path = this.#devices.get(volumeId);
    const old = ledger.sizeOf(volumeId);
    if (path === undefined || old === undefined) throw notFound(volumeId);
    this.#take(volumeId);
    try {
      const grown = ledger.grow(volumeId, size);
      if (grown !== old) await this.#growFile(volumeId, { path, old, grown }, options?.signal);
      // The file already has the size (a retry): a driver killed between growing the file and
      // refreshing the loop device left the device at the old size, so refresh it anyway.
      else await refreshLoopDevice(this.#runner, path, options?.signal);
      return info(volumeId, path, grown);
    } finally {
      this.#busy.delete(volumeId);
    }
  }

  /** Nothing to release: devices stay attached for the next start. */
  async close(): Promise<void> {
    this.#ledger = undefined;
  }

  #ready(): SpaceLedger {
    if (this.#ledger === undefined)
      throw new FailedPreconditionError('emulated device manager: setup() has not been called');
    return this.#ledger;
  }

  #take(volumeId: string): void {
    if (this.#busy.has(volumeId))
      throw new AbortedError(`an operation on the device of volume ${JSON.stringify(volumeId)} is already in progress`);
    this.#busy.add(volumeId);
  }

  #file(volumeId: string): string {
    return backingFile(this.#dir, volumeId);
  }

  async #checkLoopSupport(): Promise<void> {
    try {
      await access(this.#loopControl, constants.R_OK | constants.W_OK);
    } catch (e) {
      throw new FailedPreconditionError(
        `emulated device mode needs loop devices, but ${this.#loopControl} is not usable (${(e as Error).message}); load the "loop" kernel module and run privileged`,
        { cause: e },
      );
    }
  }

  /** The loop device of a backing file found at start-up, attaching one when it has none (after a reboot). */
  async #adopt(volumeId: string, loops: readonly LoopDevice[], signal?: AbortSignal): Promise<string> {
    const file = this.#file(volumeId);
    const bound = boundTo(loops, file, await fileIdentity(file));
    if (bound.length > 1)
      this.#log.warn('backing file is attached to several loop devices; using the first', {
        volumeId,
        devices: bound.map((l) => l.name),
      });
    if (bound[0] !== undefined) return bound[0].name;
    const path = await this.#losetup.run(() => attachLoopDevice(this.#runner, file, signal));
    this.#log.info('re-attached backing file', { volumeId, file, device: path });
    return path;
  }

  async #checkHostSpace(ledger: SpaceLedger): Promise<void> {
    if (ledger.available === 0)
      this.#log.warn('emulated pool is full or over-committed', { totalSize: this.#totalSize });
    const fs = await statfs(this.#dir);
    const free = fs.bavail * fs.bsize;
    if (free < ledger.available) {
      this.#log.warn('backing directory has less free space than the emulated pool offers; writes may fail', {
        dir: this.#dir,
        hostFree: formatBytes(free),
        poolAvailable: formatBytes(ledger.available),
      });
    }
  }

  /** Create the sparse backing file (emulated-files.ts) and attach it; removes the file again when attaching fails. */
  async #materialize(volumeId: string, size: number, signal?: AbortSignal): Promise<string> {
    const file = await writeBackingFile(this.#dir, volumeId, size);
    try {
      await syncDirectory(this.#dir);
      return await this.#losetup.run(() => attachLoopDevice(this.#runner, file, signal));
    } catch (e) {
      // An attach killed by the caller's deadline may have bound a device before dying.
      await this.#detachOurs(file).catch((err: unknown) =>
        this.#log.warn('could not detach after a failed create', { file, err }),
      );
      await rm(file, { force: true });
      throw e;
    }
  }

  /** Loop devices bound to the volume's file now, attaching one when none is (e.g. detached by hand). */
  async #boundDevices(volumeId: string, signal?: AbortSignal): Promise<string[]> {
    const file = this.#file(volumeId);
    const bound = boundTo(await listLoopDevices(this.#runner, signal), file, await fileIdentity(file)).map(
      (l) => l.name,
    );
    if (bound.length > 0) return bound;
    const path = await this.#losetup.run(() => attachLoopDevice(this.#runner, file, signal));
    this.#devices.set(volumeId, path);
    return [path];
  }

  /**
   * Claim every device bound to the file (any of them may be mounted), check again that the first
   * is still bound to our file (the claim pins the binding), then zero it.
   */
  async #eraseClaimed(
    volumeId: string,
    devices: readonly string[],
    bytes: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const handles = [];
    try {
      for (const dev of devices) handles.push(await claimExclusive(dev, volumeId));
      const [first] = devices;
      const file = this.#file(volumeId);
      const now = first === undefined ? [] : await listLoopDevices(this.#runner, signal, first);
      if (first === undefined || boundTo(now, file, await fileIdentity(file)).length !== 1) {
        throw new InternalError(
          `device ${String(first)} is no longer bound to ${this.#file(volumeId)}; not erasing it`,
        );
      }
      await zeroDevice(this.#runner, { path: first, bytes }, signal);
    } finally {
      await Promise.all(handles.map((h) => h.close()));
    }
  }

  /** Detach exactly the loop devices whose backing file is `file` (looked up right before). */
  async #detachOurs(file: string, signal?: AbortSignal): Promise<void> {
    await this.#losetup.run(async () => {
      const loops = await listLoopDevices(this.#runner, signal);
      // By identity (or path), and also a device whose file of this path was already deleted.
      const bound = [
        ...boundTo(loops, file, await fileIdentity(file)),
        ...loops.filter((l) => l.deleted && l.backFile === file),
      ];
      for (const l of bound) await detachLoopDevice(this.#runner, l.name, signal);
    });
  }

  async #growFile(
    volumeId: string,
    sizes: { path: string; old: number; grown: number },
    signal?: AbortSignal,
  ): Promise<void> {
    const file = this.#file(volumeId);
    try {
      await truncate(file, sizes.grown);
      try {
        await refreshLoopDevice(this.#runner, sizes.path, signal);
      } catch (e) {
        // The device still has its old size, so cutting the file back loses nothing.
        await truncate(file, sizes.old);
        throw e;
      }
    } catch (e) {
      this.#ready().assign(volumeId, sizes.old);
      throw e;
    }
    this.#log.info('resized emulated device', { volumeId, device: sizes.path, from: sizes.old, to: sizes.grown });
  }
}

function info(volumeId: string, path: string, size: number): PmemDeviceInfo {
  return { volumeId, path, size, dax: false };
}

function notFound(volumeId: string): DeviceNotFoundError {
  return new DeviceNotFoundError(`no device for volume ${JSON.stringify(volumeId)}`);
}

function checkSignal(options: DeviceCallOptions | undefined): void {
  if (options?.signal?.aborted) throw new AbortedError('device operation cancelled by the caller');
}
