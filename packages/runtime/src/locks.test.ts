import { AbortedError } from '@pmem-csi/csi';
import { KeyedLocks, SerialQueue } from './locks.js';

describe('KeyedLocks', () => {
  it('lets exactly one of two concurrent callers hold a key', async () => {
    const locks = new KeyedLocks();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = locks.withLocks(['vol-a'], 'volume', () => gate.then(() => 'first'));
    const second = locks.withLocks(['vol-a'], 'volume', async () => 'second');
    await expect(second).rejects.toBeInstanceOf(AbortedError);
    await expect(second).rejects.toThrow('an operation on volume "vol-a" is already in progress');
    release();
    await expect(first).resolves.toBe('first');
    expect(locks.isHeld('vol-a')).toBe(false);
  });

  it('releases keys taken before a conflict', async () => {
    const locks = new KeyedLocks();
    const held = locks.tryAcquire('b');
    await expect(locks.withLocks(['a', 'b'], 'volume', async () => 1)).rejects.toBeInstanceOf(AbortedError);
    expect(locks.isHeld('a')).toBe(false);
    held?.();
    await expect(locks.withLocks(['a', 'b'], 'volume', async () => 1)).resolves.toBe(1);
  });
});

describe('SerialQueue', () => {
  it('runs calls one after another, even when one fails', async () => {
    const q = new SerialQueue();
    const order: string[] = [];
    let active = 0;
    const job = (name: string, fail = false) =>
      q.run(async () => {
        active++;
        expect(active).toBe(1);
        await new Promise((r) => setTimeout(r, 5));
        order.push(name);
        active--;
        if (fail) throw new Error(name);
        return name;
      });
    const results = await Promise.allSettled([job('a'), job('b', true), job('c')]);
    expect(order).toEqual(['a', 'b', 'c']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
