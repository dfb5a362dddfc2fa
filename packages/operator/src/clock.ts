// Time, injectable: the queue, informers and leader election schedule everything through a Clock
// so that tests drive them with a manual clock (testing/manual-clock.ts) instead of real waiting.

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimer(callback: () => void, delayMs: number): TimerHandle;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(callback, delayMs) {
    // setTimeout fires at once for delays beyond 2^31-1 ms; callers cap long delays anyway.
    const t = setTimeout(callback, Math.min(Math.max(0, delayMs), 2 ** 31 - 1));
    return { cancel: () => clearTimeout(t) };
  },
};

/** A promise that resolves after `delayMs` on `clock`, or at once when `signal` aborts. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
