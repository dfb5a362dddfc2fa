// The `fake` device manager: volumes exist only in memory, so scale tests can run thousands of
// volumes on any machine and unit tests of the CSI services need no root. It keeps the contract of
// the real managers (rounding, exact capacity accounting, every documented error), records the
// erasures it would have done, and lets tests mark devices as in use to provoke DeviceInUseError.
import { nullLogger, type Logger } from '@pmem-csi/runtime';
import {
  DeviceExistsError,
  DeviceInUseError,
  DeviceNotFoundError,
  type AllocationOptions,
  type CreateDeviceRequest,
  type DeviceCallOptions,
  type DeviceManager,
  type PmemDeviceInfo,
} from './device-manager.js';
import { GiB, MiB, type Capacity, AbortedError, FailedPreconditionError } from '@pmem-csi/csi';
import { SpaceLedger } from './space-ledger.js';

export const FAKE_DEVICE_DIR = '/dev/fake';
export const FAKE_DEFAULT_SIZE = 1024 * GiB; // 1 TiB: room for scale tests
export const FAKE_DEFAULT_GRANULARITY = 4 * MiB;

/** The "backing store" of fake volumes (id → size); share it between managers to simulate a restart. */
export class FakeStore {
  readonly volumes = new Map<string, number>();
}

/** One erase the fake would have done on delete: the whole device, or its first 4 KiB. */
export interface FakeErasure {
  readonly volumeId: string;
  readonly bytes: number;
}

export interface FakeDeviceManagerOptions {
  /** Pool size in bytes (default 1 TiB). */
  totalSize?: number;
  /** Allocation unit in bytes (default 4 MiB). */
  granularity?: number;
  /** Volume ids whose devices count as open/mounted; tests add and remove ids at will. */
  inUse?: Set<string>;
  /** Existing volumes, e.g. the store of a previous manager (restart). */
  store?: FakeStore;
  log?: Logger;
}

/** How many erasures a fake remembers: fake mode also runs in long-lived test clusters. */
export const FAKE_ERASURE_LOG = 1000;

export class FakeDeviceManager implements DeviceManager {
  readonly mode = 'fake';
  /** The last FAKE_ERASURE_LOG erases done by deleteDevice, in order. */
  readonly erasures: FakeErasure[] = [];
  readonly inUse: Set<string>;
  readonly store: FakeStore;
  readonly #totalSize: number;
  readonly #granularity: number;
  readonly #log: Logger;
  #ledger: SpaceLedger | undefined;

  constructor(options: FakeDeviceManagerOptions = {}) {
    this.#totalSize = options.totalSize ?? FAKE_DEFAULT_SIZE;
    this.#granularity = options.granularity ?? FAKE_DEFAULT_GRANULARITY;
    this.inUse = options.inUse ?? new Set();
    this.store = options.store ?? new FakeStore();
    this.#log = (options.log ?? nullLogger).child({ deviceMode: 'fake' });
    // Validate sizes now rather than at setup, so a bad flag fails at start-up.
    new SpaceLedger(this.#totalSize, this.#granularity);
  }

  async setup(options?: DeviceCallOptions): Promise<void> {
    checkSignal(options);
    const ledger = new SpaceLedger(this.#totalSize, this.#granularity);
    for (const [id, size] of this.store.volumes) ledger.assign(id, size);
    this.#ledger = ledger;
    this.#log.info('fake device manager ready', { volumes: this.store.volumes.size, totalSize: this.#totalSize });
  }

  async createDevice(req: CreateDeviceRequest, options?: DeviceCallOptions): Promise<PmemDeviceInfo> {
    checkSignal(options);
    const ledger = this.#ready();
    if (ledger.has(req.volumeId))
      throw new DeviceExistsError(`device for volume ${JSON.stringify(req.volumeId)} already exists`);
    const size = ledger.reserve(req.volumeId, req.size);
    this.store.volumes.set(req.volumeId, size);
    return info(req.volumeId, size);
  }

  async findDevice(volumeId: string, options?: DeviceCallOptions): Promise<PmemDeviceInfo | undefined> {
    checkSignal(options);
    const size = this.#ready().sizeOf(volumeId);
    return size === undefined ? undefined : info(volumeId, size);
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
    if (this.inUse.has(volumeId)) {
      throw new DeviceInUseError(
        `device ${fakePath(volumeId)} of volume ${JSON.stringify(volumeId)} is in use (mounted or open)`,
      );
    }
    this.erasures.push({ volumeId, bytes: erase ? size : Math.min(4096, size) });
    if (this.erasures.length > FAKE_ERASURE_LOG) this.erasures.splice(0, this.erasures.length - FAKE_ERASURE_LOG);
    ledger.release(volumeId);
    this.store.volumes.delete(volumeId);
  }

  async listDevices(options?: DeviceCallOptions): Promise<PmemDeviceInfo[]> {
    checkSignal(options);
    this.#ready();
    return [...this.store.volumes].sort(([a], [b]) => a.localeCompare(b)).map(([id, size]) => info(id, size));
  }

  async getCapacity(options?: DeviceCallOptions): Promise<Capacity> {
    checkSignal(options);
    return this.#ready().capacity();
  }

  async allocationSize(size: number, options?: AllocationOptions): Promise<number> {
    checkSignal(options);
    const ledger = this.#ready();
    if (options?.grow !== undefined && !ledger.has(options.grow)) throw notFound(options.grow);
    return ledger.sizeFor(size, options?.grow);
  }

  async resizeDevice(volumeId: string, size: number, options?: DeviceCallOptions): Promise<PmemDeviceInfo> {
    checkSignal(options);
    const ledger = this.#ready();
    if (!ledger.has(volumeId)) throw notFound(volumeId);
    const newSize = ledger.grow(volumeId, size);
    this.store.volumes.set(volumeId, newSize);
    return info(volumeId, newSize);
  }

  async close(): Promise<void> {
    this.#ledger = undefined;
  }

  #ready(): SpaceLedger {
    if (this.#ledger === undefined)
      throw new FailedPreconditionError('fake device manager: setup() has not been called');
    return this.#ledger;
  }
}

function fakePath(volumeId: string): string {
  return `${FAKE_DEVICE_DIR}/${volumeId}`;
}

function info(volumeId: string, size: number): PmemDeviceInfo {
  return { volumeId, path: fakePath(volumeId), size, dax: false };
}

function notFound(volumeId: string): DeviceNotFoundError {
  return new DeviceNotFoundError(`no device for volume ${JSON.stringify(volumeId)}`);
}

function checkSignal(options: DeviceCallOptions | undefined): void {
  if (options?.signal?.aborted) throw new AbortedError('device operation cancelled by the caller');
}
