// The volume records the Go driver (intel/pmem-csi v1.x) left on a node, taken over as ours.
// Its node kept one file per volume directly in its state directory, `/var/lib/<driver>/<id>.json`
// (its package pmem-state: created with O_EXCL, one JSON line {"id","size","parameters"}), where
// "parameters" are its stored volume settings: eraseafter, kataContainers, persistencyModel
// (normal, "none" = normal up to v0.6, ephemeral for inline volumes, cache), cacheSize, name (the
// CreateVolume name, or the kubelet's handle of an inline volume), size (inline volumes) and
// deviceMode (lvm, direct). Our store lives one level below, in `<stateDir>/volumes`, so the files
// never mix with ours. A file is converted into our record when every field means something this
// driver does the same way; otherwise it is refused with the reason (its device then stays an
// orphan: reported and never deleted by the node). The files are left in place, so that a roll
// back to the Go driver still finds them; the store removes one when it deletes that volume.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { formatVolumeContext, parseVolumeParameters, PMEM_DEVICE_MODES, type PmemDeviceMode } from '@pmem-csi/api';
import { errorMessage, InvalidArgumentError } from '@pmem-csi/csi';
import type { CorruptRecord } from './legacy-files.js';
import { SAFE_VOLUME_ID, validateVolumeRecord, type VolumeRecord } from './volume-record.js';

export const GO_RECORD_SUFFIX = '.json';

/** The Go driver's stored persistency models and what they are here. */
const PERSISTENCY: Readonly<Record<string, 'persistent' | 'ephemeral' | undefined>> = {
  normal: 'persistent',
  none: 'persistent', // its name up to v0.6
  ephemeral: 'ephemeral',
};
/** Keys of its stored parameters that become fields of our record, not parameters. */
const CONSUMED = new Set(['name', 'deviceMode', 'persistencyModel', 'size']);

export interface GoRecords {
  /** Converted records, by volume id. */
  readonly records: Map<string, VolumeRecord>;
  /** The file of each converted record. */
  readonly files: Map<string, string>;
  /** Files that were not converted, and why. */
  readonly refused: CorruptRecord[];
}

type Fields = Record<string, unknown>;

function stringMap(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError('"parameters" must be an object of strings');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new InvalidArgumentError(`"parameters.${k}" must be a string`);
    out[k] = v;
  }
  return out;
}

function goDeviceMode(params: Record<string, string>): PmemDeviceMode {
  const mode = params['deviceMode'];
  const known: readonly string[] = PMEM_DEVICE_MODES;
  if (mode === undefined || !known.includes(mode)) {
    throw new InvalidArgumentError(
      `"parameters.deviceMode" must be lvm or direct (the Go driver stores the mode that made the volume), got ${JSON.stringify(mode ?? '')}`,
    );
  }
  return mode as PmemDeviceMode;
}

function goPersistency(params: Record<string, string>): 'persistent' | 'ephemeral' {
  const model = params['persistencyModel'] ?? 'normal';
  const kind = PERSISTENCY[model];
  if (kind === undefined) {
    const why = model === 'cache' ? 'cache volumes (one volume on several nodes) are not supported' : 'unknown';
    throw new InvalidArgumentError(
      `"parameters.persistencyModel" ${JSON.stringify(model)}: ${why}; taken over: normal, none, ephemeral`,
    );
  }
  return kind;
}

/** The three fields of a Go driver record file, checked. @throws InvalidArgumentError */
function goFields(value: unknown, fileId: string): { id: string; size: number; params: Record<string, string> } {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError('a Go driver volume record must be a JSON object {"id","size","parameters"}');
  const o = value as Fields;
  const id = o['id'];
  if (typeof id !== 'string' || id !== fileId)
    throw new InvalidArgumentError(`"id" ${JSON.stringify(id)} does not match the file name ${fileId}.json`);
  const size = o['size'];
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    throw new InvalidArgumentError(`"size" must be a whole number of bytes >= 0, got ${JSON.stringify(size)}`);
  return { id, size, params: stringMap(o['parameters']) };
}

/**
 * Our record of one Go driver file (`fileId`: the file name without .json; `createdAt`: the file's
 * modification time, the Go driver kept none).
 * @throws InvalidArgumentError naming the field and what is taken over
 */
export function convertGoRecord(value: unknown, fileId: string, createdAt: string): VolumeRecord {
  const { id, size, params } = goFields(value, fileId);
  const deviceMode = goDeviceMode(params);
  const ephemeral = goPersistency(params) === 'ephemeral';
  const name = params['name'];
  if (name === undefined || name === '')
    throw new InvalidArgumentError('"parameters.name" is missing: the volume name cannot be known');
  const settings = Object.fromEntries(Object.entries(params).filter(([k]) => !CONSUMED.has(k)));
  const parsed = parseVolumeParameters(settings, 'volumeContext');
  if (!parsed.ok) throw new InvalidArgumentError(parsed.message);
  return validateVolumeRecord({
    volumeId: id,
    name,
    // It asked its device manager for 1 byte when the request had no size (CSI allows none).
    size: Math.max(size, 1),
    deviceMode,
    parameters: formatVolumeContext({ ...parsed.value, name: undefined, deviceMode: undefined }),
    createdAt,
    ...(ephemeral ? { ephemeral: true } : {}),
  });
}

/** Whether a directory entry may be a Go driver record file: `<volume id>.json`. */
export function isGoRecordFile(name: string): boolean {
  return name.endsWith(GO_RECORD_SUFFIX) && SAFE_VOLUME_ID.test(name.slice(0, -GO_RECORD_SUFFIX.length));
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/** Read and convert the Go driver's record files in `dir` (its state directory). */
export async function readGoRecords(dir: string): Promise<GoRecords> {
  const out: GoRecords = { records: new Map(), files: new Map(), refused: [] };
  for (const name of (await entries(dir)).filter(isGoRecordFile).sort()) {
    const path = join(dir, name);
    const id = name.slice(0, -GO_RECORD_SUFFIX.length);
    try {
      const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
      if (!info.isFile()) continue;
      out.records.set(id, convertGoRecord(JSON.parse(text), id, info.mtime.toISOString()));
      out.files.set(id, path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR') continue;
      out.refused.push({ path, reason: `Go driver volume record not taken over: ${errorMessage(e)}` });
    }
  }
  return out;
}
