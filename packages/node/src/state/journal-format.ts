// The on-disk format of the volume journal (`<dir>/journal.log`): one frame per line,
//   <bytes> <crc32, 8 hex digits> <JSON>\n
// where <bytes> is the UTF-8 length of the JSON. JSON never holds a raw newline, so lines can be
// read (and damaged lines skipped) by eye and by this parser. Line 1 is the header
// {"format":"pmem-csi-volume-journal","version":1}; every further line is
// {"op":"put","record":{"schemaVersion":1,...}} or {"op":"delete","volumeId":"..."}, replayed in
// order. Frames that fail their length or checksum after the last good frame are a torn tail (a
// write a crash cut short, never acknowledged: its fdatasync had not returned); damaged frames
// before a good one are corruption, reported and skipped.
import { crc32 } from 'node:zlib';
import { errorMessage, InvalidArgumentError } from '@pmem-csi/csi';
import { decodeVolumeRecordFile, SAFE_VOLUME_ID, VOLUME_RECORD_SCHEMA, type VolumeRecord } from './volume-record.js';

export const JOURNAL_FILE = 'journal.log';
export const JOURNAL_FORMAT = 'pmem-csi-volume-journal';
/** Version of the journal's framing and entries; records carry their own schemaVersion too. */
export const JOURNAL_VERSION = 1;

export type JournalEntry =
  { readonly op: 'put'; readonly record: VolumeRecord } | { readonly op: 'delete'; readonly volumeId: string };

/** A line that could not be used (1-based line number), kept byte for byte by compaction. */
export interface DamagedLine {
  readonly line: number;
  readonly reason: string;
  readonly raw: Buffer;
}

export interface ParsedJournal {
  /** The header's version; undefined when line 1 is no readable header. */
  readonly version: number | undefined;
  readonly entries: JournalEntry[];
  readonly damaged: DamagedLine[];
  /** The torn tail that was cut off: first line and byte count; undefined when the file ends cleanly. */
  readonly tornTail: { readonly line: number; readonly bytes: number } | undefined;
  /** Entry lines in the file up to the tail (damaged ones included), header excluded. */
  readonly lines: number;
  /** Bytes before the torn tail. */
  readonly goodBytes: number;
}

/** One framed line. */
export function frame(json: string): string {
  return `${Buffer.byteLength(json)} ${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
}

export function headerFrame(): string {
  return frame(JSON.stringify({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION }));
}

/** The frame of a put; `record` must be validated already. */
export function putFrame(record: VolumeRecord): string {
  return frame(JSON.stringify({ op: 'put', record: { schemaVersion: VOLUME_RECORD_SCHEMA, ...record } }));
}

export function deleteFrame(volumeId: string): string {
  return frame(JSON.stringify({ op: 'delete', volumeId }));
}

type FrameResult = { readonly json: unknown } | { readonly reason: string };

const SPACE = 0x20;
const NEWLINE = 0x0a;

function unframe(line: Buffer): FrameResult {
  const first = line.indexOf(SPACE);
  const second = first < 0 ? -1 : line.indexOf(SPACE, first + 1);
  const lengthText = line.subarray(0, Math.max(first, 0)).toString('latin1');
  const crcText = line.subarray(first + 1, Math.max(second, 0)).toString('latin1');
  if (second < 0 || !/^\d{1,9}$/.test(lengthText) || !/^[0-9a-f]{8}$/.test(crcText))
    return { reason: 'not a frame (<bytes> <crc32> <JSON>)' };
  const body = line.subarray(second + 1);
  if (body.length !== Number(lengthText))
    return { reason: `frame says ${lengthText} bytes, the line holds ${body.length}` };
  if (crc32(body) !== Number.parseInt(crcText, 16)) return { reason: 'checksum mismatch' };
  try {
    return { json: JSON.parse(body.toString('utf8')) as unknown };
  } catch (e) {
    return { reason: errorMessage(e) };
  }
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/** Decode one entry. @throws InvalidArgumentError naming the field */
export function decodeEntry(value: unknown): JournalEntry {
  const op = field(value, 'op');
  if (op === 'put') return { op, record: decodeVolumeRecordFile(field(value, 'record')) };
  if (op === 'delete') {
    const volumeId = field(value, 'volumeId');
    if (typeof volumeId !== 'string' || !SAFE_VOLUME_ID.test(volumeId))
      throw new InvalidArgumentError(`volumeId ${JSON.stringify(volumeId)} is not a safe file name`);
    return { op, volumeId };
  }
  throw new InvalidArgumentError(`op ${JSON.stringify(op)} is not one of put, delete`);
}

function headerVersion(value: unknown): number | undefined {
  if (field(value, 'format') !== JOURNAL_FORMAT) return undefined;
  const version = field(value, 'version');
  return typeof version === 'number' ? version : Number.NaN;
}

/** Split a buffer into lines: [start, end) of each line without its newline; the last may be unterminated. */
function lineSpans(buf: Buffer): Array<{ start: number; end: number; terminated: boolean }> {
  const spans: Array<{ start: number; end: number; terminated: boolean }> = [];
  let start = 0;
  while (start < buf.length) {
    const nl = buf.indexOf(NEWLINE, start);
    const end = nl < 0 ? buf.length : nl;
    spans.push({ start, end, terminated: nl >= 0 });
    start = end + 1;
  }
  return spans;
}

/** Parse a journal file. Damage is reported, never thrown: the caller decides what a version means. */
export function parseJournal(buf: Buffer): ParsedJournal {
  const entries: JournalEntry[] = [];
  const damaged: DamagedLine[] = [];
  let pending: DamagedLine[] = []; // bad frames not yet followed by a good one: maybe a torn tail
  let version: number | undefined;
  let goodEnd = 0;
  const spans = lineSpans(buf);
  for (const [i, span] of spans.entries()) {
    const raw = buf.subarray(span.start, span.end);
    const res: FrameResult = span.terminated ? unframe(raw) : { reason: 'no newline at the end' };
    if ('reason' in res) {
      pending.push({ line: i + 1, reason: res.reason, raw });
      continue;
    }
    damaged.push(...pending);
    pending = [];
    goodEnd = span.end + 1;
    const header = headerVersion(res.json);
    if (i === 0 && header !== undefined) {
      version = header;
      continue;
    }
    try {
      entries.push(decodeEntry(res.json));
    } catch (e) {
      damaged.push({ line: i + 1, reason: errorMessage(e), raw });
    }
  }
  const tornTail = pending[0] === undefined ? undefined : { line: pending[0].line, bytes: buf.length - goodEnd };
  const lines = (tornTail?.line ?? spans.length + 1) - 1 - (version === undefined ? 0 : 1);
  return { version, entries, damaged, tornTail, lines, goodBytes: goodEnd };
}

/** The records after replaying `entries` in order. */
export function replay(
  entries: readonly JournalEntry[],
  into = new Map<string, VolumeRecord>(),
): Map<string, VolumeRecord> {
  for (const e of entries) {
    if (e.op === 'put') into.set(e.record.volumeId, e.record);
    else into.delete(e.volumeId);
  }
  return into;
}
