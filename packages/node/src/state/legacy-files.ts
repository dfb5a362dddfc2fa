// The per-volume record files of the first state format (`<dir>/<volumeId>.json`, one atomically
// written JSON document each). Read only to migrate existing nodes: the store folds the readable
// ones into its journal and removes them once the journal is durable. Unreadable ones stay where
// they are (evidence for a human) and are reported at every start.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '@pmem-csi/csi';
import { decodeVolumeRecordFile, type VolumeRecord } from './volume-record.js';

export const LEGACY_SUFFIX = '.json';

/** A record that could not be used, and why; `line` is set for a line of the journal. */
export interface CorruptRecord {
  readonly path: string;
  readonly reason: string;
  readonly line?: number;
}

export interface LegacyRecords {
  readonly records: VolumeRecord[];
  /** Paths of the readable files (removed after migration). */
  readonly files: string[];
  readonly corrupt: CorruptRecord[];
}

/** Whether a directory entry is a record file of the first format. */
export function isLegacyRecordFile(name: string): boolean {
  return name.endsWith(LEGACY_SUFFIX) && !name.startsWith('.');
}

async function readOne(path: string, volumeId: string): Promise<{ record: VolumeRecord } | CorruptRecord | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { path, reason: errorMessage(e) };
  }
  try {
    const record = decodeVolumeRecordFile(JSON.parse(text));
    if (record.volumeId !== volumeId)
      return { path, reason: `volumeId ${JSON.stringify(record.volumeId)} does not match the file name` };
    return { record };
  } catch (e) {
    return { path, reason: errorMessage(e) };
  }
}

/** Read the record files among `names` (entries of `dir`). */
export async function readLegacyRecords(dir: string, names: readonly string[]): Promise<LegacyRecords> {
  const out: LegacyRecords = { records: [], files: [], corrupt: [] };
  for (const name of names.filter(isLegacyRecordFile).sort()) {
    const path = join(dir, name);
    const res = await readOne(path, name.slice(0, -LEGACY_SUFFIX.length));
    if (res === undefined) continue; // removed meanwhile
    if ('record' in res) {
      out.records.push(res.record);
      out.files.push(path);
    } else {
      out.corrupt.push(res);
    }
  }
  return out;
}
