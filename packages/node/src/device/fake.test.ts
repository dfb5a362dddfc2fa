// The fake device manager: the shared contract plus what only the fake promises (defaults,
// injected in-use set, recorded erasures, scale).
import { describe, expect, it } from '@jest/globals';
import { deviceManagerContract } from './testing/contract.js';
import { NotEnoughSpaceError } from './device-manager.js';
import { FAKE_DEFAULT_GRANULARITY, FAKE_DEFAULT_SIZE, FAKE_ERASURE_LOG, FakeDeviceManager, FakeStore } from './fake.js';
import { MiB } from '@pmem-csi/csi';

const TOTAL = 256 * MiB;

deviceManagerContract(
  'fake',
  async () => {
    const store = new FakeStore();
    const inUse = new Set<string>();
    const make = (): FakeDeviceManager =>
      new FakeDeviceManager({ totalSize: TOTAL, granularity: 4 * MiB, store, inUse });
    const dm = make();
    return {
      dm,
      reopen: async () => make(),
      hold: async (dev) => {
        inUse.add(dev.volumeId);
        return async () => void inUse.delete(dev.volumeId);
      },
      erasures: () => dm.erasures.map((e) => ({ path: `/dev/fake/${e.volumeId}`, bytes: e.bytes })),
      cleanup: async () => undefined,
    };
  },
  { volumeSize: 8 * MiB, granularity: 4 * MiB, totalSize: TOTAL, readable: false, resize: true },
);

async function ready(options: ConstructorParameters<typeof FakeDeviceManager>[0] = {}): Promise<FakeDeviceManager> {
  const dm = new FakeDeviceManager(options);
  await dm.setup();
  return dm;
}

describe('FakeDeviceManager specifics', () => {
  it('defaults to a 1 TiB pool in 4 MiB units with /dev/fake paths and no dax', async () => {
    const dm = await ready();
    expect(await dm.getCapacity()).toEqual({
      maxVolumeSize: FAKE_DEFAULT_SIZE,
      available: FAKE_DEFAULT_SIZE,
      managed: FAKE_DEFAULT_SIZE,
      total: FAKE_DEFAULT_SIZE,
    });
    expect(FAKE_DEFAULT_GRANULARITY).toBe(4 * MiB);
    expect(await dm.createDevice({ volumeId: 'v1', size: 1 })).toEqual({
      volumeId: 'v1',
      path: '/dev/fake/v1',
      size: 4 * MiB,
      dax: false,
    });
  });

  it('rounds maxVolumeSize down to the granularity when the pool is not a multiple of it', async () => {
    const dm = await ready({ totalSize: 10 * MiB, granularity: 4 * MiB });
    expect(await dm.getCapacity()).toEqual({
      maxVolumeSize: 8 * MiB,
      available: 10 * MiB,
      managed: 10 * MiB,
      total: 10 * MiB,
    });
    await dm.createDevice({ volumeId: 'a', size: 8 * MiB });
    const err = await dm.createDevice({ volumeId: 'b', size: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotEnoughSpaceError);
    expect((err as Error).message).toBe(
      'not enough space for volume "b": requested 1 bytes, 4 MiB when rounded up to a multiple of 4 MiB; the largest size available is 0 bytes',
    );
  });

  it('fails every call before setup() with FailedPrecondition', async () => {
    const dm = new FakeDeviceManager();
    await expect(dm.listDevices()).rejects.toMatchObject({
      kind: 'FailedPrecondition',
      message: 'fake device manager: setup() has not been called',
    });
    await expect(dm.createDevice({ volumeId: 'a', size: MiB })).rejects.toMatchObject({ kind: 'FailedPrecondition' });
  });

  it('rejects bad sizes with InvalidArgument naming the field', async () => {
    const dm = await ready();
    for (const size of [0, -1, 1.5, Number.NaN]) {
      const invalid = {
        kind: 'InvalidArgument',
        message: `size must be a positive whole number of bytes, got ${String(size)}`,
      };
      await expect(dm.createDevice({ volumeId: 'a', size })).rejects.toMatchObject(invalid);
      await expect(dm.allocationSize(size)).rejects.toMatchObject(invalid);
    }
    expect(() => new FakeDeviceManager({ totalSize: 0 })).toThrow(
      'total size must be a positive whole number of bytes, got 0',
    );
    expect(await dm.listDevices()).toEqual([]);
  });

  it('honours an aborted signal with Aborted and changes nothing', async () => {
    const dm = await ready();
    const ac = new AbortController();
    ac.abort();
    await expect(dm.createDevice({ volumeId: 'a', size: MiB }, { signal: ac.signal })).rejects.toMatchObject({
      kind: 'Aborted',
    });
    expect(await dm.listDevices()).toEqual([]);
  });

  it('names the largest possible size when a resize does not fit', async () => {
    const dm = await ready({ totalSize: 16 * MiB, granularity: 4 * MiB });
    await dm.createDevice({ volumeId: 'a', size: 8 * MiB });
    await expect(dm.resizeDevice('a', 16 * MiB + 1)).rejects.toThrow(
      'not enough space to grow volume "a" from 8 MiB to 20 MiB (requested 16777217 bytes, rounded up to a multiple of 4 MiB); ' +
        'the largest size available is 16777216 bytes (16 MiB)',
    );
    expect((await dm.resizeDevice('a', 16 * MiB)).size).toBe(16 * MiB);
  });

  it('records erasures: the whole device, or its first 4 KiB', async () => {
    const dm = await ready();
    await dm.createDevice({ volumeId: 'a', size: 8 * MiB });
    await dm.createDevice({ volumeId: 'b', size: 8 * MiB });
    await dm.deleteDevice('a', true);
    await dm.deleteDevice('b', false);
    await dm.deleteDevice('c', true);
    expect(dm.erasures).toEqual([
      { volumeId: 'a', bytes: 8 * MiB },
      { volumeId: 'b', bytes: 4096 },
    ]);
  });

  it('remembers only the last FAKE_ERASURE_LOG erasures (a long-lived fake node stays bounded)', async () => {
    const dm = await ready();
    for (let i = 0; i < FAKE_ERASURE_LOG + 5; i++) {
      await dm.createDevice({ volumeId: `v${i}`, size: 4 * MiB });
      await dm.deleteDevice(`v${i}`, false);
    }
    expect(dm.erasures).toHaveLength(FAKE_ERASURE_LOG);
    expect(dm.erasures[0]?.volumeId).toBe('v5');
    expect(dm.erasures.at(-1)?.volumeId).toBe(`v${FAKE_ERASURE_LOG + 4}`);
  });

  it('scales: 10,000 volumes accounted exactly, listed sorted', async () => {
    const dm = await ready();
    const n = 10_000;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        dm.createDevice({ volumeId: `v${String(i).padStart(5, '0')}`, size: 5 * MiB }),
      ),
    );
    const cap = await dm.getCapacity();
    expect(cap.available).toBe(FAKE_DEFAULT_SIZE - n * 8 * MiB);
    const list = await dm.listDevices();
    expect(list).toHaveLength(n);
    expect(list[0]?.volumeId).toBe('v00000');
    expect(list[n - 1]?.volumeId).toBe('v09999');
  });
});
