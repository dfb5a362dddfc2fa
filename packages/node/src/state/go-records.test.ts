// Take-over of the Go driver's node records (issue 31): files shaped as its pmem-state package wrote
// them (`<stateDir>/<id>.json`, one JSON line {"id","size","parameters"}), converted into our
// records by the store on `<stateDir>/volumes`, refused ones reported, the Go files kept for a roll
// back and removed with the volume. Then a node on them: ListVolumes, sizes, DeleteVolume's erase.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { volumeIdForName } from '@pmem-csi/api';
import { MiB } from '@pmem-csi/csi';
import * as grpc from '@grpc/grpc-js';
import { createLogger, nullLogger, type LogFields } from '@pmem-csi/runtime';
import { FakeDeviceManager } from '../device/fake.js';
import { call, startTestNode, testClients } from '../testing/test-node.js';
import { convertGoRecord, isGoRecordFile, readGoRecords } from './go-records.js';
import { VolumeStateStore } from './volume-store.js';

const PVC = 'pvc-5c3e6a1b-0d1e-4c7a-9f7e-2b1d6c0a9e11';
const ID = volumeIdForName(PVC);
const INLINE = 'csi-4b1e6f0c2d8a7e3b9c5d1f0a6e2b8c4d7f3a9e1b5c0d6f2a8e4b1c7d3f9a5e0b';
const INLINE_ID = volumeIdForName(INLINE);
const WHEN = '2021-06-01T10:00:00.000Z';

/** A file as the Go driver's json.Encoder wrote it: one line and a newline. */
function goFile(id: string, size: number, parameters: Record<string, string>): string {
  return `${JSON.stringify({ id, size, parameters })}\n`;
}

describe('convertGoRecord', () => {
  it('a persistent lvm volume: id, name, requested size, mode and its erase setting', () => {
    const record = convertGoRecord(
      JSON.parse(goFile(ID, 64 * MiB, { eraseafter: 'false', name: PVC, deviceMode: 'lvm' })),
      ID,
      WHEN,
    );
    expect(record).toEqual({
      volumeId: ID,
      name: PVC,
      size: 64 * MiB,
      deviceMode: 'lvm',
      parameters: { eraseafter: 'false', kataContainers: 'false', usage: 'AppDirect' },
      createdAt: WHEN,
    });
  });

  it('an inline volume (persistencyModel ephemeral, named after the kubelet handle) becomes an ephemeral record', () => {
    const record = convertGoRecord(
      {
        id: INLINE_ID,
        size: 110 * MiB,
        parameters: {
          persistencyModel: 'ephemeral',
          size: '115343360',
          name: INLINE,
          deviceMode: 'direct',
          kataContainers: 'true',
        },
      },
      INLINE_ID,
      WHEN,
    );
    expect(record).toMatchObject({ volumeId: INLINE_ID, name: INLINE, deviceMode: 'direct', ephemeral: true });
    expect(record.parameters).toEqual({ eraseafter: 'true', kataContainers: 'true', usage: 'AppDirect' });
  });

  it('persistencyModel "none" (its name up to v0.6) and "normal" are persistent; a size of 0 is the 1 byte it asked for', () => {
    for (const persistencyModel of ['none', 'normal']) {
      const record = convertGoRecord(
        { id: ID, size: 0, parameters: { persistencyModel, name: PVC, deviceMode: 'direct' } },
        ID,
        WHEN,
      );
      expect(record.ephemeral).toBeUndefined();
      expect(record.size).toBe(1);
    }
  });

  it.each([
    [
      'a cache volume',
      { persistencyModel: 'cache', cacheSize: '2', name: PVC, deviceMode: 'lvm' },
      /persistencyModel" "cache": cache volumes .* are not supported/,
    ],
    ['no deviceMode (older releases)', { name: PVC }, /"parameters.deviceMode" must be lvm or direct .* got ""/],
    ['deviceMode emulated', { name: PVC, deviceMode: 'emulated' }, /must be lvm or direct/],
    ['no name', { deviceMode: 'lvm' }, /"parameters.name" is missing/],
    ['a key it never stored', { name: PVC, deviceMode: 'lvm', nsmode: 'fsdax' }, /parameter "nsmode" is not allowed/],
    [
      'a bad boolean',
      { name: PVC, deviceMode: 'lvm', eraseafter: 'maybe' },
      /parameter "eraseafter": "maybe" is not a boolean/,
    ],
  ])('refuses %s, naming the field', (_what, parameters, message) => {
    expect(() => convertGoRecord({ id: ID, size: MiB, parameters }, ID, WHEN)).toThrow(message);
  });

  it('refuses an id that is not the file name, a negative size and a non-object', () => {
    expect(() => convertGoRecord({ id: 'other', size: 1, parameters: {} }, ID, WHEN)).toThrow(
      /does not match the file name/,
    );
    expect(() => convertGoRecord({ id: ID, size: -1, parameters: {} }, ID, WHEN)).toThrow(
      /"size" must be a whole number/,
    );
    expect(() => convertGoRecord([], ID, WHEN)).toThrow(/must be a JSON object/);
  });

  it('only <volume id>.json names are candidates', () => {
    expect(isGoRecordFile(`${ID}.json`)).toBe(true);
    expect(isGoRecordFile('.hidden.json')).toBe(false);
    expect(isGoRecordFile('journal.log')).toBe(false);
    expect(isGoRecordFile('mount')).toBe(false);
  });
});

