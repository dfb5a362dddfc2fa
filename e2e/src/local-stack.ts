// The local stack (controller + node driver processes, mutual TLS) in e2e suites: one stack per
// describe block, and calls to a controller that is settling after a (re)start — it answers
// UNAVAILABLE until every node has been listed, and ABORTED while another call holds the same name.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll } from '@jest/globals';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { ControllerCsi, startLocalStack, type LocalStack } from '@pmem-csi/driver';
import { createLogger, isServiceError } from '@pmem-csi/runtime';

/**
 * Inside a describe (or at the top of a file): a fresh stack in `dir` started before the tests
 * and stopped after them; the getters fail with the reason when it did not start.
 */
export function useStack(
  dir: string,
  mode: 'emulated' | 'fake',
  nodes: ReadonlyArray<readonly [string, number]>,
): { stack: () => LocalStack; ctl: () => ControllerCsi } {
  let stack: LocalStack | undefined;
  let ctl: ControllerCsi | undefined;
  beforeAll(async () => {
    if (mode === 'emulated' && process.getuid?.() !== 0)
      throw new Error('these cases need root (emulated PMEM on loop devices); CI runs as root');
    await rm(dir, { recursive: true, force: true });
    stack = await startLocalStack(dir, mode, createLogger({ level: 'warn' }), nodes);
    ctl = new ControllerCsi(stack.controllerSocket);
  }, 120_000);
  afterAll(async () => {
    ctl?.close();
    await stack?.stop();
  }, 60_000);
  const must = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('the stack did not start (see beforeAll)');
    return v;
  };
  return { stack: () => must(stack), ctl: () => must(ctl) };
}

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
