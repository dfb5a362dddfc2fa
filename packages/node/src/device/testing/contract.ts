// The contract every DeviceManager keeps, as one Jest suite run against each implementation
// (fake and emulated here; lvm and direct inside the QEMU guest). Call it from a *.test.ts file:
// it registers describe/it blocks. Sizes are parameters so that the same cases fit a 4 GiB
// emulated pool, an in-memory fake and a 2 GiB emulated NVDIMM. Every case removes the devices
// it made, so cases are independent and capacity can be compared exactly.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { open } from 'node:fs/promises';
import {
  DeviceExistsError,
  DeviceInUseError,
  DeviceNotFoundError,
  NotEnoughSpaceError,
  NotEnoughSpaceToGrowError,
  type DeviceManager,
  type PmemDeviceInfo,
} from '../device-manager.js';
import type { Capacity } from '@pmem-csi/csi';

/** Reads and writes a device's data (for managers whose devices are real block devices). */
export interface DeviceIo {
  write(device: PmemDeviceInfo, offset: number, data: Buffer): Promise<void>;
  read(device: PmemDeviceInfo, offset: number, length: number): Promise<Buffer>;
}

/** DeviceIo on the block device node itself (buffered I/O, flushed with fsync after writes). */
export const blockDeviceIo: DeviceIo = {
  async write(device, offset, data) {
    const fh = await open(device.path, 'r+');
    try {
      await fh.write(data, 0, data.length, offset);
      await fh.sync();
    } finally {
      await fh.close();
    }
  },
  async read(device, offset, length) {
    const fh = await open(device.path, 'r');
    try {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await fh.read(buf, 0, length, offset);
      return buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  },
};

/** One erase observed by the fixture: device path and bytes overwritten. */
export interface ObservedErasure {
  readonly path: string;
  readonly bytes: number;
}

export interface ContractFixture {
  /** The manager under test; the suite calls setup() on it. */
  dm: DeviceManager;
  /** A second manager on the same backing store, as after a driver restart (setup() not yet called). */
  reopen(): Promise<DeviceManager>;
  /** Make the device count as open/mounted until the returned function is called. */
  hold(device: PmemDeviceInfo): Promise<() => Promise<void>>;
  /** Erasures seen so far, oldest first (e.g. recorded dd calls); needed when devices are not readable. */
  erasures?(): readonly ObservedErasure[];
  /** Remove everything the fixture created (devices, files); runs even when cases fail. */
  cleanup(): Promise<void>;
}

export interface ContractOptions {
  /** A small volume size in bytes used by most cases (a multiple of the granularity). */
  volumeSize: number;
  /** The allocation unit: sizes are rounded up to a multiple of it. */
  granularity: number;
  /** Expected `total` capacity, when the fixture configures it. */
  totalSize?: number;
  /** Devices are real block devices: data is written and read back through `io`. */
  readable: boolean;
  /** Whether resizeDevice grows devices (false: it must throw UnimplementedError). */
  resize: boolean;
  /**
   * How sizes are kept: `exact` (default) = rounded up to `granularity`, and `available` shrinks by
   * exactly the device size; `atLeast` = never smaller than requested and `available` shrinks by at
   * least the device size (direct mode: the kernel keeps ~1/64 of a namespace for page metadata, and
   * free space is counted after alignment). Deleting a device restores the capacity exactly in both.
   */
  sizes?: 'exact' | 'atLeast';
  /** Number of concurrent creates (default 4). */
  concurrency?: number;
  /** Per-case timeout in ms (default 30 s). */
  timeoutMs?: number;
  io?: DeviceIo;
}

const PATTERN = 0xa5;

/** Register the DeviceManager contract cases for one implementation. */
export function deviceManagerContract(name: string, make: () => Promise<ContractFixture>, opts: ContractOptions): void {
  describe(`DeviceManager contract: ${name}`, () => {
    const ctx = new ContractContext(opts);
    beforeAll(async () => {
      ctx.fixture = await make();
      await ctx.dm.setup();
    }, opts.timeoutMs ?? 30_000);
    afterAll(async () => {
      await ctx.fixture?.cleanup();
    }, opts.timeoutMs ?? 30_000);
    registerLifecycleCases(ctx);
    registerCapacityCases(ctx);
    registerEraseCases(ctx);
    registerAllocationCases(ctx);
    registerResizeCases(ctx);
    registerConcurrencyCases(ctx);
  });
}

/** State shared by the cases of one suite, plus helpers that always clean up. */
class ContractContext {
  fixture: ContractFixture | undefined;
  constructor(readonly opts: ContractOptions) {}

  /** The fixture; fails every case with a pointer to the real cause when make() failed. */
  get fx(): ContractFixture {
    if (this.fixture === undefined) throw new Error('contract fixture was not created (see the beforeAll error)');
    return this.fixture;
  }

  get dm(): DeviceManager {
    return this.fx.dm;
  }

  get io(): DeviceIo {
    return this.opts.io ?? blockDeviceIo;
  }

  get timeout(): number {
    return this.opts.timeoutMs ?? 30_000;
  }

  roundUp(n: number): number {
    return Math.ceil(n / this.opts.granularity) * this.opts.granularity;
  }

  get exact(): boolean {
    return (this.opts.sizes ?? 'exact') === 'exact';
  }

  /** The size of a device created for `requested` bytes. */
  expectSize(actual: number, requested: number): void {
    if (this.exact) expect(actual).toBe(this.roundUp(requested));
    else expect(actual).toBeGreaterThanOrEqual(requested);
  }

  /** `available` after creating `bytes` of devices. */
  expectShrunk(after: number, before: number, bytes: number): void {
    if (this.exact) expect(after).toBe(before - bytes);
    else expect(after).toBeLessThanOrEqual(before - bytes);
  }

  /** Run `fn`, then delete the given volumes whatever happened (without full erase, for speed). */
  async withVolumes(ids: readonly string[], fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } finally {
      for (const id of ids) await this.dm.deleteDevice(id, false).catch(() => undefined);
    }
  }
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

function ids(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
}

function registerLifecycleCases(ctx: ContractContext): void {
  const { opts } = ctx;
  it(
    'setup() is idempotent',
    async () => {
      const id = 'ct-setup';
      await ctx.withVolumes([id], async () => {
        await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize });
        const before = { cap: await ctx.dm.getCapacity(), list: await ctx.dm.listDevices() };
        await ctx.dm.setup();
        expect(await ctx.dm.getCapacity()).toEqual(before.cap);
        expect(await ctx.dm.listDevices()).toEqual(before.list);
      });
    },
    ctx.timeout,
  );

  it(
    'create, then get and list return the device',
    async () => {
      const id = 'ct-create';
      await ctx.withVolumes([id], async () => {
        const created = await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize });
        expect(created).toMatchObject({ volumeId: id });
        ctx.expectSize(created.size, opts.volumeSize);
        expect(created.path).toMatch(/^\/dev\//);
        expect(typeof created.dax).toBe('boolean');
        expect(await ctx.dm.getDevice(id)).toEqual(created);
        expect(await ctx.dm.findDevice(id)).toEqual(created);
        expect((await ctx.dm.listDevices()).filter((d) => d.volumeId === id)).toEqual([created]);
      });
    },
    ctx.timeout,
  );

  it(
    'create rounds the size up to the granularity',
    async () => {
      const id = 'ct-round';
      const requested = opts.volumeSize + 1;
      await ctx.withVolumes([id], async () => {
        const created = await ctx.dm.createDevice({ volumeId: id, size: requested });
        expect(created.size).toBeGreaterThanOrEqual(requested);
        ctx.expectSize(created.size, requested);
        expect((await ctx.dm.getDevice(id)).size).toBe(created.size);
      });
    },
    ctx.timeout,
  );

  it(
    'a duplicate create fails with DeviceExistsError and changes nothing',
    async () => {
      const id = 'ct-dup';
      await ctx.withVolumes([id], async () => {
        const created = await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize });
        const cap = await ctx.dm.getCapacity();
        for (const size of [opts.volumeSize, opts.volumeSize * 2]) {
          const err = await rejection(ctx.dm.createDevice({ volumeId: id, size }));
          expect(err).toBeInstanceOf(DeviceExistsError);
          expect(err).toMatchObject({ kind: 'AlreadyExists' });
        }
        expect(await ctx.dm.getCapacity()).toEqual(cap);
        expect(await ctx.dm.getDevice(id)).toEqual(created);
      });
    },
    ctx.timeout,
  );

  it(
    'get of an unknown id fails with DeviceNotFoundError; find answers undefined',
    async () => {
      const err = await rejection(ctx.dm.getDevice('ct-unknown'));
      expect(err).toBeInstanceOf(DeviceNotFoundError);
      expect(err).toMatchObject({ kind: 'NotFound' });
      await expect(ctx.dm.findDevice('ct-unknown')).resolves.toBeUndefined();
    },
    ctx.timeout,
  );

  it(
    'delete of an unknown id resolves',
    async () => {
      await expect(ctx.dm.deleteDevice('ct-unknown', true)).resolves.toBeUndefined();
      await expect(ctx.dm.deleteDevice('ct-unknown', false)).resolves.toBeUndefined();
    },
    ctx.timeout,
  );

  it(
    'delete removes the device and restores the capacity exactly',
    async () => {
      const id = 'ct-delete';
      const before = await ctx.dm.getCapacity();
      await ctx.withVolumes([id], async () => {
        await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize });
        await ctx.dm.deleteDevice(id, false);
        expect((await ctx.dm.listDevices()).map((d) => d.volumeId)).not.toContain(id);
        expect(await rejection(ctx.dm.getDevice(id))).toBeInstanceOf(DeviceNotFoundError);
        await expect(ctx.dm.findDevice(id)).resolves.toBeUndefined();
        expect(await ctx.dm.getCapacity()).toEqual(before);
        await expect(ctx.dm.deleteDevice(id, false)).resolves.toBeUndefined();
      });
    },
    ctx.timeout,
  );

  it(
    'a device in use cannot be deleted (DeviceInUseError) and stays intact',
    async () => {
      const id = 'ct-busy';
      await ctx.withVolumes([id], async () => {
        const dev = await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize });
        const cap = await ctx.dm.getCapacity();
        const release = await ctx.fx.hold(dev);
        try {
          for (const erase of [true, false]) {
            const err = await rejection(ctx.dm.deleteDevice(id, erase));
            expect(err).toBeInstanceOf(DeviceInUseError);
            expect(err).toMatchObject({ kind: 'FailedPrecondition' });
          }
        } finally {
          await release();
        }
        expect(await ctx.dm.getDevice(id)).toEqual(dev);
        expect(await ctx.dm.getCapacity()).toEqual(cap);
        await ctx.dm.deleteDevice(id, false);
        expect((await ctx.dm.listDevices()).map((d) => d.volumeId)).not.toContain(id);
      });
    },
    ctx.timeout,
  );

  it(
    'a manager re-created on the same backing store (restart) sees the same devices',
    async () => {
      const id = 'ct-restart';
      await ctx.withVolumes([id], async () => {
        const dev = await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize });
        const cap = await ctx.dm.getCapacity();
        const list = await ctx.dm.listDevices();
        const dm2 = await ctx.fx.reopen();
        try {
          await dm2.setup();
          expect(await dm2.getDevice(id)).toEqual(dev);
          expect(await dm2.findDevice(id)).toEqual(dev);
          expect(await dm2.listDevices()).toEqual(list);
          expect(await dm2.getCapacity()).toEqual(cap);
        } finally {
          await dm2.close();
        }
      });
    },
    ctx.timeout,
  );
}

