// The reconcile queue: level-triggered, one reconcile in flight per key, coalescing. Many events
// for one CR (a rollout changes the DaemonSet status dozens of times) become one pending entry;
// an event that arrives while the key is being reconciled makes it run once more afterwards, so
// the final state is always seen. Failures are retried with per-key exponential backoff (capped);
// a handler may ask to be run again after a delay (certificate renewal). Keys are CR names.
import type { Clock, TimerHandle } from '../clock.js';

export interface HandlerResult {
  /** Run this key again after this many milliseconds (e.g. a certificate renewal time). */
  readonly requeueAfterMs?: number;
}

export type QueueHandler = (key: string) => Promise<HandlerResult | void>;

export interface QueueOptions {
  readonly clock: Clock;
  /** Keys reconciled in parallel (never the same key twice). */
  readonly concurrency?: number;
  readonly baseBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Called after every run, for logs and metrics. */
  readonly onResult?: (key: string, result: { ok: boolean; error?: unknown; retryInMs?: number }) => void;
}

export const DEFAULT_BACKOFF = { baseMs: 1000, maxMs: 5 * 60 * 1000 } as const;

export class ReconcileQueue {
  readonly #handler: QueueHandler;
  readonly #clock: Clock;
  readonly #concurrency: number;
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #onResult: QueueOptions['onResult'];
  /** key -> earliest time it is due. */
  readonly #pending = new Map<string, number>();
  readonly #running = new Map<string, Promise<void>>();
  readonly #failures = new Map<string, number>();
  #timer: TimerHandle | undefined;
  #timerDue = Infinity;
  #stopped = false;

  constructor(handler: QueueHandler, options: QueueOptions) {
    this.#handler = handler;
    this.#clock = options.clock;
    this.#concurrency = options.concurrency ?? 2;
    this.#baseMs = options.baseBackoffMs ?? DEFAULT_BACKOFF.baseMs;
    this.#maxMs = options.maxBackoffMs ?? DEFAULT_BACKOFF.maxMs;
    this.#onResult = options.onResult;
  }

  /** Enqueue `key` to run after `delayMs` (0 = as soon as possible); an earlier pending time wins. */
  add(key: string, delayMs = 0): void {
    if (this.#stopped) return;
    const due = this.#clock.now() + Math.max(0, delayMs);
    const current = this.#pending.get(key);
    if (current === undefined || due < current) this.#pending.set(key, due);
    this.#dispatch();
  }

  /** Keys waiting (not counting those in flight). */
  get pendingCount(): number {
    return this.#pending.size;
  }

  get runningCount(): number {
    return this.#running.size;
  }

  /** Consecutive failures of `key` (0 after a success). */
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Stop dispatching and wait for the reconciles in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#pending.clear();
    await Promise.allSettled([...this.#running.values()]);
  }

  /** Backoff before retry number `failures` (1, 2, ...): base * 2^(n-1), capped. */
  backoffMs(failures: number): number {
    return Math.min(this.#maxMs, this.#baseMs * 2 ** Math.min(failures - 1, 30));
  }

  #dispatch(): void {
    if (this.#stopped) return;
    const now = this.#clock.now();
    let nextDue = Infinity;
    const ready = [...this.#pending.entries()].filter(([key]) => !this.#running.has(key)).sort((a, b) => a[1] - b[1]);
    for (const [key, due] of ready) {
      if (due > now) {
        nextDue = Math.min(nextDue, due);
      } else if (this.#running.size < this.#concurrency) {
        this.#pending.delete(key);
        this.#running.set(key, this.#run(key));
      }
    }
    this.#arm(nextDue);
  }

  #arm(due: number): void {
    if (due === this.#timerDue) return;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerDue = due;
    if (due === Infinity) return;
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      this.#timerDue = Infinity;
      this.#dispatch();
    }, due - this.#clock.now());
  }

  async #run(key: string): Promise<void> {
    try {
      const result = await this.#handler(key);
      this.#failures.delete(key);
      this.#onResult?.(key, { ok: true });
      if (result?.requeueAfterMs !== undefined) this.add(key, result.requeueAfterMs);
    } catch (error) {
      const failures = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, failures);
      const retryInMs = this.backoffMs(failures);
      this.#onResult?.(key, { ok: false, error, retryInMs });
      this.add(key, retryInMs);
    } finally {
      this.#running.delete(key);
      this.#dispatch();
    }
  }
}
