// Volume state records on disk: replace works (no O_EXCL), writes are atomic and durable in the
// right order, crash leftovers are ignored and cleaned, corrupt files are reported and skipped.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@pmem-csi/runtime';
import type { AtomicStep } from './atomic-file.js';
import { validateVolumeRecord, type VolumeRecord } from './volume-record.js';
import { VolumeStateStore } from './volume-store.js';

const rec = (volumeId: string, extra: Partial<VolumeRecord> = {}): VolumeRecord => ({
  volumeId,
  name: `pvc-${volumeId}`,
  size: 8 * 1024 * 1024,
  deviceMode: 'emulated',
  parameters: { eraseafter: 'true' },
  createdAt: '2026-11-30T01:00:00.000Z',
  ...extra,
});

describe('VolumeStateStore', () => {
  let dir = '';
  let lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ format: 'json', sink: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  let store: VolumeStateStore;

  beforeEach(async () => {
    dir = join(await mkdtemp(join(tmpdir(), 'pmem-csi-state-')), 'volumes');
    lines = [];
    store = new VolumeStateStore({ dir, log });
    await store.init();
  });
  afterEach(async () => {
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
    expect(await readdir(dir)).toEqual(['b.json']);
  });

  it('stores one versioned JSON file per volume', async () => {
    await store.put(rec('a'));
    expect(JSON.parse(await readFile(join(dir, 'a.json'), 'utf8'))).toEqual({ schemaVersion: 1, ...rec('a') });
  });

  it('replaces an existing record (create and later update both work)', async () => {
    await store.put(rec('a'));
    await store.put(rec('a', { size: 16 * 1024 * 1024 }));
    expect((await store.get('a'))?.size).toBe(16 * 1024 * 1024);
    expect(await readdir(dir)).toEqual(['a.json']);
  });

  it('delete is idempotent', async () => {
    await expect(store.delete('never-existed')).resolves.toBeUndefined();
    await store.put(rec('a'));
    await store.delete('a');
    await expect(store.delete('a')).resolves.toBeUndefined();
  });

  it('writes temp file, fsyncs it, renames, then fsyncs the directory', async () => {
    const steps: Array<[AtomicStep, string]> = [];
    const traced = new VolumeStateStore({ dir, log, onWriteStep: (step, path) => steps.push([step, path]) });
    await traced.put(rec('a'));
    expect(steps.map(([s]) => s)).toEqual(['write-temp', 'fsync-temp', 'rename', 'fsync-dir']);
    expect(steps[0]?.[1]).toMatch(new RegExp(`^${dir}/\\.a\\.json\\.[0-9a-f-]+\\.tmp$`));
    expect(steps[2]?.[1]).toBe(join(dir, 'a.json'));
    expect(steps[3]?.[1]).toBe(dir);
  });

  it('a write that fails before the rename keeps the old record and leaves no temp file', async () => {
    await store.put(rec('a'));
    const failing = new VolumeStateStore({
      dir,
      log,
      onWriteStep: (step) => {
        if (step === 'fsync-temp') throw new Error('disk gone');
      },
    });
    await expect(failing.put(rec('a', { size: 4096 }))).rejects.toThrow('disk gone');
    expect(await store.get('a')).toEqual(rec('a'));
    expect(await readdir(dir)).toEqual(['a.json']);
  });

  it('ignores temp files left by a crash, and init() removes them', async () => {
    await store.put(rec('a'));
    const leftover = join(dir, '.a.json.0b8f7e0c-crash.tmp');
    await writeFile(leftover, '{"schemaVersion":1,"volumeId":"a","trunc');
    expect(await store.list()).toEqual([rec('a')]);
    expect(lines.filter((l) => l['level'] === 'error')).toEqual([]);
    await new VolumeStateStore({ dir, log }).init();
    expect(await readdir(dir)).toEqual(['a.json']);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'removing temp file left by an interrupted write', path: leftover }));
  });

  it('reports corrupt records with their path and skips them', async () => {
    await store.put(rec('good'));
    const bad: Record<string, string> = {
      'garbage.json': 'not json{',
      'future.json': JSON.stringify({ ...rec('future'), schemaVersion: 2 }),
      'mismatch.json': JSON.stringify({ schemaVersion: 1, ...rec('other') }),
      'badsize.json': JSON.stringify({ schemaVersion: 1, ...rec('badsize'), size: -5 }),
    };
    for (const [name, text] of Object.entries(bad)) await writeFile(join(dir, name), text);
    expect(await store.list()).toEqual([rec('good')]);
    const errors = lines.filter((l) => l['level'] === 'error').map((l) => [l['path'], l['reason']]);
    expect(errors.sort()).toEqual(
      [
        [join(dir, 'badsize.json'), 'size must be a positive whole number of bytes'],
        [join(dir, 'future.json'), 'schemaVersion 2 is not supported (this driver reads 1)'],
        [join(dir, 'garbage.json'), expect.stringContaining('JSON')],
        [join(dir, 'mismatch.json'), 'volumeId "other" does not match the file name'],
      ],
    );
    expect(await store.get('garbage')).toBeUndefined();
    await store.put(rec('garbage')); // a corrupt record can be replaced
    expect(await store.get('garbage')).toEqual(rec('garbage'));
  });

  it('rejects invalid records and unsafe ids, naming the field', async () => {
    await expect(store.put(rec('../escape'))).rejects.toMatchObject({ kind: 'InvalidArgument', message: expect.stringContaining('volumeId "../escape"') });
    await expect(store.put(rec('a', { deviceMode: 'tape' as never }))).rejects.toMatchObject({
      kind: 'InvalidArgument',
      message: 'deviceMode must be one of lvm, direct, emulated, fake',
    });
    await expect(store.put(rec('a', { parameters: { n: 1 as never } }))).rejects.toMatchObject({ message: 'parameters.n must be a string' });
    await expect(store.put(rec('a', { createdAt: 'yesterday' }))).rejects.toMatchObject({ message: 'createdAt must be an ISO 8601 time' });
    await expect(store.get('a/b')).rejects.toMatchObject({ kind: 'InvalidArgument' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('lists nothing when the directory does not exist yet', async () => {
    expect(await new VolumeStateStore({ dir: join(dir, 'missing') }).list()).toEqual([]);
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
