// A Clock that only moves when a test says so. `advance` fires due timers in time order and lets
// the promise chains they start settle before moving on.
import type { Clock, TimerHandle } from '../clock.js';

interface Timer {
  readonly id: number;
  readonly due: number;
  readonly callback: () => void;
}

/** Let pending promise callbacks (and I/O callbacks of this tick) run. */
export async function settle(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class ManualClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: Timer[] = [];

  constructor(start = Date.parse('2026-01-01T00:00:00Z')) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const timer = { id: this.#nextId++, due: this.#now + Math.max(0, delayMs), callback };
    this.#timers.push(timer);
    return { cancel: () => void (this.#timers = this.#timers.filter((t) => t.id !== timer.id)) };
  }

  get timerCount(): number {
    return this.#timers.length;
  }

  /** Move time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    await settle();
    for (;;) {
      const next = [...this.#timers].sort((a, b) => a.due - b.due || a.id - b.id)[0];
      if (next === undefined || next.due > end) break;
      this.#timers = this.#timers.filter((t) => t.id !== next.id);
      this.#now = Math.max(this.#now, next.due);
      next.callback();
      await settle();
    }
    this.#now = end;
    await settle();
  }
}