describe('the store takes over the Go driver records of its state directory', () => {
  let stateDir: string;
  const lines: LogFields[] = [];
  const log = createLogger({ format: 'json', level: 'debug', sink: (l) => lines.push(JSON.parse(l) as LogFields) });

  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'go-state-'));
    lines.length = 0;
    await writeFile(
      join(stateDir, `${ID}.json`),
      goFile(ID, 64 * MiB, { eraseafter: 'false', name: PVC, deviceMode: 'lvm' }),
    );
    await writeFile(
      join(stateDir, `${INLINE_ID}.json`),
      goFile(INLINE_ID, 110 * MiB, {
        persistencyModel: 'ephemeral',
        size: '115343360',
        name: INLINE,
        deviceMode: 'lvm',
      }),
    );
  });
  afterEach(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  it('converts them into the journal once, reports refused ones, keeps the Go files, and removes one with its volume', async () => {
    const cacheId = volumeIdForName('pvc-cache');
    const cachePath = join(stateDir, `${cacheId}.json`);
    await writeFile(
      cachePath,
      goFile(cacheId, MiB, { persistencyModel: 'cache', cacheSize: '2', name: 'pvc-cache', deviceMode: 'lvm' }),
    );
    const store = new VolumeStateStore({ dir: join(stateDir, 'volumes'), log });
    await store.init();
    const { records, corrupt } = await store.scan();
    expect(records.map((r) => [r.volumeId, r.name, r.size, r.ephemeral ?? false])).toEqual(
      [
        [ID, PVC, 64 * MiB, false],
        [INLINE_ID, INLINE, 110 * MiB, true],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    expect(corrupt).toEqual([
      { path: cachePath, reason: expect.stringMatching(/^Go driver volume record not taken over: .*cache volumes/) },
    ]);
    expect(
      lines
        .filter((l) => l['msg'] === "took over the Go driver's volume record")
        .map((l) => l['volumeId'])
        .sort(),
    ).toEqual([ID, INLINE_ID].sort());
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: "the Go driver's volume record is not taken over",
        path: cachePath,
      }),
    );
    // The journal holds them (durable before init() returned); the Go files are all still there.
    expect(await readFile(store.journalPath, 'utf8')).toContain(`"volumeId":"${ID}"`);
    expect((await readdir(stateDir)).sort()).toEqual(
      [`${ID}.json`, `${INLINE_ID}.json`, `${cacheId}.json`, 'volumes'].sort(),
    );
    await store.delete(ID);
    expect((await readdir(stateDir)).sort()).toEqual([`${INLINE_ID}.json`, `${cacheId}.json`, 'volumes'].sort());
    await store.close();

    // Next start: the journal wins over the Go file it already knows; the deleted volume stays deleted.
    lines.length = 0;
    const again = new VolumeStateStore({ dir: join(stateDir, 'volumes'), log });
    await again.init();
    expect((await again.list()).map((r) => r.volumeId)).toEqual([INLINE_ID]);
    expect(lines.filter((l) => l['msg'] === "took over the Go driver's volume record")).toEqual([]);
    await again.close();
  });

  it('a store not in <stateDir>/volumes, or with goStateDir null, reads no Go files', async () => {
    for (const store of [
      new VolumeStateStore({ dir: join(stateDir, 'elsewhere'), log }),
      new VolumeStateStore({ dir: join(stateDir, 'volumes'), log, goStateDir: null }),
    ]) {
      await store.init();
      expect(await store.list()).toEqual([]);
      await store.close();
      await rm(store.dir, { recursive: true, force: true });
    }
    expect((await readGoRecords(join(stateDir, 'missing'))).records.size).toBe(0);
  });

  it('a node on them lists the persistent one with its device size and id, and DeleteVolume keeps eraseafter=false', async () => {
    const dm = new FakeDeviceManager();
    await dm.setup();
    await dm.createDevice({ volumeId: ID, size: 64 * MiB });
    await dm.createDevice({ volumeId: INLINE_ID, size: 112 * MiB });
    const erased: boolean[] = [];
    const realDelete = dm.deleteDevice.bind(dm);
    dm.deleteDevice = async (id, erase, o) => {
      erased.push(erase);
      return realDelete(id, erase, o);
    };
    const node = await startTestNode({ dm: withMode(dm, 'lvm'), dir: stateDir, log });
    const c = testClients(node.address);
    try {
      const listed = await call(c.controller, c.controller.ListVolumes, {});
      expect(
        listed.entries.map((e) => [e.volume?.volume_id, e.volume?.capacity_bytes, e.volume?.volume_context]),
      ).toEqual([
        [
          ID,
          String(64 * MiB),
          { eraseafter: 'false', kataContainers: 'false', usage: 'AppDirect', name: PVC, deviceMode: 'lvm' },
        ],
      ]);
      await call(c.controller, c.controller.DeleteVolume, { volume_id: ID });
      expect(erased).toEqual([false]);
      expect(await dm.findDevice(ID)).toBeUndefined();
      expect((await readdir(stateDir)).includes(`${ID}.json`)).toBe(false);
    } finally {
      c.close();
      await node.stop();
    }
  });
});

