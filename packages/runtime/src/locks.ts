// Per-key locks for CSI operations. The check and the take happen in the same synchronous call,
// so two concurrent requests for one key can never both pass (no await between check and set).
// A conflicting caller gets AbortedError, as the CSI spec asks ("operation pending for volume").
import { AbortedError } from '@pmem-csi/csi';

/** A set of held keys; `tryAcquire` either takes the key now or reports it busy. */
export class KeyedLocks {
  readonly #held = new Set<string>();

  /** Take `key` now, or return undefined when it is held. */
  tryAcquire(key: string): (() => void) | undefined {
    if (this.#held.has(key)) return undefined;
    this.#held.add(key);
    let released = false;
    return () => {
      if (!released) {
        released = true;
        this.#held.delete(key);
      }
    };
  }

  /** Run `fn` holding all `keys`; throws AbortedError naming the busy key when one is held. */
  async withLocks<T>(keys: readonly string[], what: string, fn: () => Promise<T>): Promise<T> {
    const releases: Array<() => void> = [];
    for (const key of new Set(keys)) {
      const release = this.tryAcquire(key);
      if (release === undefined) {
        releases.forEach((r) => r());
        throw new AbortedError(`an operation on ${what} ${JSON.stringify(key)} is already in progress`);
      }
      releases.push(release);
    }
    try {
      return await fn();
    } finally {
      releases.forEach((r) => r());
    }
  }

  isHeld(key: string): boolean {
    return this.#held.has(key);
  }
}

/** A FIFO mutex: callers wait their turn (used to serialize ndctl and LVM calls per node). */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Run `fn` after every previously queued call has settled. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn, fn);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