function registerCapacityCases(ctx: ContractContext): void {
  const { opts } = ctx;
  it(
    'capacity: available shrinks by the rounded size; total and managed stay constant',
    async () => {
      const id = 'ct-cap';
      const before = await ctx.dm.getCapacity();
      checkCapacityShape(before, opts);
      await ctx.withVolumes([id], async () => {
        const dev = await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize + 1 });
        const after = await ctx.dm.getCapacity();
        checkCapacityShape(after, opts);
        ctx.expectShrunk(after.available, before.available, dev.size);
        expect(after.total).toBe(before.total);
        expect(after.managed).toBe(before.managed);
      });
    },
    ctx.timeout,
  );

  it(
    'too large: NotEnoughSpaceError naming the largest size available; maxVolumeSize itself fits',
    async () => {
      const big = 'ct-big';
      const small = 'ct-small';
      await ctx.withVolumes([big, small], async () => {
        const cap = await ctx.dm.getCapacity();
        const err = await rejection(ctx.dm.createDevice({ volumeId: big, size: cap.maxVolumeSize + opts.granularity }));
        expect(err).toBeInstanceOf(NotEnoughSpaceError);
        expect(err).toMatchObject({ kind: 'ResourceExhausted' });
        expect((err as Error).message).toContain(`${cap.maxVolumeSize} bytes`);
        expect(await ctx.dm.getCapacity()).toEqual(cap);
        expect((await ctx.dm.listDevices()).map((d) => d.volumeId)).not.toContain(big);

        const dev = await ctx.dm.createDevice({ volumeId: big, size: cap.maxVolumeSize });
        ctx.expectSize(dev.size, cap.maxVolumeSize);
        const full = await ctx.dm.getCapacity();
        expect(full.maxVolumeSize).toBeLessThan(opts.volumeSize);
        const err2 = await rejection(ctx.dm.createDevice({ volumeId: small, size: opts.volumeSize }));
        expect(err2).toBeInstanceOf(NotEnoughSpaceError);
        expect((err2 as Error).message).toContain(`${full.maxVolumeSize} bytes`);
      });
    },
    ctx.timeout,
  );
}

