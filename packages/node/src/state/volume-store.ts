// The node's volume state: what the node created, remembered across restarts. Records live in
// memory (loaded once by init(), so get/list never touch the disk and a put never reads first);
// every put/delete is appended to one journal file (`<dir>/journal.log`, format in
// journal-format.ts) and resolves only after the fdatasync of the batch it went out in. Group
// commit: while one batch is being written and synced, new mutations queue and go out together in
// the next batch, so concurrent callers share fsyncs. Memory changes only after the batch is
// durable; a failed write or fsync rejects every mutation of its batch, and the next batch first
// rewrites the journal from memory (the file may hold frames nobody acknowledged).
//
// Compaction (journal > max(compactAfter, 4 × live records) entries) and every other rewrite
// (first start, migration, torn tail, recovery after a failed write) replace the journal with
// header + damaged lines (byte for byte) + one put per live record, through replaceFileAtomic:
//   1. write a temp file  2. fsync it  3. rename it over journal.log  4. fsync the directory.
// A crash before 3 leaves the old journal (complete: every acknowledged entry was fdatasynced) and
// a temp file that init() removes; after 3 the name points at the new file, whose content was
// durable before the rename. Nothing is appended (so nothing acknowledged) until 4 has returned.
//
// Migration: init() reads the per-volume files of the first format (`<volumeId>.json`), folds the
// readable ones into the journal (the journal wins for a volume it already knows: such a file is
// one whose removal a crash interrupted) and removes them only after the journal rewrite returned.
// Unreadable ones stay in place and are reported at every start. A node downgrade is not
// supported: an older driver does not read journal.log, would see no records and report every
// device as an orphan (it never deletes orphans, so no data is lost, but its state would be empty).
//
// Why a journal and not per-volume files with grouped directory fsyncs: per-file stores need one
// fsync of each record's temp file, and each put/delete costs open/write/close/rename/unlink calls
// on top; the journal needs one write + one fdatasync per batch, whatever its size. At c=1 every
// mutation must be durable before it returns either way (2 fdatasyncs per pair: put and delete), so
// disk latency bounds both; at c=32 the journal shares its fdatasyncs among the mutations waiting
// (group commit), so pairs per second rise by an order of magnitude and the CPU per pair stays well
// inside the node's budget. packages/node/bench/state.bench.ts measures it (one pair = get, put,
// get, delete, as CreateVolume + DeleteVolume do); the figures of the three designs are in
// e2e/bench/README.md, "Figures from the code's comments".
// Take-over of the Go driver's records (go-records.ts): a store in `<stateDir>/volumes` also reads
// the Go driver's `<stateDir>/<id>.json` files at init(); those it converts and its journal does
// not know yet go into the journal (one rewrite), those it refuses are reported like unreadable
// records. The Go files stay for a roll back; delete() removes the one of the volume it deletes.
// One record that cannot be read never stops the node: it is logged with its path (and journal
// line) at init, skipped, and listed by scan().
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { nullLogger, type Logger } from '@pmem-csi/runtime';
import { errorMessage, InvalidArgumentError, UnavailableError } from '@pmem-csi/csi';
import { fsyncDir, type StepHook, type SyncHook } from './atomic-file.js';
import { deleteFrame, headerFrame, JOURNAL_FILE, putFrame } from './journal-format.js';
import { JournalWriter } from './journal-writer.js';
import { GO_RECORD_SUFFIX, readGoRecords, type GoRecords } from './go-records.js';
import type { CorruptRecord } from './legacy-files.js';
import { loadState, sortRecords, type LoadedState } from './state-loader.js';
import { SAFE_VOLUME_ID, validateVolumeRecord, type VolumeRecord } from './volume-record.js';

/** Below this many journal entries there is no compaction (and above 4× the live records). */
export const DEFAULT_COMPACT_AFTER = 4096;

