// Crash safety of the journal rewrites (compaction and migration): the state directory is copied at
// every step of the atomic rewrite — what a kill -9 at that instant leaves on disk — and a store
// opened on each copy must hold exactly the records acknowledged by then. A step that fails
// (instead of a crash) loses nothing either. Migration folds per-volume files of the first format
// into the journal and removes them only once the journal is durable.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { cpSync, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@pmem-csi/runtime';
import type { AtomicStep } from './atomic-file.js';
import { headerFrame, putFrame } from './journal-format.js';
import { readVolumeState } from './state-loader.js';
import { encodeVolumeRecordFile, type VolumeRecord } from './volume-record.js';
import { VolumeStateStore, type VolumeStateStoreOptions } from './volume-store.js';
import { MiB } from '@pmem-csi/csi';

const STEPS: AtomicStep[] = ['write-temp', 'fsync-temp', 'rename', 'fsync-dir'];
const rec = (volumeId: string, extra: Partial<VolumeRecord> = {}): VolumeRecord => ({
  volumeId,
  name: `pvc-${volumeId}`,
  size: 8 * MiB,
  deviceMode: 'lvm',
  parameters: { eraseafter: 'false' },
  createdAt: '2026-11-30T01:00:00.000Z',
  ...extra,
});
const ids = (records: readonly VolumeRecord[]): string[] => records.map((r) => r.volumeId);

