// Creating and deleting a volume = its device plus its record, shared by CreateVolume/DeleteVolume
// (node-controller service) and ephemeral inline volumes (NodePublish/NodeUnpublish). Intent comes
// first: the record is written before the device is made and removed after the device is gone, so
// a crash at any point leaves either a record without a device (dropped by start-up reconcile, and
// a retry creates the device) or a device with its record — never an untracked device. Callers
// hold the volume's lock.
import {
  formatVolumeContext,
  parseVolumeParameters,
  topologyKey,
  volumeIdForName,
  type VolumeParameters,
} from '@pmem-csi/api';
import type { Logger } from '@pmem-csi/runtime';
import type { DeviceManager, PmemDeviceInfo } from '../device/device-manager.js';
import type { VolumeRecord } from '../state/volume-record.js';
import type { NodeServiceDeps } from './deps.js';
import {
  sizeFits,
  type SizeRange,
  AlreadyExistsError,
  errorMessage,
  FailedPreconditionError,
  NotFoundError,
  OutOfRangeError,
  type csi,
} from '@pmem-csi/csi';

/** What a create asks for. */
export interface VolumeSpec {
  readonly volumeId: string;
  /** CreateVolume name, or the kubelet's volume handle for ephemeral volumes. */
  readonly name: string;
  /** Bytes to allocate when the volume does not exist yet. */
  readonly size: number;
  /** What an existing volume must satisfy to count as the same volume. */
  readonly range: SizeRange;
  readonly params: VolumeParameters;
  readonly ephemeral: boolean;
}

export interface ExistingVolume {
  readonly record: VolumeRecord;
  readonly device: PmemDeviceInfo;
}

const DEFAULT_PARAMETERS: VolumeParameters = {
  eraseAfter: true,
  kataContainers: false,
  usage: 'AppDirect',
  passthrough: {},
};

/**
 * The id under which a node keeps an ephemeral inline volume (device and record). The kubelet's
 * handle ("csi-" + 64 hex digits, 68 bytes) is longer than a direct-mode namespace name may be (63
 * bytes), so every mode keeps it as volumeIdForName(handle), the shape of controller-made ids; the
 * record keeps the handle as its name.
 */
export function ephemeralVolumeId(handle: string): string {
  return volumeIdForName(handle);
}

/**
 * The id a node keeps the volume of a kubelet volume handle under: the handle itself for volumes
 * made by CreateVolume, ephemeralVolumeId(handle) when that is the record of an ephemeral volume.
 */
export async function localVolumeId(deps: Pick<NodeServiceDeps, 'state'>, handle: string): Promise<string> {
  if ((await deps.state.get(handle)) !== undefined) return handle;
  const ephemeral = ephemeralVolumeId(handle);
  return (await deps.state.get(ephemeral))?.ephemeral === true ? ephemeral : handle;
}

/** The device of a volume, or undefined when there is none (no error is made for the absence: see DeviceManager.findDevice). */
export function findDevice(
  dm: DeviceManager,
  volumeId: string,
  signal?: AbortSignal,
): Promise<PmemDeviceInfo | undefined> {
  return dm.findDevice(volumeId, { signal });
}

/** The settings of a record (defaults, erase included, when an old or damaged record lacks them). */
export function parametersOf(record: VolumeRecord, log?: Logger): VolumeParameters {
  const parsed = parseVolumeParameters(record.parameters, 'volumeContext');
  if (parsed.ok) return parsed.value;
  log?.warn('volume record has unusable parameters; using the defaults (erase on delete)', {
    volumeId: record.volumeId,
    error: parsed.message,
  });
  return DEFAULT_PARAMETERS;
}

/** Whether the volume's record asks for a Kata Containers volume (issue 26); false when there is no record. */
export async function isKataVolume(deps: Pick<NodeServiceDeps, 'state' | 'log'>, volumeId: string): Promise<boolean> {
  const record = await deps.state.get(volumeId);
  return record !== undefined && parametersOf(record, deps.log).kataContainers;
}

/** The CSI Volume of a record and its device: volume_context with name and deviceMode, topology of this node. */
export function csiVolume(
  deps: Pick<NodeServiceDeps, 'driverName' | 'nodeId' | 'log'>,
  volume: ExistingVolume,
): csi.Volume {
  const { record, device } = volume;
  const params = parametersOf(record, deps.log);
  return {
    volume_id: record.volumeId,
    capacity_bytes: String(device.size),
    volume_context: formatVolumeContext({ ...params, name: record.name, deviceMode: record.deviceMode }),
    accessible_topology: [{ segments: { [topologyKey(deps.driverName)]: deps.nodeId } }],
  };
}

