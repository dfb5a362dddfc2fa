// Waiting with a deadline, always naming what is awaited: a cluster test that hangs tells you
// which condition never came true and what the last attempt saw.

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Thrown when a wait runs out of time; the message names the condition and the last observation. */
export class WaitTimeoutError extends Error {
  constructor(what: string, timeoutMs: number, last: string) {
    super(
      `timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${last === '' ? '' : ` (last: ${last})`}`,
    );
    this.name = 'WaitTimeoutError';
  }
}

/** Thrown by a check to end the wait at once: the condition can no longer come true. */
export class WaitAborted extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WaitAborted';
  }
}

export interface WaitOptions {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
}

/**
 * Poll `check` until it returns a value other than undefined. A thrown error counts as "not yet"
 * (and becomes the last observation), except WaitAborted, which ends the wait; the string of
 * `describe` after each miss is the last observation too.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  options: WaitOptions & { describe?: () => Promise<string> | string } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
      if (options.describe !== undefined) last = await options.describe();
    } catch (e) {
      if (e instanceof WaitAborted) throw e;
      last = e instanceof Error ? e.message : String(e);
    }
    if (Date.now() >= deadline) throw new WaitTimeoutError(what, timeoutMs, last);
    await sleep(Math.min(options.intervalMs ?? 250, Math.max(0, deadline - Date.now())));
  }
}

/** Run `fn` and report how long it took. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - started };
}
