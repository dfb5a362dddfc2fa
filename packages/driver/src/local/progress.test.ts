// Progress lines of the local stack's long steps, on Jest's fake clock: a line every interval
// while the step waits, naming what it waits for (as it changes), the time waited and the limit;
// nothing for a quick step, nothing after the step settles, whether it resolves or rejects.
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { createProgress, progressLine, silentProgress } from './progress.js';

/** A promise settled by hand. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: Error) => void } {
  let resolve: (v: T) => void = () => undefined;
  let reject: (e: Error) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('progressLine', () => {
  it('names what is waited for, the whole seconds waited and the limit', () => {
    expect(progressLine('node-1 to register with the controller', 4200, 60_000)).toBe(
      'waiting for node-1 to register with the controller (4 s, up to 60 s)…',
    );
    expect(progressLine('the certificates', 2999)).toBe('waiting for the certificates (2 s)…');
    expect(progressLine('x', 0, 1500)).toBe('waiting for x (0 s, up to 1.5 s)…');
  });
});

describe('createProgress', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('prints a line every interval while the step waits, and stops when it resolves', async () => {
    const lines: string[] = [];
    const progress = createProgress((l) => lines.push(l), 3000);
    const work = deferred<string>();
    const result = progress({ what: 'the certificates', limitMs: 90_000 }, work.promise);
    await jest.advanceTimersByTimeAsync(2999);
    expect(lines).toEqual([]);
    await jest.advanceTimersByTimeAsync(6001);
    expect(lines).toEqual([
      'waiting for the certificates (3 s, up to 90 s)…',
      'waiting for the certificates (6 s, up to 90 s)…',
      'waiting for the certificates (9 s, up to 90 s)…',
    ]);
    work.resolve('done');
    await expect(result).resolves.toBe('done');
    await jest.advanceTimersByTimeAsync(30_000);
    expect(lines).toHaveLength(3);
  });

  it('asks a changing description anew for each line', async () => {
    const lines: string[] = [];
    const progress = createProgress((l) => lines.push(l), 1000);
    let waitingFor = 'node-a, node-b to register with the controller';
    const work = deferred<void>();
    const result = progress({ what: () => waitingFor, limitMs: 60_000 }, work.promise);
    await jest.advanceTimersByTimeAsync(1000);
    waitingFor = 'node-b to register with the controller';
    await jest.advanceTimersByTimeAsync(1000);
    work.resolve();
    await result;
    expect(lines).toEqual([
      'waiting for node-a, node-b to register with the controller (1 s, up to 60 s)…',
      'waiting for node-b to register with the controller (2 s, up to 60 s)…',
    ]);
  });

  it('prints nothing for a step quicker than the interval', async () => {
    const lines: string[] = [];
    const progress = createProgress((l) => lines.push(l), 3000);
    await expect(progress({ what: 'quick' }, Promise.resolve(7))).resolves.toBe(7);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(lines).toEqual([]);
  });

  it('passes a failure on and stops printing', async () => {
    const lines: string[] = [];
    const progress = createProgress((l) => lines.push(l), 1000);
    const work = deferred<void>();
    const result = progress({ what: 'DeleteVolume v1 on node-a (erasing the device)', limitMs: 120_000 }, work.promise);
    const settled = result.catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(1500);
    work.reject(new Error('DEADLINE_EXCEEDED'));
    expect(await settled).toEqual(new Error('DEADLINE_EXCEEDED'));
    await jest.advanceTimersByTimeAsync(5000);
    expect(lines).toEqual(['waiting for DeleteVolume v1 on node-a (erasing the device) (1 s, up to 120 s)…']);
  });

  it('refuses an interval that is not a positive number', () => {
    expect(() => createProgress(() => undefined, 0)).toThrow(
      new RangeError('progress interval: 0 ms; allowed: a positive number of milliseconds'),
    );
    expect(() => createProgress(() => undefined, Number.NaN)).toThrow(RangeError);
  });

  it('silentProgress only waits', async () => {
    await expect(silentProgress({ what: 'x' }, Promise.resolve(1))).resolves.toBe(1);
  });
});
