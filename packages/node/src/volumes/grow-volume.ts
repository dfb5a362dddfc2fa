// Growing a volume's device, shared by ControllerExpandVolume (node-controller service) and
// NodeExpandVolume (CSI Node service, which grows the device itself when the CO skipped the
// controller call): the device manager never shrinks, so retries are harmless, and the record keeps
// the new size. Sizes the volume cannot take are OUT_OF_RANGE, the CSI expansion table's code for an
// unsupported capacity (it has no RESOURCE_EXHAUSTED row): a limit below the size the volume
// already has (volumes never shrink), a growth its pool has no room for, and any growth in direct
// mode, whose namespaces have a fixed size — there a request the volume already satisfies is OK, so
// a retry or a PVC edit back to the old size never fails. The limit is checked against the size the
// device manager says the growth would give (its allocation unit rounds up) BEFORE anything grows:
// CSI's limit_bytes is a maximum, and a device cannot be shrunk back, so growing first and refusing
// afterwards left a volume bigger than the caller allowed.
import { NotEnoughSpaceToGrowError, type PmemDeviceInfo } from '../device/device-manager.js';
import { canExpand, type NodeServiceDeps } from './deps.js';
import { parametersOf } from './volumes.js';
import { type SizeRange, InternalError, InvalidArgumentError, OutOfRangeError } from '@pmem-csi/csi';

/** The OUT_OF_RANGE for a growth the volume's pool has no room for: requested growth, free bytes, node. */
function noRoomToGrow(
  deps: Pick<NodeServiceDeps, 'nodeId'>,
  current: PmemDeviceInfo,
  required: number,
  e: NotEnoughSpaceToGrowError,
): OutOfRangeError {
  const free = Math.max(0, e.maxSize - current.size);
  return new OutOfRangeError(
    `volume ${current.volumeId} on node ${deps.nodeId} cannot grow by ${required - current.size} bytes (from ${current.size} to ${required} bytes): only ${free} bytes are free for it on node ${deps.nodeId}, so it can grow to at most ${e.maxSize} bytes`,
    { cause: e },
  );
}

/** Direct mode (namespaces cannot grow): OK when the volume is big enough, else OUT_OF_RANGE. */
function fixedSize(deps: NodeServiceDeps, current: PmemDeviceInfo, required: number): PmemDeviceInfo {
  if (required <= current.size) return current;
  throw new OutOfRangeError(
    `volume ${current.volumeId} on node ${deps.nodeId} is a direct-mode namespace of ${current.size} bytes and cannot grow (requested ${required} bytes); use lvm mode for volumes that grow`,
  );
}

/**
 * Kata Containers volumes (issue 26): the image file inside the volume has a fixed size and the
 * guest sees it as an NVDIMM of that size, so a growth is OUT_OF_RANGE before the device grows (a
 * grown device would leave the image as it was); a request the volume already satisfies is OK.
 */
function kataFixedSize(deps: NodeServiceDeps, current: PmemDeviceInfo, required: number): PmemDeviceInfo {
  if (required <= current.size) return current;
  throw new OutOfRangeError(
    `volume ${current.volumeId} on node ${deps.nodeId} has kataContainers "true": its Kata Containers image file has a fixed size, so the volume cannot grow from ${current.size} to ${required} bytes; create a larger volume and copy the data`,
  );
}

/** OUT_OF_RANGE unless the size a growth to `range.required` would give stays within `range.limit`. */
async function checkLimit(
  deps: NodeServiceDeps,
  current: PmemDeviceInfo,
  range: SizeRange,
  signal?: AbortSignal,
): Promise<void> {
  if (range.limit === 0 || range.required <= current.size) return; // no growth: the caller checked the size it has
  const size = await deps.dm.allocationSize(range.required, { grow: current.volumeId, signal });
  if (size <= range.limit) return;
  throw new OutOfRangeError(
    `volume ${current.volumeId} on node ${deps.nodeId} cannot grow to capacity_range.required_bytes ${range.required}: its device would have ${size} bytes (rounded up to the allocation unit of ${deps.dm.mode} mode), above capacity_range.limit_bytes ${range.limit}; it keeps its ${current.size} bytes`,
  );
}

async function resize(
  deps: NodeServiceDeps,
  current: PmemDeviceInfo,
  range: SizeRange & { kata: boolean },
  signal?: AbortSignal,
): Promise<PmemDeviceInfo> {
  const { required } = range;
  if (!canExpand(deps)) return fixedSize(deps, current, required);
  if (range.kata) return kataFixedSize(deps, current, required);
  await checkLimit(deps, current, range, signal);
  try {
    return await deps.dm.resizeDevice(current.volumeId, required, { signal });
  } catch (e) {
    if (e instanceof NotEnoughSpaceToGrowError) throw noRoomToGrow(deps, current, required, e);
    throw e;
  }
}

/**
 * Grow a volume's device to at least `range.required` and update its record; a volume already that
 * big is returned as it is. Callers hold the lock. @throws OutOfRangeError (see the file header)
 */
export async function growVolume(
  deps: NodeServiceDeps,
  volumeId: string,
  range: SizeRange,
  signal?: AbortSignal,
): Promise<PmemDeviceInfo> {
  if (range.required === 0)
    throw new InvalidArgumentError('capacity_range.required_bytes is required and must be greater than 0');
  const record = await deps.state.get(volumeId);
  const current = await deps.dm.getDevice(volumeId, { signal });
  if (range.limit > 0 && current.size > range.limit) {
    throw new OutOfRangeError(
      `volume ${volumeId} on node ${deps.nodeId} already has ${current.size} bytes, more than capacity_range.limit_bytes ${range.limit}; volumes never shrink`,
    );
  }
  const kata = record !== undefined && parametersOf(record, deps.log).kataContainers;
  const device = await resize(deps, current, { ...range, kata }, signal);
  if (record !== undefined && record.size !== device.size) await deps.state.put({ ...record, size: device.size });
  // Only a device manager whose allocationSize is wrong gets here: answering OK would report a
  // capacity above the limit, and the record already holds the truth.
  if (range.limit > 0 && device.size > range.limit) {
    throw new InternalError(
      `volume ${volumeId} on node ${deps.nodeId} grew to ${device.size} bytes, above capacity_range.limit_bytes ${range.limit}, although its ${deps.dm.mode} device manager said it would stay within`,
    );
  }
  return device;
}