describe('a Go driver volume that is not taken over', () => {
  it('DeleteVolume refuses it with FAILED_PRECONDITION naming the reason; its device and file stay', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'go-state-'));
    const cacheId = volumeIdForName('pvc-cache');
    const cachePath = join(stateDir, `${cacheId}.json`);
    await writeFile(
      cachePath,
      goFile(cacheId, 64 * MiB, { persistencyModel: 'cache', cacheSize: '2', name: 'pvc-cache', deviceMode: 'lvm' }),
    );
    const dm = new FakeDeviceManager();
    await dm.setup();
    await dm.createDevice({ volumeId: cacheId, size: 64 * MiB });
    const node = await startTestNode({ dm: withMode(dm, 'lvm'), dir: stateDir, log: nullLogger });
    const c = testClients(node.address);
    try {
      await expect(call(c.controller, c.controller.DeleteVolume, { volume_id: cacheId })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: expect.stringMatching(
          new RegExp(
            `^volume ${cacheId} was made by the Go PMEM-CSI driver in a shape this driver does not take over \\(Go driver volume record not taken over: .*cache volumes.*\\); its device is left as it is: remove the device and ${cachePath} by hand \\(docs/migration.md\\)$`,
          ),
        ) as unknown as string,
      });
      expect(await dm.findDevice(cacheId)).toMatchObject({ size: 64 * MiB });
      expect(await readdir(stateDir)).toContain(`${cacheId}.json`);
    } finally {
      c.close();
      await node.stop();
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});

/** The fake manager presented as a mode the Go records name (records of another mode are not this node's). */
function withMode(dm: FakeDeviceManager, mode: 'lvm'): FakeDeviceManager {
  Object.defineProperty(dm, 'mode', { value: mode });
  return dm;
}
