// The shape of validation results and the one message format: "<path>: unsupported value <v>;
// allowed values: <what is allowed>", so that every message names the field and what would be
// accepted. Values are shown shortened, and never for fields that may hold secrets.

export interface ValidationProblem {
  /** Dotted path of the field, e.g. `spec.deviceMode` or `spec.labels["app"]`. */
  readonly path: string;
  /** Full sentence naming the field and the allowed values or range. */
  readonly message: string;
}

const MAX_SHOWN = 64;

/** A problem with a value the user may see again (never use it for keys or certificates). */
export function badValue(path: string, value: unknown, allowed: string): ValidationProblem {
  return { path, message: `${path}: unsupported value ${describe(value)}; allowed values: ${allowed}` };
}

/** A problem with a value that must not be echoed (private keys, certificates). */
export function badSecretValue(path: string, allowed: string): ValidationProblem {
  return { path, message: `${path}: invalid value (not shown); allowed values: ${allowed}` };
}

/** A bad map key (the key is shown; map keys are never secret). */
export function badKey(path: string, key: string, allowed: string): ValidationProblem {
  return { path, message: `${path}: unsupported key ${describe(key)}; allowed keys: ${allowed}` };
}

export function unknownField(path: string, allowed: readonly string[]): ValidationProblem {
  return { path, message: `${path}: unknown field; allowed fields: ${allowed.join(', ')}` };
}

/** Path of one map entry: keys may contain '.' and '/', so they are quoted. */
export function entryPath(path: string, key: string): string {
  return `${path}[${JSON.stringify(key)}]`;
}

/** A short, unambiguous rendering of a value of any type. */
export function describe(value: unknown): string {
  if (value === undefined) return '(missing)';
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  const shown = text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 3)}...` : text;
  return typeof value === 'string' ? JSON.stringify(shown) : shown;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