function mismatch(spec: VolumeSpec, existing: { record?: VolumeRecord; device: PmemDeviceInfo }): string | undefined {
  const { record, device } = existing;
  if (record !== undefined && (record.ephemeral ?? false) !== spec.ephemeral) {
    return record.ephemeral ? 'it is an ephemeral inline volume' : 'it is a persistent volume, not an ephemeral one';
  }
  if (!sizeFits(device.size, spec.range)) {
    const max = spec.range.limit > 0 ? ` and at most ${spec.range.limit}` : '';
    return `it has ${device.size} bytes; the request asks for at least ${spec.range.required}${max} bytes`;
  }
  if (record === undefined) return undefined;
  const have = parametersOf(record);
  if (have.usage !== spec.params.usage)
    return `it has usage ${JSON.stringify(have.usage)}, not ${JSON.stringify(spec.params.usage)}`;
  if (have.kataContainers !== spec.params.kataContainers)
    return `it has kataContainers ${String(have.kataContainers)}, not ${String(spec.params.kataContainers)}`;
  return undefined;
}

function newRecord(deps: NodeServiceDeps, spec: VolumeSpec, size: number): VolumeRecord {
  return {
    volumeId: spec.volumeId,
    name: spec.name,
    size,
    deviceMode: deps.dm.mode,
    parameters: formatVolumeContext({ ...spec.params, name: undefined, deviceMode: undefined }),
    createdAt: new Date().toISOString(),
    ...(spec.ephemeral ? { ephemeral: true } : {}),
  };
}

/**
 * The volume of `spec`, created when missing. Same id and compatible → the existing volume;
 * incompatible → AlreadyExists. A device without a record (state lost) is adopted when compatible.
 * @throws AlreadyExistsError, FailedPreconditionError, the device manager's errors (NotEnoughSpace → ResourceExhausted)
 */
export async function createOrFindVolume(
  deps: NodeServiceDeps,
  spec: VolumeSpec,
  signal?: AbortSignal,
): Promise<ExistingVolume & { created: boolean }> {
  const record = await deps.state.get(spec.volumeId);
  if (record !== undefined && record.deviceMode !== deps.dm.mode) throw otherMode(record, deps.dm.mode);
  const device = await findDevice(deps.dm, spec.volumeId, signal);
  if (device !== undefined) {
    const problem = mismatch(spec, { record, device });
    if (problem !== undefined)
      throw new AlreadyExistsError(
        `volume ${JSON.stringify(spec.name)} (id ${spec.volumeId}) already exists, but ${problem}`,
      );
    if (record !== undefined) return { record, device, created: false };
    deps.log.warn('adopting a device without a volume record (node state was lost)', {
      volumeId: spec.volumeId,
      device: device.path,
    });
    const adopted = newRecord(deps, spec, device.size);
    await deps.state.put(adopted);
    return { record: adopted, device, created: false };
  }
  return { ...(await createVolume(deps, spec, signal)), created: true };
}

/** capacity_range.required_bytes, and the size asked for when that differs (the default, a filesystem minimum). */
function requested(spec: VolumeSpec): string {
  const required = `capacity_range.required_bytes ${spec.range.required}`;
  return spec.size === spec.range.required ? required : `${spec.size} bytes (${required})`;
}

/**
 * OUT_OF_RANGE, before anything exists, when the device manager's allocation unit would push the
 * device above capacity_range.limit_bytes (CSI: the limit is a maximum, and a refused create leaves
 * nothing behind).
 */
async function checkLimit(deps: NodeServiceDeps, spec: VolumeSpec, signal?: AbortSignal): Promise<void> {
  if (spec.range.limit === 0) return;
  const size = await deps.dm.allocationSize(spec.size, { signal });
  if (size <= spec.range.limit) return;
  throw new OutOfRangeError(
    `volume ${JSON.stringify(spec.name)} cannot be created for ${requested(spec)}: its device would have ${size} bytes (rounded up to the allocation unit of ${deps.dm.mode} mode), above capacity_range.limit_bytes ${spec.range.limit}`,
  );
}