function checkCapacityShape(cap: Capacity, opts: ContractOptions): void {
  expect(cap.maxVolumeSize).toBeLessThanOrEqual(cap.available);
  expect(cap.available).toBeLessThanOrEqual(cap.managed);
  expect(cap.managed).toBeLessThanOrEqual(cap.total);
  expect(cap.maxVolumeSize % opts.granularity).toBe(0);
  if (opts.totalSize !== undefined) expect(cap.total).toBe(opts.totalSize);
}

/** Offsets that cover the start, the first 4 KiB boundary, the middle and the end of a device. */
function probeOffsets(size: number): number[] {
  return [...new Set([0, 4096, Math.floor(size / 2 / 4096) * 4096, size - 4096])];
}

function registerEraseCases(ctx: ContractContext): void {
  const { opts } = ctx;
  it('the fixture can observe erasure (readable devices or recorded erasures)', () => {
    expect(opts.readable || ctx.fx.erasures !== undefined).toBe(true);
  });

  for (const erase of [true, false]) {
    it(
      `delete with erase=${erase} zeroes ${erase ? 'the whole device' : 'the first 4 KiB'}`,
      async () => {
        const id = `ct-erase-${erase}`;
        await ctx.withVolumes([id], async () => {
          const dev = await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize });
          const offsets = probeOffsets(dev.size);
          if (opts.readable) {
            for (const off of offsets) await ctx.io.write(dev, off, Buffer.alloc(4096, PATTERN));
            expect((await ctx.io.read(dev, offsets.at(-1)!, 4096))[0]).toBe(PATTERN);
          }
          const seen = ctx.fx.erasures?.().length ?? 0;
          await ctx.dm.deleteDevice(id, erase);
          const erasures = ctx.fx.erasures?.().slice(seen);
          if (erasures !== undefined) expect(erasures).toEqual([{ path: dev.path, bytes: erase ? dev.size : 4096 }]);
          if (!opts.readable) return;
          // A new device of the same size usually reuses the same blocks (LVM extents, namespace
          // offsets): what was erased must read back as zeros.
          const again = await ctx.dm.createDevice({ volumeId: id, size: dev.size });
          const checked = erase ? offsets : [0];
          for (const off of checked) expect((await ctx.io.read(again, off, 4096)).every((b) => b === 0)).toBe(true);
        });
      },
      ctx.timeout,
    );
  }
}

