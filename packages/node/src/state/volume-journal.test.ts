// The journal on disk: exact framing, a torn tail cut off with a log line (it was never
// acknowledged), damaged lines in the middle reported with path and line and kept byte for byte,
// records with a good frame but bad content skipped, a journal of a newer version refused, and an
// unreadable header kept as a copy.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@pmem-csi/runtime';
import { deleteFrame, frame, headerFrame, parseJournal, putFrame } from './journal-format.js';
import { readVolumeState } from './state-loader.js';
import type { VolumeRecord } from './volume-record.js';
import { VolumeStateStore } from './volume-store.js';
import { MiB } from '@pmem-csi/csi';

const rec = (volumeId: string, extra: Partial<VolumeRecord> = {}): VolumeRecord => ({
  volumeId,
  name: `pvc-${volumeId}`,
  size: 8 * MiB,
  deviceMode: 'fake',
  parameters: {},
  createdAt: '2026-11-30T01:00:00.000Z',
  ...extra,
});

describe('journal format', () => {
  it('frames JSON as "<bytes> <crc32> <json>" lines', () => {
    expect(frame('{"a":"é"}')).toBe('10 20f000a5 {"a":"é"}\n');
    expect(headerFrame()).toBe('48 c0964a4c {"format":"pmem-csi-volume-journal","version":1}\n');
    expect(deleteFrame('v1')).toBe(frame('{"op":"delete","volumeId":"v1"}'));
  });

  it('parses header, entries, damage in the middle and a torn tail', () => {
    const bad = frame('{"op":"delete","volumeId":"x"}').replace('delete', 'dElete');
    const buf = Buffer.from(
      headerFrame() + putFrame(rec('a')) + bad + deleteFrame('a') + putFrame(rec('b')).slice(0, 30),
    );
    const parsed = parseJournal(buf);
    expect(parsed.version).toBe(1);
    expect(parsed.entries).toEqual([
      { op: 'put', record: rec('a') },
      { op: 'delete', volumeId: 'a' },
    ]);
    expect(parsed.damaged.map((d) => [d.line, d.reason, d.raw.toString()])).toEqual([
      [3, 'checksum mismatch', bad.slice(0, -1)],
    ]);
    expect(parsed.tornTail).toEqual({ line: 5, bytes: 30 });
    expect(parsed.lines).toBe(3);
    expect(parsed.goodBytes).toBe(buf.length - 30);
  });

  it('names what is wrong with a line', () => {
    const reasons = (text: string): string[] =>
      parseJournal(Buffer.from(`${headerFrame()}${text}\n${deleteFrame('z')}`)).damaged.map((d) => d.reason);
    expect(reasons('garbage')).toEqual(['not a frame (<bytes> <crc32> <JSON>)']);
    expect(reasons(frame('{"op":"delete","volumeId":"x"}').replace(/^\d+/, '99').trimEnd())).toEqual([
      'frame says 99 bytes, the line holds 30',
    ]);
    expect(reasons(frame('{"op":"move"}').trimEnd())).toEqual(['op "move" is not one of put, delete']);
    expect(reasons(frame('{"op":"delete","volumeId":"../x"}').trimEnd())).toEqual([
      'volumeId "../x" is not a safe file name',
    ]);
    expect(reasons(frame('{"op":"put","record":{"schemaVersion":1}}').trimEnd())).toEqual([
      'volumeId must be a non-empty string',
    ]);
    expect(reasons(frame('{nope').trimEnd())).toEqual([expect.stringContaining('JSON')]);
  });
});

