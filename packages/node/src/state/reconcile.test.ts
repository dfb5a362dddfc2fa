// Start-up reconciliation against a fake device manager and a real state directory.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@pmem-csi/runtime';
import { FakeDeviceManager } from '../device/fake.js';
import { reconcile } from './reconcile.js';
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

describe('reconcile', () => {
  let dir = '';
  let lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ format: 'json', sink: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) });
  let state: VolumeStateStore;
  let dm: FakeDeviceManager;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pmem-csi-reconcile-'));
    lines = [];
    state = new VolumeStateStore({ dir, log });
    await state.init();
    dm = new FakeDeviceManager({ totalSize: 256 * MiB });
    await dm.setup();
  });
  afterEach(async () => {
    await state.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps matched volumes, drops records without a device, reports orphans without deleting them', async () => {
    await state.put(rec('both'));
    await state.put(rec('unfinished'));
    const both = await dm.createDevice({ volumeId: 'both', size: 8 * MiB });
    const orphan = await dm.createDevice({ volumeId: 'orphan', size: 4 * MiB });

    const result = await reconcile(state, dm, log);

    expect(result).toEqual({
      volumes: [{ record: rec('both'), device: both }],
      droppedRecords: [rec('unfinished')],
      orphans: [orphan],
      otherModeRecords: [],
    });
    expect(await state.list()).toEqual([rec('both')]);
    expect(await dm.listDevices()).toEqual([both, orphan]); // nothing deleted
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'dropping volume record without a device: its create never finished',
        volumeId: 'unfinished',
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'orphaned device without a volume record; leaving it in place',
        volumeId: 'orphan',
        device: '/dev/fake/orphan',
      }),
    );
  });

  it('leaves records of another device mode alone', async () => {
    await state.put(rec('old-lvm', { deviceMode: 'lvm' }));
    const result = await reconcile(state, dm, log);
    expect(result.otherModeRecords).toEqual([rec('old-lvm', { deviceMode: 'lvm' })]);
    expect(result.droppedRecords).toEqual([]);
    expect(await state.list()).toEqual([rec('old-lvm', { deviceMode: 'lvm' })]);
  });

  it('survives a corrupt record (skipped, not fatal) and is idempotent', async () => {
    await state.put(rec('a'));
    await state.close();
    await writeFile(join(dir, 'broken.json'), '{'); // a damaged record file of the first format
    state = new VolumeStateStore({ dir, log });
    await state.init();
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: 'skipping unreadable volume record',
        path: join(dir, 'broken.json'),
      }),
    );
    await dm.createDevice({ volumeId: 'a', size: 8 * MiB });
    const first = await reconcile(state, dm, log);
    expect(first.volumes.map((v) => v.record.volumeId)).toEqual(['a']);
    expect(await reconcile(state, dm, log)).toEqual(first);
  });

  it('fails when the devices cannot be listed (start-up must not guess)', async () => {
    const closed = new FakeDeviceManager();
    await expect(reconcile(state, closed, log)).rejects.toMatchObject({ kind: 'FailedPrecondition' });
  });
});
