// A logger for unit tests that keeps every line as parsed JSON fields, so that a test can assert
// what was logged (message, level, fields) without parsing text.
import { createLogger, type LogFields, type Logger, type LogLevel } from '../logger.js';

export interface CapturedLog {
  readonly log: Logger;
  /** Every line logged so far, parsed (`msg`, `level`, `time` and the fields). */
  readonly lines: LogFields[];
}

/** A JSON logger at `level` (default debug) whose lines land in `lines`. */
export function captureLog(level: LogLevel = 'debug'): CapturedLog {
  const lines: LogFields[] = [];
  const log = createLogger({ level, format: 'json', sink: (line) => lines.push(JSON.parse(line) as LogFields) });
  return { log, lines };
}
