import { ReconcileQueue } from './queue.js';
import { ManualClock, settle } from '../testing/manual-clock.js';

/** A handler whose runs a test finishes by hand. */
function controllableHandler(): {
  calls: string[];
  finish(result?: Error): void;
  active: Map<string, number>;
  maxActive: number;
  handler: (key: string) => Promise<void>;
} {
  const waiting: Array<(e?: Error) => void> = [];
  const state = {
    calls: [] as string[],
    active: new Map<string, number>(),
    maxActive: 0,
    finish(result?: Error) {
      waiting.shift()?.(result);
    },
    handler: async (key: string): Promise<void> => {
      state.calls.push(key);
      state.active.set(key, (state.active.get(key) ?? 0) + 1);
      state.maxActive = Math.max(state.maxActive, state.active.get(key) ?? 0);
      try {
        await new Promise<void>((resolve, reject) => waiting.push((e) => (e === undefined ? resolve() : reject(e))));
      } finally {
        state.active.set(key, (state.active.get(key) ?? 1) - 1);
      }
    },
  };
  return state;
}

describe('ReconcileQueue', () => {
  it('coalesces events for one key into one run', async () => {
    const clock = new ManualClock();
    const h = controllableHandler();
    const q = new ReconcileQueue(h.handler, { clock, concurrency: 1 });
    q.add('busy');
    await settle();
    for (let i = 0; i < 5; i++) q.add('a');
    expect(q.pendingCount).toBe(1);
    h.finish();
    await settle();
    h.finish();
    await settle();
    expect(h.calls).toEqual(['busy', 'a']);
    await q.stop();
  });

  it('never runs one key twice at once, and runs it again when an event came in meanwhile', async () => {
    const clock = new ManualClock();
    const h = controllableHandler();
    const q = new ReconcileQueue(h.handler, { clock, concurrency: 4 });
    q.add('a');
    await settle();
    q.add('a');
    q.add('a');
    await settle();
    expect(h.calls).toEqual(['a']);
    h.finish();
    await settle();
    expect(h.calls).toEqual(['a', 'a']);
    h.finish();
    await settle();
    expect(h.calls).toEqual(['a', 'a']);
    expect(h.maxActive).toBe(1);
  });

  it('runs different keys in parallel up to the concurrency', async () => {
    const clock = new ManualClock();
    const h = controllableHandler();
    const q = new ReconcileQueue(h.handler, { clock, concurrency: 2 });
    q.add('a');
    q.add('b');
    q.add('c');
    await settle();
    expect(h.calls).toEqual(['a', 'b']);
    expect(q.runningCount).toBe(2);
    expect(q.pendingCount).toBe(1);
    h.finish();
    await settle();
    expect(h.calls).toEqual(['a', 'b', 'c']);
    h.finish();
    h.finish();
    await q.stop();
  });

  it('retries failures with exponential backoff, capped, and resets after a success', async () => {
    const clock = new ManualClock();
    const times: number[] = [];
    let fail = true;
    const start = clock.now();
    const results: Array<{ ok: boolean; retryInMs?: number }> = [];
    const q = new ReconcileQueue(
      async () => {
        times.push(clock.now() - start);
        if (fail) throw new Error('apiserver unavailable');
      },
      {
        clock,
        baseBackoffMs: 1000,
        maxBackoffMs: 8000,
        onResult: (_k, r) =>
          results.push({ ok: r.ok, ...(r.retryInMs === undefined ? {} : { retryInMs: r.retryInMs }) }),
      },
    );
    q.add('a');
    await clock.advance(1000 + 2000 + 4000 + 8000 + 8000);
    expect(times).toEqual([0, 1000, 3000, 7000, 15000, 23000]);
    expect(results.slice(0, 5).map((r) => r.retryInMs)).toEqual([1000, 2000, 4000, 8000, 8000]);
    expect(q.failures('a')).toBe(6);
    fail = false;
    await clock.advance(8000);
    expect(q.failures('a')).toBe(0);
    expect(q.pendingCount).toBe(0);
    await clock.advance(60_000);
    expect(times).toHaveLength(7);
  });

  it('honours requeueAfterMs and lets an earlier event win', async () => {
    const clock = new ManualClock();
    const times: number[] = [];
    const start = clock.now();
    const q = new ReconcileQueue(
      async () => {
        times.push(clock.now() - start);
        return { requeueAfterMs: 60_000 };
      },
      { clock },
    );
    q.add('a');
    await clock.advance(60_000);
    expect(times).toEqual([0, 60_000]);
    await clock.advance(10_000);
    q.add('a');
    await settle();
    expect(times).toEqual([0, 60_000, 70_000]);
    await q.stop();
  });

  it('stop waits for runs in flight and accepts nothing afterwards', async () => {
    const clock = new ManualClock();
    const h = controllableHandler();
    const q = new ReconcileQueue(h.handler, { clock });
    q.add('a');
    await settle();
    let stopped = false;
    const stopping = q.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    h.finish();
    await stopping;
    q.add('b');
    await settle();
    expect(h.calls).toEqual(['a']);
  });
});