export interface VolumeStateStoreOptions {
  /** Directory of the state, e.g. /var/lib/<driver>/volumes. One store per directory. */
  dir: string;
  log?: Logger;
  /** Observes the steps of every atomic rewrite of the journal (tests stop there like a crash). */
  onWriteStep?: StepHook;
  /** Called and awaited before every fsync/fdatasync the store issues (tests count or fail them). */
  onSync?: SyncHook;
  /** Compact when the journal holds more entries than this and than 4× the live records. */
  compactAfter?: number;
  /**
   * The Go driver's state directory, whose `<id>.json` records init() takes over (go-records.ts);
   * null: none. Default: the parent of `dir` when `dir` is `<stateDir>/volumes`, else none.
   */
  goStateDir?: string | null;
}

/** The name of the store's directory inside the driver's state directory. */
export const STORE_SUBDIR = 'volumes';

function defaultGoStateDir(dir: string): string | null {
  return basename(resolve(dir)) === STORE_SUBDIR ? dirname(resolve(dir)) : null;
}

interface Mutation {
  readonly volumeId: string;
  readonly frame: string;
  readonly apply: () => void;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

const NEWLINE = Buffer.from('\n');

export class VolumeStateStore {
  readonly dir: string;
  readonly #log: Logger;
  readonly #journal: JournalWriter;
  readonly #onSync: SyncHook | undefined;
  readonly #compactAfter: number;
  readonly #goDir: string | null;
  /** The Go driver's record file of each volume that has one (removed when the volume is deleted). */
  readonly #goFiles = new Map<string, string>();
  #records = new Map<string, VolumeRecord>();
  #corrupt: CorruptRecord[] = [];
  /** The Go driver's records this store did not take over, by the volume id of their file name. */
  readonly #goRefused = new Map<string, CorruptRecord>();
  /** Damaged journal lines: kept by every rewrite, for a human to look at. */
  #carried: Buffer[] = [];
  #state: 'new' | 'open' | 'closed' = 'new';
  #queue: Mutation[] = [];
  #flushing: Promise<void> | undefined;
  /** Volumes with a mutation queued or being written (a delete of one of them is not a no-op). */
  readonly #inflight = new Map<string, number>();

