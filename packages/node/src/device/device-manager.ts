// The port between the CSI services and PMEM: one interface, one implementation per device mode
// (lvm, direct, emulated, fake), chosen by `createDeviceManager(mode)`. Every method lists the
// errors it may throw; callers map them to gRPC codes at the RPC edge (via their `kind`).
// Implementations log what they did to one volume (its VG, namespace, loop device) at debug: the
// CSI layer logs each volume created or deleted at info once, with its device (volumes/volumes.ts).
import type { VolumeDeviceMode } from '@pmem-csi/api';
import {
  AlreadyExistsError,
  FailedPreconditionError,
  NotFoundError,
  ResourceExhaustedError,
  type Capacity,
} from '@pmem-csi/csi';

/** One volume's block device as the device manager sees it. */
export interface PmemDeviceInfo {
  /** The volume id (LV name, namespace name, backing file name). */
  readonly volumeId: string;
  /** Block device path to mkfs/mount, e.g. /dev/ndbus0region0fsdax/<id>, /dev/pmem0.1, /dev/loop3. */
  readonly path: string;
  /** Usable size in bytes (after rounding/alignment; never smaller than requested). */
  readonly size: number;
  /** Whether the device supports DAX mounts (false for emulated/fake and sector-mode devices). */
  readonly dax: boolean;
}

/** Per-call options: every device operation can be aborted (tied to the gRPC deadline). */
export interface DeviceCallOptions {
  readonly signal?: AbortSignal;
}

export interface CreateDeviceRequest {
  readonly volumeId: string;
  /** Requested size in bytes (> 0); implementations round up to their granularity. */
  readonly size: number;
  /** `FileIO` asks for a sector-mode (non-DAX) device where the mode supports it. */
  readonly usage?: 'AppDirect' | 'FileIO';
}

/** Options of `allocationSize`. */
export interface AllocationOptions extends DeviceCallOptions {
  /**
   * The id of an existing device: the answer is the size `resizeDevice(grow, size)` would leave it
   * with (never less than it has). Without it: the size `createDevice({ size })` would give.
   */
  readonly grow?: string;
}

/** Volume already exists with that id (create). */
export class DeviceExistsError extends AlreadyExistsError {}
/** No device with that id (get, delete when the caller needs it to exist). */
export class DeviceNotFoundError extends NotFoundError {}
/** The device is open/mounted and cannot be erased or removed. */
export class DeviceInUseError extends FailedPreconditionError {}
/** The request does not fit; the message names the largest size that would. */
export class NotEnoughSpaceError extends ResourceExhaustedError {}
/**
 * A device cannot grow to the requested size: its pool (the volume group, the emulated or fake pool)
 * lacks the space. `maxSize` is the largest size it can grow to now, so that callers can name the
 * free bytes (the node-controller answers OUT_OF_RANGE with them, as the CSI expansion table asks).
 */
export class NotEnoughSpaceToGrowError extends NotEnoughSpaceError {
  constructor(
    message: string,
    readonly maxSize: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface DeviceManager {
  /** One of @pmem-csi/api's VOLUME_DEVICE_MODES (every mode a node runs in, fake included; the CRD offers three). */
  readonly mode: VolumeDeviceMode;
  /**
   * Prepare the backing store (lvm: namespaces + volume groups; emulated: backing directory,
   * re-attach loop devices). Idempotent; called once at start-up before any other method.
   */
  setup(options?: DeviceCallOptions): Promise<void>;
  /** Create a device. @throws DeviceExistsError, NotEnoughSpaceError */
  createDevice(req: CreateDeviceRequest, options?: DeviceCallOptions): Promise<PmemDeviceInfo>;
  /**
   * The device of a volume, or undefined when there is none: the lookup of the paths where absence
   * is expected (every CreateVolume checks for an existing device first), which therefore construct
   * no error (an Error captures a stack trace: a few percent of a create's CPU in the node's profile).
   */
  findDevice(volumeId: string, options?: DeviceCallOptions): Promise<PmemDeviceInfo | undefined>;
  /** The device of a volume that must exist. @throws DeviceNotFoundError */
  getDevice(volumeId: string, options?: DeviceCallOptions): Promise<PmemDeviceInfo>;
  /**
   * Remove a device, erasing it first when `erase` (whole device overwritten with zeros),
   * otherwise zeroing its first 4 KiB. Unknown id → resolves (idempotent).
   * @throws DeviceInUseError when it is open/mounted
   */
  deleteDevice(volumeId: string, erase: boolean, options?: DeviceCallOptions): Promise<void>;
  /** Every device this driver manages. */
  listDevices(options?: DeviceCallOptions): Promise<PmemDeviceInfo[]>;
  /** Capacity now. */
  getCapacity(options?: DeviceCallOptions): Promise<Capacity>;
  /**
   * The size a device of `size` bytes would get, with nothing created or changed: callers refuse a
   * size that the allocation unit pushes above capacity_range.limit_bytes BEFORE the device exists
   * or grows (CSI: the limit is a maximum; a refused request changes nothing). Exact for lvm
   * (extent size of the volume group), emulated and fake (their granularity); a lower bound in direct
   * mode for a new device (the kernel's page metadata reserve is known only once the namespace
   * exists; createDevice is never smaller). It does not check free space: createDevice and
   * resizeDevice name a shortage.
   * @throws InvalidArgumentError (not a positive byte count), DeviceNotFoundError (unknown `grow`),
   *   UnimplementedError (direct mode: a growth)
   */
  allocationSize(size: number, options?: AllocationOptions): Promise<number>;
  /**
   * Grow a device to at least `size` bytes (lvm, emulated, fake); a size it already has is a no-op.
   * @throws DeviceNotFoundError, NotEnoughSpaceToGrowError, UnimplementedError (direct mode cannot grow a namespace)
   */
  resizeDevice(volumeId: string, size: number, options?: DeviceCallOptions): Promise<PmemDeviceInfo>;
  /** Release resources held by the manager itself (not the devices). */
  close(): Promise<void>;
}
