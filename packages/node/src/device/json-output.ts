// Reading the JSON a host tool printed (ndctl list, cxl list): typed field readers that fail with an
// InternalError naming the command, the path of the value in its output and what was expected, so
// that an unexpected tool version explains itself instead of yielding undefined somewhere later.
import { InternalError } from '@pmem-csi/csi';

export type Json = Record<string, unknown>;

/** Where in which command's output a value sits, for error messages. */
export interface At {
  readonly source: string;
  readonly path: string;
}

/** A value for a message, at most 60 characters. */
export function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export function fail(at: At, problem: string): never {
  throw new InternalError(`${at.source}: unexpected output at ${at.path || '<top>'}: ${problem}`);
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function child(at: At, key: string | number): At {
  return { source: at.source, path: typeof key === 'number' ? `${at.path}[${key}]` : `${at.path}.${key}` };
}

export function optString(o: Json, key: string, at: At): string | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') fail(child(at, key), `expected a string, got ${describe(v)}`);
  return v;
}

export function reqString(o: Json, key: string, at: At): string {
  const v = optString(o, key, at);
  if (v === undefined) fail(child(at, key), 'missing (expected a string)');
  return v;
}

/** What a count is called in errors: when malformed, and when missing. */
export interface CountNames {
  readonly expected: string;
  readonly missing: string;
}

const COUNT: CountNames = { expected: 'a non-negative integer', missing: 'a non-negative integer' };

/** A non-negative safe integer, or undefined when absent. */
export function optCount(o: Json, key: string, at: At, names: CountNames = COUNT): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    fail(child(at, key), `expected ${names.expected}, got ${describe(v)}`);
  return v;
}

/** A non-negative safe integer that must be there. */
export function reqCount(o: Json, key: string, at: At, names: CountNames = COUNT): number {
  const v = optCount(o, key, at, names);
  if (v === undefined) fail(child(at, key), `missing (expected ${names.missing})`);
  return v;
}