  constructor(options: VolumeStateStoreOptions) {
    this.dir = options.dir;
    this.#log = (options.log ?? nullLogger).child({ component: 'volume-state' });
    this.#onSync = options.onSync;
    this.#journal = new JournalWriter(join(this.dir, JOURNAL_FILE), {
      onStep: options.onWriteStep,
      onSync: options.onSync,
    });
    this.#compactAfter = options.compactAfter ?? DEFAULT_COMPACT_AFTER;
    const goDir = options.goStateDir === undefined ? defaultGoStateDir(this.dir) : options.goStateDir;
    this.#goDir = goDir === null || resolve(goDir) === resolve(this.dir) ? null : goDir;
  }

  /** Path of the journal file. */
  get journalPath(): string {
    return this.#journal.path;
  }

  /**
   * Load the state (migrating per-volume files, cutting a torn tail, removing temp files a crash
   * left) and open the journal. Call once at start-up, before anything else.
   * @throws FailedPreconditionError when the journal has another format version
   */
  async init(): Promise<void> {
    if (this.#state !== 'new') throw new Error('VolumeStateStore.init() may be called only once');
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const loaded = await loadState(this.dir);
    this.#report(loaded);
    this.#records = loaded.records;
    this.#corrupt = loaded.corrupt;
    this.#carried = loaded.journal?.damaged.map((d) => d.raw) ?? [];
    const takenOver = this.#takeOverGo(this.#goDir === null ? undefined : await readGoRecords(this.#goDir));
    await this.#removeLeftovers(loaded.leftovers);
    await this.#openJournal(loaded, takenOver > 0);
    await this.#removeMigrated(loaded.legacy.files);
    this.#state = 'open';
  }

  /** Create or replace the record of `record.volumeId`; resolves once durable. @throws InvalidArgumentError for a bad record */
  async put(record: VolumeRecord): Promise<void> {
    this.#requireOpen();
    const valid = validateVolumeRecord(record);
    return this.#enqueue(valid.volumeId, putFrame(valid), () => this.#records.set(valid.volumeId, valid));
  }

  /** The record of a volume; undefined when there is none. */
  async get(volumeId: string): Promise<VolumeRecord | undefined> {
    this.#requireLoaded();
    checkVolumeId(volumeId);
    return this.#records.get(volumeId);
  }

  /**
   * Why the Go driver's record of `volumeId` was not taken over, when it was not: its device is not
   * this driver's to change (docs/migration.md), so DeleteVolume refuses it.
   */
  goRecordRefused(volumeId: string): CorruptRecord | undefined {
    return this.#goRefused.get(volumeId);
  }

  /** Remove a volume's record; resolves once durable. Removing a missing record succeeds (and writes nothing). */
  async delete(volumeId: string): Promise<void> {
    this.#requireOpen();
    checkVolumeId(volumeId);
    if (!this.#records.has(volumeId) && !this.#inflight.has(volumeId)) return;
    await this.#enqueue(volumeId, deleteFrame(volumeId), () => this.#records.delete(volumeId));
    await this.#removeGoFile(volumeId);
  }

  /** Add the Go driver's records the journal does not know; report the refused ones. Returns how many were added. */
  #takeOverGo(go: GoRecords | undefined): number {
    if (go === undefined) return 0;
    let added = 0;
    for (const [id, record] of go.records) {
      this.#goFiles.set(id, go.files.get(id) ?? '');
      if (this.#records.has(id)) continue;
      this.#records.set(id, record);
      added++;
      this.#log.info("took over the Go driver's volume record", {
        volumeId: id,
        name: record.name,
        deviceMode: record.deviceMode,
        path: go.files.get(id),
      });
    }
    for (const r of go.refused) {
      this.#log.error("the Go driver's volume record is not taken over", { ...r });
      this.#goRefused.set(basename(r.path, GO_RECORD_SUFFIX), r);
    }
    this.#corrupt.push(...go.refused);
    return added;
  }

  /** Remove the Go driver's file of a deleted volume (a failure is logged: the next init() drops the record again). */
  async #removeGoFile(volumeId: string): Promise<void> {
    const path = this.#goFiles.get(volumeId);
    if (path === undefined || this.#goDir === null) return;
    try {
      await rm(path, { force: true });
      await fsyncDir(this.#goDir, this.#onSync);
      this.#goFiles.delete(volumeId);
    } catch (e) {
      this.#log.warn("could not remove the Go driver's record file of a deleted volume", {
        volumeId,
        path,
        error: errorMessage(e),
      });
    }
  }

  /** Every record, sorted by volume id (unreadable ones were logged by init()). */
  async list(): Promise<VolumeRecord[]> {
    this.#requireLoaded();
    return sortRecords(this.#records.values());
  }

  /** The records, and what init() found unreadable and skipped. */
  async scan(): Promise<{ records: VolumeRecord[]; corrupt: CorruptRecord[] }> {
    return { records: await this.list(), corrupt: [...this.#corrupt] };
  }

  /** Resolves when nothing is queued or being written (a compaction included). */
  async idle(): Promise<void> {
    while (this.#flushing !== undefined) await this.#flushing;
  }

  /** Let queued mutations finish, then close the journal; later mutations are rejected (Unavailable). */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    await this.idle();
    await this.#journal.close();
  }

  #requireLoaded(): void {
    if (this.#state === 'new') throw new Error('VolumeStateStore.init() has not been called');
  }

  #requireOpen(): void {
    this.#requireLoaded();
    if (this.#state === 'closed')
      throw new UnavailableError('the volume state store is closed (the node is shutting down)');
  }

  #enqueue(volumeId: string, frame: string, apply: () => void): Promise<void> {
    this.#inflight.set(volumeId, (this.#inflight.get(volumeId) ?? 0) + 1);
    const done = new Promise<void>((resolve, reject) => this.#queue.push({ volumeId, frame, apply, resolve, reject }));
    this.#flushing ??= this.#flush();
    return done;
  }

  async #flush(): Promise<void> {
    await Promise.resolve(); // mutations started in the same tick go out in the first batch
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      await this.#commit(batch);
    }
    this.#flushing = undefined;
  }

  /** Write one batch; never throws (the batch's promises carry the outcome). */
  async #commit(batch: readonly Mutation[]): Promise<void> {
    try {
      if (this.#journal.needsRewrite) await this.#rewrite();
      await this.#journal.append(Buffer.from(batch.map((m) => m.frame).join('')), batch.length);
    } catch (e) {
      this.#log.error(
        'volume journal write failed: its mutations are rejected, the journal is rewritten before the next one',
        {
          path: this.#journal.path,
          mutations: batch.length,
          error: errorMessage(e),
        },
      );
      this.#settle(batch, e);
      return;
    }
    this.#settle(batch);
    if (this.#journal.lines > Math.max(this.#compactAfter, 4 * this.#records.size)) await this.#compact();
  }

  #settle(batch: readonly Mutation[], error?: unknown): void {
    for (const m of batch) {
      const left = (this.#inflight.get(m.volumeId) ?? 1) - 1;
      if (left === 0) this.#inflight.delete(m.volumeId);
      else this.#inflight.set(m.volumeId, left);
      if (error !== undefined) {
        m.reject(error);
        continue;
      }
      m.apply();
      m.resolve();
    }
  }

  async #compact(): Promise<void> {
    const before = this.#journal.lines;
    try {
      await this.#rewrite();
      this.#log.debug('volume journal compacted', {
        path: this.#journal.path,
        entriesBefore: before,
        entries: this.#journal.lines,
      });
    } catch (e) {
      // Nothing is lost: the next batch rewrites the journal before it appends.
      this.#log.warn('volume journal compaction failed', { path: this.#journal.path, error: errorMessage(e) });
    }
  }

  /** Replace the journal with header + carried damaged lines + the live records. */
  async #rewrite(): Promise<void> {
    const live = sortRecords(this.#records.values());
    const parts = [
      Buffer.from(headerFrame()),
      ...this.#carried.flatMap((raw) => [raw, NEWLINE]),
      Buffer.from(live.map(putFrame).join('')),
    ];
    await this.#journal.rewrite(Buffer.concat(parts), this.#carried.length + live.length);
  }

  async #openJournal(loaded: LoadedState, added: boolean): Promise<void> {
    const journal = loaded.journal;
    if (journal !== undefined && journal.version === undefined) {
      // No readable header: keep the file as it was for a human before it is replaced.
      const copy = `${this.#journal.path}.unreadable-${Date.now()}`;
      await copyFile(this.#journal.path, copy);
      this.#log.error('volume journal has no readable header; kept a copy and rewrote it from the readable entries', {
        path: this.#journal.path,
        copy,
      });
    }
    if (
      journal === undefined ||
      journal.version === undefined ||
      journal.tornTail !== undefined ||
      loaded.legacy.files.length > 0 ||
      added
    ) {
      await this.#rewrite();
      return;
    }
    await this.#journal.resume(journal.goodBytes, journal.lines);
  }

  #report(loaded: LoadedState): void {
    const tail = loaded.journal?.tornTail;
    if (tail !== undefined) {
      this.#log.warn(
        'discarding the torn tail of the volume journal (a write cut short by a crash, never acknowledged)',
        {
          path: this.#journal.path,
          line: tail.line,
          bytes: tail.bytes,
        },
      );
    }
    for (const c of loaded.corrupt) this.#log.error('skipping unreadable volume record', { ...c });
  }

  async #removeLeftovers(names: readonly string[]): Promise<void> {
    for (const name of names) {
      this.#log.info('removing temp file left by an interrupted write', { path: join(this.dir, name) });
      await rm(join(this.dir, name), { force: true });
    }
  }

  /** Remove per-volume files whose records the (durable) journal now holds. */
  async #removeMigrated(files: readonly string[]): Promise<void> {
    if (files.length === 0) return;
    for (const path of files) await rm(path, { force: true });
    await fsyncDir(this.dir, this.#onSync);
    this.#log.info('migrated per-volume record files into the volume journal', {
      path: this.#journal.path,
      records: files.length,
    });
  }
}

function checkVolumeId(volumeId: string): void {
  if (!SAFE_VOLUME_ID.test(volumeId))
    throw new InvalidArgumentError(`volumeId ${JSON.stringify(volumeId)} is not a safe file name`);
}