describe('VolumeStateStore crash safety', () => {
  let root = '';
  let dir = '';
  let lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ format: 'json', sink: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  const stores: VolumeStateStore[] = [];

  async function open(options: Partial<VolumeStateStoreOptions> & { dir?: string } = {}): Promise<VolumeStateStore> {
    const s = new VolumeStateStore({ dir, log, ...options });
    stores.push(s);
    await s.init();
    return s;
  }

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'pmem-csi-crash-'));
    dir = join(root, 'volumes');
    lines = [];
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await rm(root, { recursive: true, force: true });
  });

  it('compacts when the journal holds more than max(compactAfter, 4 × live records) entries', async () => {
    const s = await open({ compactAfter: 6 });
    for (const id of ['a', 'b', 'c']) await s.put(rec(id));
    for (const id of ['a', 'b', 'c']) await s.delete(id);
    expect((await readFile(s.journalPath, 'utf8')).split('\n')).toHaveLength(8); // header + 6 entries + ''
    await s.put(rec('d')); // 7 entries > max(6, 4): rewritten as the one live record
    await s.idle(); // compaction runs after the batch was acknowledged
    expect(await readFile(s.journalPath, 'utf8')).toBe(headerFrame() + putFrame(rec('d')));
    for (let i = 0; i < 9; i++) await s.put(rec(`v${i}`)); // 10 entries, 10 live: the bound is 40 now
    await s.idle();
    expect((await readFile(s.journalPath, 'utf8')).split('\n')).toHaveLength(1 + 10 + 1);
  });

  it.each(STEPS)('a crash at compaction step %s recovers exactly the acknowledged records', async (crashAt) => {
    const acked = new Map<string, VolumeRecord>();
    let crashed: { copy: string; records: VolumeRecord[] } | undefined;
    let armed = false; // not during init's first write of the journal
    const s = await open({
      compactAfter: 4,
      onWriteStep: (step) => {
        if (!armed || step !== crashAt || crashed !== undefined) return;
        const copy = join(root, `crash-${step}`);
        cpSync(dir, copy, { recursive: true }); // the disk as a kill -9 right now leaves it
        crashed = { copy, records: [...acked.values()] };
      },
    });
    const mutate = async (id: string, record?: VolumeRecord): Promise<void> => {
      if (record === undefined) {
        await s.delete(id);
        acked.delete(id);
      } else {
        await s.put(record);
        acked.set(id, record);
      }
    };
    armed = true;
    for (const id of ['a', 'b', 'c']) await mutate(id, rec(id));
    await mutate('a');
    for (let i = 1; i <= 5; i++)
      await mutate(i % 2 === 1 ? 'b' : 'c', rec(i % 2 === 1 ? 'b' : 'c', { size: 4096 * i }));
    // The 9th entry, with 2 live records, went past max(4, 8): compaction, the copy taken during it.
    await s.idle();
    expect(crashed).toBeDefined();
    const fromCrash = await open({ dir: crashed!.copy });
    expect(await fromCrash.list()).toEqual([rec('b', { size: 4096 * 5 }), rec('c', { size: 4096 * 4 })]);
    expect(await fromCrash.list()).toEqual(crashed!.records.sort((x, y) => x.volumeId.localeCompare(y.volumeId)));
    expect((await readdir(crashed!.copy)).sort()).toEqual(['journal.log']); // temp file removed
    // ...and the store that did not crash goes on.
    await mutate('d', rec('d'));
    expect((await readVolumeState(dir)).records).toEqual([
      rec('b', { size: 4096 * 5 }),
      rec('c', { size: 4096 * 4 }),
      rec('d'),
    ]);
  });

  it.each(STEPS)('a compaction failing at step %s loses nothing; a later write compacts', async (failAt) => {
    let fail = false;
    let syncs: string[] = [];
    const s = await open({
      compactAfter: 2,
      onSync: (p) => void syncs.push(p),
      onWriteStep: (step) => {
        if (fail && step === failAt) throw new Error(`stopped at ${step}`);
      },
    });
    await s.put(rec('a'));
    await s.put(rec('b'));
    await s.delete('b');
    await s.put(rec('a', { size: 4096 }));
    fail = true;
    await s.put(rec('a', { size: 8192 })); // 5 entries > max(2, 4 × 1): durable and resolved; the compaction after it fails
    await s.idle();
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'volume journal compaction failed',
        error: `stopped at ${failAt}`,
      }),
    );
    expect((await readVolumeState(dir)).records).toEqual([rec('a', { size: 8192 })]);
    expect((await readdir(dir)).sort()).toEqual(['journal.log']); // a failed rewrite leaves no temp file
    fail = false;
    syncs = [];
    await s.put(rec('a', { size: 12288 }));
    await s.idle();
    expect((await readVolumeState(dir)).records).toEqual([rec('a', { size: 12288 })]);
    const [journal, temp] = [s.journalPath, expect.stringMatching(/\/\.journal\.log\.[0-9a-f-]+\.tmp$/)];
    if (failAt === 'write-temp' || failAt === 'fsync-temp') {
      // Failed before the rename: the old journal is still the journal; it took the batch, then compaction ran again.
      expect(syncs).toEqual([journal, temp, dir]);
      expect(await readFile(journal, 'utf8')).toBe(headerFrame() + putFrame(rec('a', { size: 12288 })));
    } else {
      // Failed after it: the journal was rewritten before the batch went out (nothing is appended
      // to a file whose name a crash could take back).
      expect(syncs).toEqual([temp, dir, journal]);
      expect(await readFile(journal, 'utf8')).toBe(
        headerFrame() + putFrame(rec('a', { size: 8192 })) + putFrame(rec('a', { size: 12288 })),
      );
    }
  });

  describe('migration from per-volume files', () => {
    async function legacy(files: Record<string, string>): Promise<void> {
      await mkdir(dir, { recursive: true });
      for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    }

    const bad: Record<string, string> = {
      'garbage.json': 'not json{',
      'future.json': JSON.stringify({ ...rec('future'), schemaVersion: 2 }),
      'mismatch.json': JSON.stringify({ schemaVersion: 1, ...rec('other') }),
    };

    it('folds readable files into the journal, removes them after it is durable, keeps and reports unreadable ones', async () => {
      await legacy({
        'a.json': encodeVolumeRecordFile(rec('a')),
        'b.json': encodeVolumeRecordFile(rec('b', { ephemeral: true })),
        '.c.json.0b8f-crash.tmp': '{"trunc',
        ...bad,
      });
      const seenAtRename: boolean[] = [];
      const s = await open({
        onWriteStep: (step) => void (step === 'rename' && seenAtRename.push(existsSync(join(dir, 'a.json')))),
      });
      expect(seenAtRename).toEqual([true]); // the journal replaced first, the files removed after
      expect(await s.list()).toEqual([rec('a'), rec('b', { ephemeral: true })]);
      expect((await readdir(dir)).sort()).toEqual(['future.json', 'garbage.json', 'journal.log', 'mismatch.json']);
      expect(await readFile(s.journalPath, 'utf8')).toBe(
        headerFrame() + putFrame(rec('a')) + putFrame(rec('b', { ephemeral: true })),
      );
      const errors = lines.filter((l) => l['level'] === 'error').map((l) => [l['path'], l['reason']]);
      expect(errors).toEqual([
        [join(dir, 'future.json'), 'schemaVersion 2 is not supported (this driver reads 1)'],
        [join(dir, 'garbage.json'), expect.stringContaining('JSON')],
        [join(dir, 'mismatch.json'), 'volumeId "other" does not match the file name'],
      ]);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 'info',
          msg: 'migrated per-volume record files into the volume journal',
          records: 2,
        }),
      );
      expect((await s.scan()).corrupt.map((c) => c.path)).toEqual(
        ['future', 'garbage', 'mismatch'].map((n) => join(dir, `${n}.json`)),
      );
      // An unreadable file does not block its volume id.
      await s.put(rec('garbage'));
      expect(await s.get('garbage')).toEqual(rec('garbage'));
      await s.close();
      lines = [];
      const again = await open();
      expect(ids(await again.list())).toEqual(['a', 'b', 'garbage']);
      expect(lines.filter((l) => l['level'] === 'error')).toHaveLength(3); // reported at every start
    });

    it.each(STEPS)('a crash at migration step %s loses no record', async (crashAt) => {
      await legacy({ 'a.json': encodeVolumeRecordFile(rec('a')), 'b.json': encodeVolumeRecordFile(rec('b')) });
      const copy = join(root, `crash-${crashAt}`);
      await open({ onWriteStep: (step) => void (step === crashAt && cpSync(dir, copy, { recursive: true })) });
      const recovered = await open({ dir: copy });
      expect(await recovered.list()).toEqual([rec('a'), rec('b')]);
      expect((await readdir(copy)).sort()).toEqual(['journal.log']);
    });

    it('a crash after the journal but before the files were removed: the journal wins, the files go', async () => {
      await legacy({
        'journal.log': headerFrame() + putFrame(rec('a', { size: 4096 })),
        'a.json': encodeVolumeRecordFile(rec('a')),
        'b.json': encodeVolumeRecordFile(rec('b')),
      });
      const s = await open();
      expect(await s.list()).toEqual([rec('a', { size: 4096 }), rec('b')]);
      expect((await readdir(dir)).sort()).toEqual(['journal.log']);
    });
  });
});