async function createVolume(deps: NodeServiceDeps, spec: VolumeSpec, signal?: AbortSignal): Promise<ExistingVolume> {
  await checkLimit(deps, spec, signal);
  const record = newRecord(deps, spec, spec.size);
  await deps.state.put(record);
  deps.hooks?.reached('create:after-record', spec.volumeId);
  let device: PmemDeviceInfo;
  try {
    device = await deps.dm.createDevice(
      { volumeId: spec.volumeId, size: spec.size, usage: spec.params.usage },
      { signal },
    );
  } catch (e) {
    await dropRecord(deps, spec.volumeId, e);
    throw e;
  }
  deps.hooks?.reached('create:after-device', spec.volumeId);
  // The prediction can fall short: direct mode knows the size only once the namespace exists
  // (allocationSize is a lower bound there), and in lvm mode a concurrent create can change the VG
  // a new LV lands in. A device above the limit after all is removed again, so nothing stays behind.
  if (spec.range.limit > 0 && device.size > spec.range.limit) {
    await deps.dm.deleteDevice(spec.volumeId, false, { signal });
    await deps.state.delete(spec.volumeId);
    throw new OutOfRangeError(
      `volume ${JSON.stringify(spec.name)} cannot be created for ${requested(spec)}: its device got ${device.size} bytes (more than the ${deps.dm.mode} device manager could tell beforehand), above capacity_range.limit_bytes ${spec.range.limit}; the device was removed again`,
    );
  }
  deps.log.info('volume created', {
    volumeId: spec.volumeId,
    name: spec.name,
    device: device.path,
    size: device.size,
    ephemeral: spec.ephemeral,
  });
  return { record, device };
}

async function dropRecord(deps: NodeServiceDeps, volumeId: string, cause: unknown): Promise<void> {
  try {
    await deps.state.delete(volumeId);
  } catch (e) {
    // Start-up reconcile drops it later (no device), so this is not fatal.
    deps.log.error('could not roll back the volume record after a failed create', {
      volumeId,
      error: errorMessage(e),
      cause: errorMessage(cause),
    });
  }
}

function otherMode(record: VolumeRecord, mode: string): FailedPreconditionError {
  return new FailedPreconditionError(
    `volume ${record.volumeId} was created in device mode ${record.deviceMode}; this node now runs in mode ${mode} and cannot manage it`,
  );
}

/**
 * Delete a volume's device (erasing it as its `eraseafter` says; whole-device erase when the record
 * is gone) and then its record. Unknown volume → resolves. Device in use, or a Go driver's volume
 * that was not taken over → FailedPrecondition.
 */
export async function deleteVolume(
  deps: NodeServiceDeps,
  volumeId: string,
  opts: { ephemeral: boolean; signal?: AbortSignal },
): Promise<void> {
  const record = await deps.state.get(volumeId);
  if (record !== undefined && record.deviceMode !== deps.dm.mode) throw otherMode(record, deps.dm.mode);
  const refused = record === undefined ? deps.state.goRecordRefused(volumeId) : undefined;
  if (refused !== undefined) {
    // Volumes of the Go driver that this one cannot take over are never touched (issue 31).
    throw new FailedPreconditionError(
      `volume ${volumeId} was made by the Go PMEM-CSI driver in a shape this driver does not take over (${refused.reason}); ` +
        `its device is left as it is: remove the device and ${refused.path} by hand (docs/migration.md)`,
    );
  }
  if (record?.ephemeral === true && !opts.ephemeral) {
    throw new FailedPreconditionError(
      `volume ${volumeId} is an ephemeral inline volume; it is deleted by NodeUnpublishVolume, not DeleteVolume`,
    );
  }
  const erase = record === undefined ? true : parametersOf(record, deps.log).eraseAfter;
  await deps.dm.deleteDevice(volumeId, erase, { signal: opts.signal });
  deps.hooks?.reached('delete:after-device', volumeId);
  if (record !== undefined) await deps.state.delete(volumeId);
  deps.log.info('volume deleted', { volumeId, erased: erase ? 'all' : 'head', hadRecord: record !== undefined });
}

/** The device of a volume. @throws NotFoundError naming the volume and node */
export async function requireDevice(
  deps: NodeServiceDeps,
  volumeId: string,
  signal?: AbortSignal,
): Promise<PmemDeviceInfo> {
  const device = await findDevice(deps.dm, volumeId, signal);
  if (device === undefined) throw new NotFoundError(`volume ${volumeId} does not exist on node ${deps.nodeId}`);
  return device;
}
