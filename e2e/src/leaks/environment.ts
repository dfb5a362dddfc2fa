// The e2e test environment (issue 14, R1: "a leak checker runs after every e2e test"): Jest's node
// environment plus a snapshot of the host before each test file and a comparison after it
// (snapshot.ts, diff.ts). The check runs on jest-circus's `run_finish` event, that is after every
// afterAll hook of the file — a setupFilesAfterEnv hook could not: jest-circus runs afterAll hooks
// in the order they were declared, so one declared by a setup file runs before the file's own
// clean-up. What the file left fails that file (as an error of the file, beside its test results)
// and is printed: device and backing file, mount point, pid and command line, path.
// Each file gets a tag in the environment (PMEM_CSI_LEAK_TAG), inherited by every process it
// starts, so that its processes are recognised even after init adopted them.
// Loaded through environment.mjs (Jest imports a test environment outside its module system).
import { randomBytes } from 'node:crypto';
import { relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import type { Circus } from '@jest/types';
import { TestEnvironment } from 'jest-environment-node';
import { findLeaks, formatClean, formatLeaks, type Leak } from './diff.js';
import { takeSnapshot, type HostSnapshot } from './snapshot.js';

/** The environment variable that marks the processes a test file started. */
export const LEAK_TAG_ENV = 'PMEM_CSI_LEAK_TAG';

/** Teardown that is still settling (a loop device the kernel releases a moment after its last unmount): looked at again. */
const RECHECK = { times: 4, everyMs: 500 } as const;

/** Compare the host with `before` until nothing is left or the re-checks are used up; returns what is still left. */
export async function checkLeaks(
  before: HostSnapshot,
  tag: { name: string; value: string },
  rootPid: number,
): Promise<{ leaks: Leak[]; after: HostSnapshot }> {
  let after = await takeSnapshot({ before, tag });
  let leaks = findLeaks(before, after, rootPid);
  for (let i = 0; i < RECHECK.times && leaks.length > 0; i++) {
    await sleep(RECHECK.everyMs);
    after = await takeSnapshot({ before, tag });
    leaks = findLeaks(before, after, rootPid);
  }
  return { leaks, after };
}

export class LeakCheckEnvironment extends TestEnvironment {
  readonly #file: string;
  readonly #tag: { name: string; value: string };
  #before: HostSnapshot | undefined;
  #checked = false;

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    // As the person who started the run would type it (nx runs Jest in e2e/, npm run e2e in the repository).
    this.#file = relative(process.cwd(), context.testPath);
    this.#tag = { name: LEAK_TAG_ENV, value: `${process.pid}-${randomBytes(6).toString('hex')}` };
  }

  override async setup(): Promise<void> {
    await super.setup();
    // Both: children spawned with the default environment get the real process's, test code that
    // spreads `process.env` into a child's environment spreads the sandbox's copy.
    process.env[this.#tag.name] = this.#tag.value;
    const sandboxEnv = (this.global as { process?: { env?: Record<string, string | undefined> } }).process?.env;
    if (sandboxEnv !== undefined) sandboxEnv[this.#tag.name] = this.#tag.value;
    this.#before = await takeSnapshot();
  }

  /** After the file's last afterAll hook: what it left becomes an error of the file. */
  async handleTestEvent(event: Circus.AsyncEvent, state: Circus.State): Promise<void> {
    if (event.name !== 'run_finish') return;
    const error = await this.#check();
    if (error !== undefined) state.unhandledErrors.push(error);
  }

  override async teardown(): Promise<void> {
    try {
      // A file that failed before its tests ran never reaches run_finish: check it here, reporting only.
      if (!this.#checked) await this.#check();
    } finally {
      if (process.env[this.#tag.name] === this.#tag.value) delete process.env[this.#tag.name];
      await super.teardown();
    }
  }

  async #check(): Promise<Error | undefined> {
    this.#checked = true;
    if (this.#before === undefined) return undefined;
    const started = Date.now();
    const { leaks, after } = await checkLeaks(this.#before, this.#tag, process.pid);
    if (leaks.length === 0) {
      process.stderr.write(`${formatClean(this.#file, after, Date.now() - started)}\n`);
      return undefined;
    }
    const report = formatLeaks(this.#file, leaks);
    process.stderr.write(`${report}\n`);
    // Jest prints the first line of a stack as the message and the rest below it: the report is the
    // whole story (with the whole report as message too, the leaks were printed twice).
    const error = new Error(report.split('\n')[0]);
    error.stack = report;
    return error;
  }
}
