// Calls to a controller that is settling after a (re)start: it answers UNAVAILABLE until every
// node has been listed, and ABORTED while another call holds the same name.
import * as grpc from '@grpc/grpc-js';
import { setTimeout as sleep } from 'node:timers/promises';
import { isServiceError } from '@pmem-csi/runtime';

const RETRYABLE: ReadonlySet<number> = new Set([grpc.status.UNAVAILABLE, grpc.status.ABORTED]);

/** Retry `fn` while it fails with UNAVAILABLE or ABORTED; any other failure is thrown at once. */
export async function whileSettling<T>(fn: () => Promise<T>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (!isServiceError(e) || !RETRYABLE.has(e.code)) throw e;
      if (Date.now() > deadline) {
        throw new Error(`still UNAVAILABLE/ABORTED after ${timeoutMs / 1000} s: ${e.details}`, { cause: e });
      }
    }
    await sleep(200);
  }
}