function registerAllocationCases(ctx: ContractContext): void {
  const { opts } = ctx;
  it(
    'allocationSize says beforehand what create and resize give, and changes nothing',
    async () => {
      const id = 'ct-alloc';
      const requested = opts.volumeSize + 1;
      await ctx.withVolumes([id], async () => {
        const cap = await ctx.dm.getCapacity();
        const predicted = await ctx.dm.allocationSize(requested);
        ctx.expectSize(predicted, requested);
        // Not even a size beyond the free space is refused: the prediction is about rounding only.
        expect(await ctx.dm.allocationSize(cap.maxVolumeSize + opts.granularity)).toBeGreaterThan(cap.maxVolumeSize);
        expect(await ctx.dm.getCapacity()).toEqual(cap);
        expect((await ctx.dm.listDevices()).map((d) => d.volumeId)).not.toContain(id);

        const dev = await ctx.dm.createDevice({ volumeId: id, size: requested });
        if (ctx.exact) expect(dev.size).toBe(predicted);
        else expect(dev.size).toBeGreaterThanOrEqual(predicted); // a lower bound where the kernel decides
        expect(await ctx.dm.allocationSize(1, { grow: id })).toBe(dev.size); // never shrinks
        expect(await ctx.dm.allocationSize(dev.size, { grow: id })).toBe(dev.size);
        const grown = dev.size + opts.granularity + 1;
        if (opts.resize) {
          const after = await ctx.dm.allocationSize(grown, { grow: id });
          expect(after).toBe(ctx.roundUp(grown));
          expect(await ctx.dm.getDevice(id)).toEqual(dev);
          expect((await ctx.dm.resizeDevice(id, grown)).size).toBe(after);
        } else {
          expect(await rejection(ctx.dm.allocationSize(grown, { grow: id }))).toMatchObject({ kind: 'Unimplemented' });
          expect(await ctx.dm.getDevice(id)).toEqual(dev);
        }
        const err = await rejection(ctx.dm.allocationSize(requested, { grow: 'ct-unknown' }));
        expect(err).toBeInstanceOf(DeviceNotFoundError);
        expect(err).toMatchObject({ kind: 'NotFound' });
      });
    },
    ctx.timeout,
  );
}

