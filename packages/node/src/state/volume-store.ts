// The node's volume state: one JSON file per volume, `<dir>/<volumeId>.json`, so that the node
// remembers what it created across restarts. Writes replace the file atomically (never O_EXCL:
// the Go driver created its state files exclusively, so every later update failed). A record that
// cannot be read is logged with its path and skipped: one bad file must not stop the node.
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage, InvalidArgumentError, nullLogger, type Logger } from '@pmem-csi/runtime';
import { fsyncDir, isTempFile, writeFileAtomic, type StepHook } from './atomic-file.js';
import { decodeVolumeRecordFile, encodeVolumeRecordFile, SAFE_VOLUME_ID, validateVolumeRecord, type VolumeRecord } from './volume-record.js';

const SUFFIX = '.json';

export interface VolumeStateStoreOptions {
  /** Directory of the record files, e.g. /var/lib/<driver>/volumes. */
  dir: string;
  log?: Logger;
  /** Observes the steps of every atomic write (tests). */
  onWriteStep?: StepHook;
}

/** A record file that could not be used, and why. */
export interface CorruptRecord {
  readonly path: string;
  readonly reason: string;
}

export class VolumeStateStore {
  readonly dir: string;
  readonly #log: Logger;
  readonly #onWriteStep: StepHook | undefined;

  constructor(options: VolumeStateStoreOptions) {
    this.dir = options.dir;
    this.#log = (options.log ?? nullLogger).child({ component: 'volume-state' });
    this.#onWriteStep = options.onWriteStep;
  }

  /** Create the directory and remove temp files left by a crash mid-write. Call once at start-up. */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const leftovers = (await readdir(this.dir)).filter(isTempFile);
    for (const name of leftovers) {
      this.#log.info('removing temp file left by an interrupted write', { path: join(this.dir, name) });
      await rm(join(this.dir, name), { force: true });
    }
    if (leftovers.length > 0) await fsyncDir(this.dir);
  }

  /** Create or replace the record of `record.volumeId`. @throws InvalidArgumentError for a bad record */
  async put(record: VolumeRecord): Promise<void> {
    const valid = validateVolumeRecord(record);
    await writeFileAtomic(this.#path(valid.volumeId), encodeVolumeRecordFile(valid), this.#onWriteStep);
  }

  /** The record of a volume; undefined when there is none or it is unreadable (logged). */
  async get(volumeId: string): Promise<VolumeRecord | undefined> {
    const res = await this.#read(this.#path(volumeId), volumeId);
    if (res === undefined || 'record' in res) return res?.record;
    this.#reportCorrupt(res);
    return undefined;
  }

  /** Remove a volume's record; removing a missing record succeeds. */
  async delete(volumeId: string): Promise<void> {
    await rm(this.#path(volumeId), { force: true });
    await fsyncDir(this.dir);
  }

  /** Every readable record, sorted by volume id; unreadable ones are logged and skipped. */
  async list(): Promise<VolumeRecord[]> {
    const { records, corrupt } = await this.scan();
    corrupt.forEach((c) => this.#reportCorrupt(c));
    return records;
  }

  /** Every record file, split into readable records and corrupt files (not logged). */
  async scan(): Promise<{ records: VolumeRecord[]; corrupt: CorruptRecord[] }> {
    const records: VolumeRecord[] = [];
    const corrupt: CorruptRecord[] = [];
    for (const name of await this.#recordFiles()) {
      const res = await this.#read(join(this.dir, name), name.slice(0, -SUFFIX.length));
      if (res === undefined) continue; // removed meanwhile
      if ('record' in res) records.push(res.record);
      else corrupt.push(res);
    }
    records.sort((a, b) => a.volumeId.localeCompare(b.volumeId));
    return { records, corrupt };
  }

  async #recordFiles(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((n) => n.endsWith(SUFFIX) && !n.startsWith('.'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
  }

  #path(volumeId: string): string {
    if (!SAFE_VOLUME_ID.test(volumeId)) throw new InvalidArgumentError(`volumeId ${JSON.stringify(volumeId)} is not a safe file name`);
    return join(this.dir, `${volumeId}${SUFFIX}`);
  }

  async #read(path: string, volumeId: string): Promise<{ record: VolumeRecord } | CorruptRecord | undefined> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      return { path, reason: errorMessage(e) };
    }
    try {
      const record = decodeVolumeRecordFile(JSON.parse(text));
      if (record.volumeId !== volumeId) return { path, reason: `volumeId ${JSON.stringify(record.volumeId)} does not match the file name` };
      return { record };
    } catch (e) {
      return { path, reason: errorMessage(e) };
    }
  }

  #reportCorrupt(c: CorruptRecord): void {
    this.#log.error('skipping unreadable volume record', { path: c.path, reason: c.reason });
  }
}
