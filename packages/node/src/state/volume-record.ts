// The node's persistent record of one volume, and its validation. Records are written before the
// device is made (intent first), so they must be readable by every later version: each file
// carries a schema version, and reading validates every field instead of trusting the disk.
import { VOLUME_DEVICE_MODES, type VolumeDeviceMode } from '@pmem-csi/api';
import { InvalidArgumentError } from '@pmem-csi/csi';

/** Version of the on-disk format; bump it (and keep reading the old one) when fields change meaning. */
export const VOLUME_RECORD_SCHEMA = 1;

/** Volume ids become file names: no separators, no leading dot or dash, bounded length. */
export const SAFE_VOLUME_ID = /^[A-Za-z0-9_+][A-Za-z0-9_.+-]{0,127}$/;

export interface VolumeRecord {
  readonly volumeId: string;
  /** The CSI volume name (CreateVolume) or the pod volume handle (ephemeral). */
  readonly name: string;
  /** Size in bytes as requested from the device manager. */
  readonly size: number;
  /** The mode whose device manager owns the device (a node may switch modes; volumes keep theirs). */
  readonly deviceMode: VolumeDeviceMode;
  /** Parameters the volume was created with (StorageClass / ephemeral volume attributes). */
  readonly parameters: Readonly<Record<string, string>>;
  /** ISO 8601 time of creation. */
  readonly createdAt: string;
  readonly ephemeral?: boolean;
}

/** What a record file holds. */
export interface VolumeRecordFile extends VolumeRecord {
  readonly schemaVersion: number;
}

type Fields = Record<string, unknown>;

function str(o: Fields, key: string): string {
  const v = o[key];
  if (typeof v !== 'string' || v === '') throw new InvalidArgumentError(`${key} must be a non-empty string`);
  return v;
}

function parameters(o: Fields): Record<string, string> {
  const v = o['parameters'];
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new InvalidArgumentError('parameters must be an object of strings');
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') throw new InvalidArgumentError(`parameters.${k} must be a string`);
    out[k] = val;
  }
  return out;
}

function volumeId(o: Fields): string {
  const id = str(o, 'volumeId');
  if (!SAFE_VOLUME_ID.test(id)) {
    throw new InvalidArgumentError(
      `volumeId ${JSON.stringify(id)} is not a safe file name (1-128 of A-Z a-z 0-9 _ + . -, not starting with . or -)`,
    );
  }
  return id;
}

function size(o: Fields): number {
  const v = o['size'];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0)
    throw new InvalidArgumentError('size must be a positive whole number of bytes');
  return v;
}

function deviceMode(o: Fields): VolumeDeviceMode {
  const v = o['deviceMode'];
  if (!VOLUME_DEVICE_MODES.includes(v as VolumeDeviceMode))
    throw new InvalidArgumentError(`deviceMode must be one of ${VOLUME_DEVICE_MODES.join(', ')}`);
  return v as VolumeDeviceMode;
}

function createdAt(o: Fields): string {
  const v = str(o, 'createdAt');
  if (Number.isNaN(Date.parse(v))) throw new InvalidArgumentError('createdAt must be an ISO 8601 time');
  return v;
}

/** Validate a record (from a caller or from disk); unknown fields are dropped. @throws InvalidArgumentError */
export function validateVolumeRecord(value: unknown): VolumeRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidArgumentError('a volume record must be a JSON object');
  const o = value as Fields;
  const record = {
    volumeId: volumeId(o),
    name: str(o, 'name'),
    size: size(o),
    deviceMode: deviceMode(o),
    parameters: parameters(o),
    createdAt: createdAt(o),
  };
  const ephemeral = o['ephemeral'];
  if (ephemeral === undefined) return record;
  if (typeof ephemeral !== 'boolean') throw new InvalidArgumentError('ephemeral must be a boolean');
  return { ...record, ephemeral };
}

/** Decode a record file's JSON value; checks the schema version first. @throws InvalidArgumentError */
export function decodeVolumeRecordFile(value: unknown): VolumeRecord {
  const version = (value as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (version !== VOLUME_RECORD_SCHEMA) {
    throw new InvalidArgumentError(
      `schemaVersion ${JSON.stringify(version)} is not supported (this driver reads ${VOLUME_RECORD_SCHEMA})`,
    );
  }
  return validateVolumeRecord(value);
}

/** The file content of a (validated) record. */
export function encodeVolumeRecordFile(record: VolumeRecord): string {
  const file: VolumeRecordFile = { schemaVersion: VOLUME_RECORD_SCHEMA, ...record };
  return `${JSON.stringify(file, null, 2)}\n`;
}
