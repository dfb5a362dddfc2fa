// Reading a state directory without changing it: the journal (replayed), the record files of the
// first format (to migrate), and temp files a crash left. The store's init() acts on what this
// finds; readVolumeState() is the read-only view for tests and for a human debugging a node.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FailedPreconditionError } from '@pmem-csi/csi';
import { isTempFile } from './atomic-file.js';
import { JOURNAL_FILE, JOURNAL_VERSION, parseJournal, replay, type ParsedJournal } from './journal-format.js';
import { readLegacyRecords, type CorruptRecord, type LegacyRecords } from './legacy-files.js';
import type { VolumeRecord } from './volume-record.js';

export interface LoadedState {
  /** Journal replayed, then the readable legacy files of volumes the journal does not know. */
  readonly records: Map<string, VolumeRecord>;
  /** Undefined when there is no journal yet. */
  readonly journal: ParsedJournal | undefined;
  readonly legacy: LegacyRecords;
  /** Names of temp files left by an interrupted write. */
  readonly leftovers: string[];
  /** Damaged journal lines, then unreadable legacy files. */
  readonly corrupt: CorruptRecord[];
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

async function readJournal(path: string): Promise<ParsedJournal | undefined> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const parsed = parseJournal(buf);
  if (parsed.version !== undefined && parsed.version !== JOURNAL_VERSION) {
    // Written by a newer driver (downgrades are not supported): guessing could lose volumes.
    throw new FailedPreconditionError(
      `volume journal ${path} has format version ${String(parsed.version)}; this driver reads version ${JOURNAL_VERSION} (was the node downgraded?)`,
    );
  }
  return parsed;
}

/** Read everything in `dir`. @throws FailedPreconditionError for a journal of another format version */
export async function loadState(dir: string): Promise<LoadedState> {
  const names = await entries(dir);
  const path = join(dir, JOURNAL_FILE);
  const journal = await readJournal(path);
  const legacy = await readLegacyRecords(dir, names);
  const records = replay(journal?.entries ?? []);
  // The journal wins: a legacy file next to a journal is one whose removal a crash interrupted.
  for (const r of legacy.records) if (!records.has(r.volumeId)) records.set(r.volumeId, r);
  const corrupt = [
    ...(journal?.damaged ?? []).map((d) => ({ path, line: d.line, reason: d.reason })),
    ...legacy.corrupt,
  ];
  return { records, journal, legacy, leftovers: names.filter(isTempFile), corrupt };
}

/** The records a store on `dir` would start with, and what it would skip; changes nothing on disk. */
export async function readVolumeState(dir: string): Promise<{ records: VolumeRecord[]; corrupt: CorruptRecord[] }> {
  const state = await loadState(dir);
  return { records: sortRecords(state.records.values()), corrupt: state.corrupt };
}

export function sortRecords(records: Iterable<VolumeRecord>): VolumeRecord[] {
  return [...records].sort((a, b) => a.volumeId.localeCompare(b.volumeId));
}
