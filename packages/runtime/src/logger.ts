// Structured logging: one line per event, as JSON or as "key=value" text, with a level and a
// component. Secret material never reaches the output: fields whose names look like keys or
// secrets are redacted, and PEM private-key blocks inside any string are replaced.
import type { LogFormat } from '@pmem-csi/csi';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

const LEVEL_ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_FIELD = /(key|secret|password|passphrase|token)$/i;
const PEM_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g;

/** Where log lines go; tests pass an array-backed sink. */
export type LogSink = (line: string) => void;

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  sink?: LogSink;
  fields?: LogFields;
  now?: () => Date;
}

/** A structured logger; `child` adds fields to every line it writes. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  isEnabled(level: LogLevel): boolean;
}

/** Replace secret-looking values; render errors as their message (no stack). */
export function redact(key: string, value: unknown): unknown {
  if (SECRET_FIELD.test(key) && value !== undefined && value !== '') return '[REDACTED]';
  if (value instanceof Error) return withoutPemKeys(value.message);
  if (typeof value === 'string') return withoutPemKeys(value);
  return value;
}

/** The text with PEM private-key blocks replaced (the substring test spares the regex on every field). */
function withoutPemKeys(text: string): string {
  return text.includes('PRIVATE KEY-----') ? text.replace(PEM_KEY, '[REDACTED PRIVATE KEY]') : text;
}

function textValue(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s !== undefined && /[\s="]/.test(s) ? JSON.stringify(s) : String(s);
}

function render(format: LogFormat, record: LogFields): string {
  if (format === 'json') return JSON.stringify(record, (k, v: unknown) => (k === '' ? v : redact(k, v)));
  return Object.entries(record)
    .map(([k, v]) => `${k}=${textValue(redact(k, v))}`)
    .join(' ');
}

/** Create a logger; defaults: level info, text format, stderr. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const format = options.format ?? 'text';
  const sink = options.sink ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const now = options.now ?? (() => new Date());
  const base = options.fields ?? {};
  const write = (lvl: LogLevel, msg: string, fields?: LogFields): void => {
    if (LEVEL_ORDER[lvl] < LEVEL_ORDER[level]) return;
    sink(render(format, { time: now().toISOString(), level: lvl, msg, ...base, ...fields }));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger({ level, format, sink, now, fields: { ...base, ...fields } }),
    isEnabled: (l) => LEVEL_ORDER[l] >= LEVEL_ORDER[level],
  };
}

/** A logger that drops everything (default for library code under test). */
export const nullLogger: Logger = createLogger({ sink: () => undefined, level: 'error' });

/** Map a Kubernetes-style verbosity (0..10) to a level: >= 5 debug, else info. */
export function levelFromVerbosity(v: number): LogLevel {
  return v >= 5 ? 'debug' : 'info';
}
