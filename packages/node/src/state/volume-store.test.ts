// Volume state store: records in memory, durable through the journal before a mutation resolves,
// concurrent mutations sharing fsyncs (counted exactly through the onSync hook), failed writes
// rejecting their whole batch without changing memory, and the API rules (validation, init first,
// closed store).
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { createLogger } from '@pmem-csi/runtime';
import type { AtomicStep } from './atomic-file.js';
import { readVolumeState } from './state-loader.js';
import { validateVolumeRecord, type VolumeRecord } from './volume-record.js';
import { VolumeStateStore, type VolumeStateStoreOptions } from './volume-store.js';
import { MiB } from '@pmem-csi/csi';

const rec = (volumeId: string, extra: Partial<VolumeRecord> = {}): VolumeRecord => ({
  volumeId,
  name: `pvc-${volumeId}`,
  size: 8 * MiB,
  deviceMode: 'emulated',
  parameters: { eraseafter: 'true' },
  createdAt: '2026-11-30T01:00:00.000Z',
  ...extra,
});

/** A promise with its resolve function outside. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The JSON of every frame of a journal, after checking each frame's length and checksum. */
async function journalJson(path: string): Promise<unknown[]> {
  const text = await readFile(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      const m = /^(\d+) ([0-9a-f]{8}) (.*)$/.exec(line);
      expect(m).not.toBeNull();
      const [, len, crc, json] = m!;
      expect(Buffer.byteLength(json!)).toBe(Number(len));
      expect(crc32(json!).toString(16).padStart(8, '0')).toBe(crc);
      return JSON.parse(json!) as unknown;
    });
}

const HEADER = { format: 'pmem-csi-volume-journal', version: 1 };
const put = (r: VolumeRecord): unknown => ({ op: 'put', record: { schemaVersion: 1, ...r } });