function registerResizeCases(ctx: ContractContext): void {
  const { opts } = ctx;
  if (!opts.resize) {
    it(
      'resize is not supported: UnimplementedError',
      async () => {
        const id = 'ct-resize';
        await ctx.withVolumes([id], async () => {
          const dev = await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize });
          const err = await rejection(ctx.dm.resizeDevice(id, dev.size * 2));
          expect(err).toMatchObject({ kind: 'Unimplemented' });
        });
      },
      ctx.timeout,
    );
    return;
  }
  it(
    'resize grows the device, keeps its data and accounts the difference',
    async () => {
      const id = 'ct-resize';
      await ctx.withVolumes([id], async () => {
        const dev = await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize });
        if (opts.readable) await ctx.io.write(dev, 0, Buffer.alloc(4096, PATTERN));
        const before = await ctx.dm.getCapacity();
        const requested = dev.size + opts.granularity + 1;
        const grown = await ctx.dm.resizeDevice(id, requested);
        expect(grown).toMatchObject({ volumeId: id, size: ctx.roundUp(requested) });
        expect(await ctx.dm.getDevice(id)).toEqual(grown);
        expect((await ctx.dm.getCapacity()).available).toBe(before.available - (grown.size - dev.size));
        expect(await ctx.dm.resizeDevice(id, dev.size)).toEqual(grown); // never shrinks
        if (opts.readable) {
          expect((await ctx.io.read(grown, 0, 4096))[0]).toBe(PATTERN);
          expect((await ctx.io.read(grown, grown.size - 4096, 4096)).length).toBe(4096);
        }
      });
    },
    ctx.timeout,
  );

  it(
    'resize errors: unknown id → DeviceNotFoundError, too large → NotEnoughSpaceToGrowError with the largest size it can grow to',
    async () => {
      const id = 'ct-resize-err';
      await ctx.withVolumes([id], async () => {
        expect(await rejection(ctx.dm.resizeDevice('ct-unknown', opts.volumeSize))).toBeInstanceOf(DeviceNotFoundError);
        const dev = await ctx.dm.createDevice({ volumeId: id, size: opts.volumeSize });
        const cap = await ctx.dm.getCapacity();
        const requested = dev.size + cap.maxVolumeSize + opts.granularity;
        const err = await rejection(ctx.dm.resizeDevice(id, requested));
        expect(err).toBeInstanceOf(NotEnoughSpaceToGrowError);
        // The largest size it can grow to: at least what it has, less than asked (callers name the free bytes).
        const { maxSize } = err as NotEnoughSpaceToGrowError;
        expect(maxSize).toBeGreaterThanOrEqual(dev.size);
        expect(maxSize).toBeLessThan(requested);
        expect(await ctx.dm.getDevice(id)).toEqual(dev);
        expect(await ctx.dm.getCapacity()).toEqual(cap);
      });
    },
    ctx.timeout,
  );
}

function registerConcurrencyCases(ctx: ContractContext): void {
  const { opts } = ctx;
  it(
    'concurrent creates of different ids all succeed and are accounted exactly',
    async () => {
      const names = ids('ct-conc', opts.concurrency ?? 4);
      await ctx.withVolumes(names, async () => {
        const before = await ctx.dm.getCapacity();
        const devs = await Promise.all(
          names.map((volumeId) => ctx.dm.createDevice({ volumeId, size: opts.volumeSize })),
        );
        expect(new Set(devs.map((d) => d.path)).size).toBe(names.length);
        const listed = (await ctx.dm.listDevices()).filter((d) => names.includes(d.volumeId));
        expect(listed.sort((a, b) => a.volumeId.localeCompare(b.volumeId))).toEqual(devs);
        const total = devs.reduce((sum, d) => sum + d.size, 0);
        ctx.expectShrunk((await ctx.dm.getCapacity()).available, before.available, total);
        await Promise.all(names.map((volumeId) => ctx.dm.deleteDevice(volumeId, false)));
        expect(await ctx.dm.getCapacity()).toEqual(before);
      });
    },
    ctx.timeout,
  );
}
