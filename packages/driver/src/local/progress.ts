// Progress lines for the local stack's long steps (issue 16): while a step waits, a line every few
// seconds says what it waits for, how long it has waited so far and its time limit, e.g.
// "waiting for node-b, node-c to register with the controller (4 s, up to 90 s)…". Before, the demo
// was silent for 17–30 s in its first step and up to 11 s in its last, and a person watching
// `npm start` could not tell a slow machine from a hung one, nor what would eventually time out.

/** Where a line goes (stdout in `npm start`). */
export type Say = (line: string) => void;

/** One wait. */
export interface Step {
  /** What the step waits for; a function when it changes while waiting (the nodes not yet registered). */
  readonly what: string | (() => string);
  /** The time limit named in the line ("up to 90 s"); omitted when the step has none of its own. */
  readonly limitMs?: number;
}

/** Runs `work`, printing a progress line every few seconds until it settles; resolves or rejects as `work` does. */
export type Progress = <T>(step: Step, work: Promise<T>) => Promise<T>;

/** How often a line is printed while a step waits. */
export const PROGRESS_EVERY_MS = 3000;

function seconds(ms: number): string {
  const s = ms / 1000;
  return s < 10 && !Number.isInteger(s) ? s.toFixed(1) : String(Math.round(s));
}

/** The line printed while a step waits. */
export function progressLine(what: string, elapsedMs: number, limitMs?: number): string {
  const limit = limitMs === undefined ? '' : `, up to ${seconds(limitMs)} s`;
  return `waiting for ${what} (${Math.floor(elapsedMs / 1000)} s${limit})…`;
}

/** A Progress that prints through `say` every `everyMs` (the first line after `everyMs`; quick steps print nothing). */
export function createProgress(say: Say, everyMs: number = PROGRESS_EVERY_MS): Progress {
  if (!Number.isFinite(everyMs) || everyMs <= 0)
    throw new RangeError(`progress interval: ${everyMs} ms; allowed: a positive number of milliseconds`);
  return async <T>(step: Step, work: Promise<T>): Promise<T> => {
    const started = Date.now();
    const timer = setInterval(() => {
      const what = typeof step.what === 'string' ? step.what : step.what();
      say(progressLine(what, Date.now() - started, step.limitMs));
    }, everyMs);
    try {
      return await work;
    } finally {
      clearInterval(timer);
    }
  };
}

/** A Progress that prints nothing (tests and library users of the stack). */
export const silentProgress: Progress = (_step, work) => work;
