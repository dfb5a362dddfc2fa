// `pmem-csi-driver local` (npm start): the whole stack on this machine — a controller and three node
// drivers on emulated PMEM (fake devices when not root, and it says so), mutual TLS with
// certificates from our own certificate code — then a guided demonstration. With --keep the stack
// stays up until Ctrl-C so csi-sanity or any CSI client can be pointed at the printed sockets;
// without it the sockets are not printed (they are gone a moment later), only how to keep them.
// Every step that waits (certificates, registration, the demonstration's calls, stopping) prints a
// progress line every few seconds naming what it waits for and its time limit (progress.ts).
// SIGINT, SIGTERM, SIGHUP or the loss of the parent process stop it at any moment — during start-up,
// the demonstration or the --keep wait — and every child process is stopped and the state
// directory released (mounts, loop devices, sockets, lock). A second Ctrl-C kills the children.
import { DEFAULT_DRIVER_NAME } from '@pmem-csi/api';
import { createLogger } from '@pmem-csi/runtime';
import type { LocalFlags } from '../cli.js';
import { runDemo } from './demo.js';
import { keepHints, tornDownHint } from './hints.js';
import { StackLockedError } from './lock.js';
import { createProgress } from './progress.js';
import { chooseDeviceMode, startLocalStack, type LocalStack } from './stack.js';
import { watchStopRequests, type StopRequests } from './stop-requests.js';
import { localStackDir } from './workdir.js';

const say = (line: string): void => void process.stdout.write(`${line}\n`);

const indented = (line: string): void => say(`   ${line}`);

/** The demonstration and the --keep wait; ends early (the rest abandoned) when a stop is requested. */
async function demonstrate(stack: LocalStack, flags: LocalFlags, stop: StopRequests): Promise<'done' | 'interrupted'> {
  let keeping = false;
  // Once a stop is requested the abandoned demonstration goes quiet.
  const tell = (line: string): void => {
    if (!stop.signal.aborted) say(line);
  };
  const work = (async (): Promise<void> => {
    say(`   ${stack.nodes.map((n) => n.id).join(', ')} registered`);
    await runDemo(
      stack,
      DEFAULT_DRIVER_NAME,
      tell,
      createProgress((line) => tell(`   ${line}`)),
    );
    if (!flags.keep) return;
    for (const line of keepHints(stack)) say(line);
    keeping = true;
    await stop.requested;
  })();
  // The demonstration's calls fail once the processes stop: that outcome is no longer of interest.
  work.catch(() => undefined);
  // A stop during the --keep wait is the expected end; during the demonstration it interrupts it.
  return Promise.race([
    work.then(() => 'done' as const),
    stop.requested.then(() => (keeping ? ('done' as const) : ('interrupted' as const))),
  ]);
}

/** Run the local stack; resolves with the process exit code. */
export async function runLocalStack(flags: LocalFlags): Promise<number> {
  const dir = localStackDir(flags.stateDir);
  const stop = watchStopRequests();
  let stack: LocalStack | undefined;
  stop.onRepeat((reason) => {
    say(`\n${reason} again: killing the stack's processes`);
    for (const p of stack?.processes ?? []) void p.kill();
  });
  try {
    const { mode, why } = chooseDeviceMode(flags.fake);
    say(`PMEM-CSI local stack in ${dir}`);
    say(`device mode: ${mode} (${why})`);
    say('\n1. Certificates (own CA), controller and 3 node drivers, registering over mutual TLS');
    stack = await startLocalStack(dir, mode, createLogger({ level: 'warn' }), {
      signal: stop.signal,
      notice: indented,
      progress: createProgress(indented),
    });
    let outcome: 'done' | 'interrupted' = 'interrupted';
    try {
      outcome = await demonstrate(stack, flags, stop);
    } finally {
      const reason = stop.signal.aborted ? ` (${String(await stop.requested)})` : '';
      say(`\nStopping the node drivers and the controller${reason}`);
      await stack.stop();
      say('stopped; mounts, loop devices, sockets and the lock of the state directory released.');
    }
    if (outcome === 'done' && !flags.keep) say(tornDownHint(flags, dir));
    return outcome === 'done' || !stop.signal.aborted ? 0 : stop.exitCode();
  } catch (e) {
    if (e instanceof StackLockedError) throw e;
    if (stop.signal.aborted && stack === undefined) {
      say(`stopped during start-up (${String(await stop.requested)}); the processes started so far were stopped`);
      return stop.exitCode();
    }
    throw e;
  } finally {
    stop.dispose();
  }
}