describe('VolumeStateStore', () => {
  let dir = '';
  let lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ format: 'json', sink: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  let syncs: string[] = [];
  let store: VolumeStateStore;
  const open: VolumeStateStore[] = [];

  /** Close `store` and open a new one on the same directory. */
  async function reopen(extra: Partial<VolumeStateStoreOptions> = {}): Promise<VolumeStateStore> {
    await store.close();
    store = await openStore(extra);
    return store;
  }

  async function openStore(extra: Partial<VolumeStateStoreOptions> = {}): Promise<VolumeStateStore> {
    const s = new VolumeStateStore({ dir, log, onSync: (p) => void syncs.push(p), ...extra });
    open.push(s);
    await s.init();
    return s;
  }

  beforeEach(async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'pmem-csi-state-')), 'volumes');
    lines = [];
    syncs = [];
    store = await openStore();
    syncs = [];
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    await rm(join(dir, '..'), { recursive: true, force: true });
  });

  it('put, get, list, delete', async () => {
    await store.put(rec('b'));
    await store.put(rec('a', { ephemeral: true }));
    expect(await store.get('a')).toEqual(rec('a', { ephemeral: true }));
    expect(await store.list()).toEqual([rec('a', { ephemeral: true }), rec('b')]);
    await store.delete('a');
    expect(await store.get('a')).toBeUndefined();
    expect(await store.list()).toEqual([rec('b')]);
    expect(await readdir(dir)).toEqual(['journal.log']);
  });

  it('keeps a versioned, human-readable journal: framed JSON lines, header first', async () => {
    await store.put(rec('a'));
    await store.delete('a');
    expect(await journalJson(store.journalPath)).toEqual([HEADER, put(rec('a')), { op: 'delete', volumeId: 'a' }]);
  });

  it('records survive a restart, an update included (create and later update both work)', async () => {
    await store.put(rec('a'));
    await store.put(rec('a', { size: 16 * MiB }));
    await store.put(rec('b'));
    await store.delete('b');
    const again = await reopen();
    expect(await again.list()).toEqual([rec('a', { size: 16 * MiB })]);
    expect((await readVolumeState(dir)).records).toEqual([rec('a', { size: 16 * MiB })]);
  });

  it('get and list never touch the disk; a put never reads first', async () => {
    await store.put(rec('a'));
    await rm(store.journalPath);
    expect(await store.get('a')).toEqual(rec('a'));
    expect(await store.list()).toEqual([rec('a')]);
  });

  it('delete is idempotent; deleting a missing record writes and syncs nothing', async () => {
    await expect(store.delete('never-existed')).resolves.toBeUndefined();
    expect(syncs).toEqual([]);
    await store.put(rec('a'));
    await store.delete('a');
    await expect(store.delete('a')).resolves.toBeUndefined();
    expect(syncs).toEqual([store.journalPath, store.journalPath]);
  });

  it('concurrent mutations share one fdatasync', async () => {
    await Promise.all([...'abcdefghij'].map((id) => store.put(rec(id))));
    expect(syncs).toEqual([store.journalPath]);
    await Promise.all([store.delete('a'), store.delete('b'), store.put(rec('k'))]);
    expect(syncs).toEqual([store.journalPath, store.journalPath]);
    expect((await store.list()).map((r) => r.volumeId)).toEqual([...'cdefghijk']);
  });

  it('mutations that arrive while an fsync runs go out together in the next batch', async () => {
    const held = deferred();
    const entered = deferred();
    let calls = 0;
    const s = await reopen({
      onSync: async (p) => {
        syncs.push(p);
        if (++calls === 1) {
          entered.resolve();
          await held.promise;
        }
      },
    });
    syncs = [];
    const first = s.put(rec('a'));
    await entered.promise;
    const rest = [s.put(rec('b')), s.put(rec('c')), s.delete('a')];
    held.resolve();
    await Promise.all([first, ...rest]);
    expect(syncs).toEqual([s.journalPath, s.journalPath]);
    expect(await journalJson(s.journalPath)).toEqual([
      HEADER,
      put(rec('a')),
      put(rec('b')),
      put(rec('c')),
      { op: 'delete', volumeId: 'a' },
    ]);
    expect(await s.list()).toEqual([rec('b'), rec('c')]);
  });

  it('a put resolves only after its fdatasync, and memory shows it only then', async () => {
    const held = deferred();
    let hold = false;
    const s = await reopen({ onSync: () => (hold ? held.promise : undefined) });
    hold = true;
    let done = false;
    const p = s.put(rec('a')).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    expect(await s.get('a')).toBeUndefined();
    held.resolve();
    await p;
    expect(await s.get('a')).toEqual(rec('a'));
  });

  it('a failed fdatasync rejects every mutation of its batch; neither memory nor the rewritten journal claim them', async () => {
    await store.put(rec('kept'));
    let fail = true;
    const failing = await reopen({
      onSync: (p) => {
        syncs.push(p);
        if (fail && p === join(dir, 'journal.log')) throw new Error('disk gone');
      },
    });
    syncs = [];
    const results = await Promise.allSettled([
      failing.put(rec('a')),
      failing.put(rec('kept', { size: 4096 })),
      failing.delete('kept'),
    ]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'resolved'))).toEqual([
      'disk gone',
      'disk gone',
      'disk gone',
    ]);
    expect(await failing.list()).toEqual([rec('kept')]);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: 'volume journal write failed: its mutations are rejected, the journal is rewritten before the next one',
        mutations: 3,
        error: 'disk gone',
      }),
    );
    fail = false;
    syncs = [];
    await failing.put(rec('b'));
    // The next batch first rewrote the journal from memory (temp file, directory), then appended.
    expect(syncs).toEqual([
      expect.stringMatching(new RegExp(`^${dir}/\\.journal\\.log\\.[0-9a-f-]+\\.tmp$`)),
      dir,
      failing.journalPath,
    ]);
    expect(await journalJson(failing.journalPath)).toEqual([HEADER, put(rec('kept')), put(rec('b'))]);
    expect((await readVolumeState(dir)).records).toEqual([rec('b'), rec('kept')]);
  });

  it('an invalid record is rejected naming the field; the valid puts of the same tick go through', async () => {
    const results = await Promise.allSettled([
      store.put(rec('a')),
      store.put(rec('bad', { size: -1 })),
      store.put(rec('b')),
    ]);
    expect(results[1]).toEqual({
      status: 'rejected',
      reason: expect.objectContaining({
        kind: 'InvalidArgument',
        message: 'size must be a positive whole number of bytes',
      }),
    });
    expect([results[0]?.status, results[2]?.status]).toEqual(['fulfilled', 'fulfilled']);
    expect(syncs).toEqual([store.journalPath]);
    expect(await store.list()).toEqual([rec('a'), rec('b')]);
  });

  it('rejects invalid records and unsafe ids, naming the field', async () => {
    await expect(store.put(rec('../escape'))).rejects.toMatchObject({
      kind: 'InvalidArgument',
      message: expect.stringContaining('volumeId "../escape"'),
    });
    await expect(store.put(rec('a', { deviceMode: 'tape' as never }))).rejects.toMatchObject({
      kind: 'InvalidArgument',
      message: 'deviceMode must be one of lvm, direct, emulated, fake',
    });
    await expect(store.put(rec('a', { parameters: { n: 1 as never } }))).rejects.toMatchObject({
      message: 'parameters.n must be a string',
    });
    await expect(store.put(rec('a', { createdAt: 'yesterday' }))).rejects.toMatchObject({
      message: 'createdAt must be an ISO 8601 time',
    });
    await expect(store.get('a/b')).rejects.toMatchObject({
      kind: 'InvalidArgument',
      message: 'volumeId "a/b" is not a safe file name',
    });
    await expect(store.delete('.hidden')).rejects.toMatchObject({
      kind: 'InvalidArgument',
      message: 'volumeId ".hidden" is not a safe file name',
    });
    expect(syncs).toEqual([]);
    expect(await journalJson(store.journalPath)).toEqual([HEADER]);
  });

  it('writes the first journal atomically: temp file, fsync, rename, fsync of the directory', async () => {
    const steps: Array<[AtomicStep, string]> = [];
    const fresh = join(dir, '..', 'fresh');
    const s = new VolumeStateStore({ dir: fresh, log, onWriteStep: (step, path) => steps.push([step, path]) });
    open.push(s);
    await s.init();
    expect(steps.map(([step]) => step)).toEqual(['write-temp', 'fsync-temp', 'rename', 'fsync-dir']);
    expect(steps[0]?.[1]).toMatch(new RegExp(`^${fresh}/\\.journal\\.log\\.[0-9a-f-]+\\.tmp$`));
    expect(steps[2]?.[1]).toBe(join(fresh, 'journal.log'));
    expect(steps[3]?.[1]).toBe(fresh);
    await s.put(rec('a'));
    expect(steps).toHaveLength(4); // appends are no rewrites
  });

  it('ignores temp files left by a crash, and init() removes them', async () => {
    await store.put(rec('a'));
    const leftover = join(dir, '.journal.log.0b8f7e0c-crash.tmp');
    await writeFile(leftover, '58 0badc0de {"op":"put","rec');
    const again = await reopen();
    expect(await again.list()).toEqual([rec('a')]);
    expect(await readdir(dir)).toEqual(['journal.log']);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'removing temp file left by an interrupted write', path: leftover }),
    );
    expect(lines.filter((l) => l['level'] === 'error')).toEqual([]);
  });

  it('init() creates a missing directory; the store must be initialized first and refuses mutations once closed', async () => {
    const missing = join(dir, 'missing', 'deeper');
    const s = new VolumeStateStore({ dir: missing });
    await expect(s.list()).rejects.toThrow('VolumeStateStore.init() has not been called');
    await expect(s.put(rec('a'))).rejects.toThrow('VolumeStateStore.init() has not been called');
    await s.init();
    expect(await s.list()).toEqual([]);
    await expect(s.init()).rejects.toThrow('VolumeStateStore.init() may be called only once');
    await s.put(rec('a'));
    await s.close();
    await expect(s.put(rec('b'))).rejects.toMatchObject({
      kind: 'Unavailable',
      message: 'the volume state store is closed (the node is shutting down)',
    });
    await expect(s.delete('a')).rejects.toMatchObject({ kind: 'Unavailable' });
    expect(await s.get('a')).toEqual(rec('a'));
  });

  it('close() lets queued mutations finish', async () => {
    const p = store.put(rec('a'));
    await store.close();
    await expect(p).resolves.toBeUndefined();
    expect((await readVolumeState(dir)).records).toEqual([rec('a')]);
  });
});

describe('validateVolumeRecord', () => {
  it('drops unknown fields and keeps ephemeral only when set', () => {
    expect(validateVolumeRecord({ ...rec('a'), extra: 1 })).toEqual(rec('a'));
    expect(validateVolumeRecord({ ...rec('a'), ephemeral: false })).toEqual(rec('a', { ephemeral: false }));
    expect(() => validateVolumeRecord({ ...rec('a'), ephemeral: 'yes' })).toThrow('ephemeral must be a boolean');
    expect(() => validateVolumeRecord([])).toThrow('a volume record must be a JSON object');
  });
});
