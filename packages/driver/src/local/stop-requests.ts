// When the local stack must stop: SIGINT (Ctrl-C), SIGTERM, SIGHUP (terminal closed), or its parent
// went away (`npm start` was killed or a wrapper shell died without passing the signal on; the
// process was then adopted by another parent). Listening from the very start means a signal during
// start-up or the demonstration stops the children too — before, only the --keep wait listened, and
// a signal at any other moment left the controller and node processes running.
import { constants } from 'node:os';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** Requests closer than this to the first count as the same one. */
const REPEAT_AFTER_MS = 1000;
type StopSignal = (typeof SIGNALS)[number];

export interface StopRequests {
  /** Aborted at the first request; its reason is the `reason` text. */
  readonly signal: AbortSignal;
  /** Resolves with the reason at the first request. */
  readonly requested: Promise<string>;
  /** Exit code for an interrupted run: 128 + signal number, 1 when the parent went away. */
  exitCode(): number;
  /** Called on a second request at least a second after the first (e.g. Ctrl-C again while stopping). */
  onRepeat(fn: (reason: string) => void): void;
  /** Stop listening. */
  dispose(): void;
}

/** Listen for stop requests now; `parentPollMs` is how often the parent is checked. */
export function watchStopRequests(parentPollMs = 500): StopRequests {
  const controller = new AbortController();
  let resolve: (reason: string) => void = () => undefined;
  const requested = new Promise<string>((r) => (resolve = r));
  let code = 0;
  const repeats: Array<(reason: string) => void> = [];
  let firstAt = 0;
  const request = (reason: string, exitCode: number): void => {
    if (controller.signal.aborted) {
      // Ctrl-C in a terminal reaches this process twice at once (from the terminal, and forwarded
      // by npm): only a request a moment later is a second one.
      if (Date.now() - firstAt >= REPEAT_AFTER_MS) for (const fn of repeats) fn(reason);
      return;
    }
    firstAt = Date.now();
    code = exitCode;
    controller.abort(new Error(`stopped: ${reason}`));
    resolve(reason);
  };
  const handlers = SIGNALS.map((s) => [s, (): void => request(s, 128 + constants.signals[s])] as const);
  for (const [s, h] of handlers) process.on(s as StopSignal, h);
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) request(`the parent process ${parent} exited`, 1);
  }, parentPollMs);
  timer.unref();
  return {
    signal: controller.signal,
    requested,
    exitCode: () => code,
    onRepeat: (fn) => void repeats.push(fn),
    dispose: () => {
      clearInterval(timer);
      for (const [s, h] of handlers) process.off(s, h);
    },
  };
}