describe('VolumeStateStore journal recovery', () => {
  let dir = '';
  let lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ format: 'json', sink: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  const stores: VolumeStateStore[] = [];
  const journal = (): string => join(dir, 'journal.log');

  async function open(): Promise<VolumeStateStore> {
    const s = new VolumeStateStore({ dir, log });
    stores.push(s);
    await s.init();
    return s;
  }

  /** A store holding a and b (b written last), closed again. */
  async function seed(): Promise<void> {
    const s = await open();
    await s.put(rec('a'));
    await s.put(rec('b'));
    await s.close();
    lines = [];
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-csi-journal-'));
    lines = [];
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('cuts a torn tail off with a log line; acknowledged records stay, the file ends cleanly again', async () => {
    await seed();
    const torn = putFrame(rec('c')).slice(0, 41);
    await appendFile(journal(), torn);
    const s = await open();
    expect(await s.list()).toEqual([rec('a'), rec('b')]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'discarding the torn tail of the volume journal (a write cut short by a crash, never acknowledged)',
        path: journal(),
        line: 4,
        bytes: 41,
      }),
    );
    expect(await readFile(journal(), 'utf8')).toBe(headerFrame() + putFrame(rec('a')) + putFrame(rec('b')));
    await s.put(rec('c'));
    await s.close();
    lines = [];
    expect((await open().then((x) => x.list())).map((r) => r.volumeId)).toEqual(['a', 'b', 'c']);
    expect(lines.filter((l) => l['level'] !== 'info' && l['level'] !== 'debug')).toEqual([]);
  });

  it('a torn tail of several frames (a batch cut short) is discarded whole', async () => {
    await seed();
    const batch = putFrame(rec('c')) + deleteFrame('a') + putFrame(rec('d'));
    await appendFile(
      journal(),
      batch.slice(0, 10) + 'X'.repeat(putFrame(rec('c')).length - 10) + batch.slice(putFrame(rec('c')).length, -5),
    );
    const s = await open();
    expect(await s.list()).toEqual([rec('a'), rec('b')]);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', line: 4, bytes: batch.length - 5 }));
  });

  it('a damaged line in the middle is reported with path and line, skipped, and kept by every rewrite', async () => {
    await seed();
    const text = await readFile(journal(), 'utf8');
    const [header, lineA, lineB] = text.split('\n');
    const damagedA = lineA!.replace('pvc-a', 'pvc-A');
    await writeFile(journal(), `${header}\n${damagedA}\n${lineB}\n`);
    const s = await open();
    expect(await s.list()).toEqual([rec('b')]);
    expect(await s.scan()).toEqual({
      records: [rec('b')],
      corrupt: [{ path: journal(), line: 2, reason: 'checksum mismatch' }],
    });
    expect(lines).toContainEqual({
      level: 'error',
      time: expect.any(String),
      component: 'volume-state',
      msg: 'skipping unreadable volume record',
      path: journal(),
      line: 2,
      reason: 'checksum mismatch',
    });
    expect(await s.list()).toEqual([rec('b')]); // no second report: list() reads memory
    expect(lines.filter((l) => l['level'] === 'error')).toHaveLength(1);
    // A rewrite (here: after a torn tail) keeps the damaged line byte for byte.
    await s.close();
    await appendFile(journal(), '12 ');
    lines = [];
    const again = await open();
    expect(await readFile(journal(), 'utf8')).toBe(`${headerFrame()}${damagedA}\n${putFrame(rec('b'))}`);
    expect(await again.scan()).toEqual({
      records: [rec('b')],
      corrupt: [{ path: journal(), line: 2, reason: 'checksum mismatch' }],
    });
  });

  it('a well-framed entry whose record is invalid is reported with the field and skipped', async () => {
    await seed();
    await appendFile(
      journal(),
      frame(JSON.stringify({ op: 'put', record: { schemaVersion: 1, ...rec('c'), size: -5 } })) +
        frame(JSON.stringify({ op: 'put', record: { ...rec('d'), schemaVersion: 2 } })),
    );
    const s = await open();
    expect((await s.scan()).corrupt).toEqual([
      { path: journal(), line: 4, reason: 'size must be a positive whole number of bytes' },
      { path: journal(), line: 5, reason: 'schemaVersion 2 is not supported (this driver reads 1)' },
    ]);
    expect(await s.list()).toEqual([rec('a'), rec('b')]);
    await s.put(rec('e'));
    expect((await readVolumeState(dir)).records).toEqual([rec('a'), rec('b'), rec('e')]);
  });

  it('refuses a journal of a newer format version (downgrade), naming file and versions', async () => {
    await writeFile(
      journal(),
      frame(JSON.stringify({ format: 'pmem-csi-volume-journal', version: 2 })) + putFrame(rec('a')),
    );
    await expect(open()).rejects.toMatchObject({
      kind: 'FailedPrecondition',
      message: `volume journal ${journal()} has format version 2; this driver reads version 1 (was the node downgraded?)`,
    });
    expect(await readFile(journal(), 'utf8')).toContain('"version":2'); // untouched
  });

  it('a journal without a readable header is kept as a copy and rewritten from its readable entries', async () => {
    const content = `garbage header\n${putFrame(rec('a'))}`;
    await writeFile(journal(), content);
    const s = await open();
    expect(await s.list()).toEqual([rec('a')]);
    const copies = (await readdir(dir)).filter((n) => n.startsWith('journal.log.unreadable-'));
    expect(copies).toHaveLength(1);
    expect(await readFile(join(dir, copies[0]!), 'utf8')).toBe(content);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: 'volume journal has no readable header; kept a copy and rewrote it from the readable entries',
        path: journal(),
        copy: join(dir, copies[0]!),
      }),
    );
    expect(await readFile(journal(), 'utf8')).toBe(`${headerFrame()}garbage header\n${putFrame(rec('a'))}`);
  });
});
