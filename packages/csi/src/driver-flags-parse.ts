// Parsing pmem-csi-driver's flags (the schema: driver-flags.ts): raw values by flag name into a
// ControllerConfig or NodeConfig, every problem collected and thrown at once as a FlagError naming
// the flag and what is allowed; HOST:PORT values normalized (IPv6 hosts bracketed).
import { isDnsSubdomain } from '@pmem-csi/api';
import {
  DRIVER_FLAGS,
  DRIVER_MODES,
  type DriverConfig,
  type DriverFlag,
  type DriverMode,
  type RawFlags,
} from './driver-flags.js';

/** Thrown with every flag problem; the message lists them one per line. */
export class FlagError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'FlagError';
  }
}

/**
 * HOST:PORT normalized, or undefined when it is not one. An unbracketed IPv6 host (as
 * `$(POD_IP):10001` expands to on IPv6 clusters) is bracketed, so gRPC can parse it.
 */
function normalizeHostPort(v: string): string | undefined {
  const unbracketed = /^([0-9a-fA-F]*:[0-9a-fA-F:.]*):(\d{1,5})$/.exec(v);
  const value = unbracketed ? `[${unbracketed[1]}]:${unbracketed[2]}` : v;
  return /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$/.test(value) ? value : undefined;
}

/** Validate HOST:PORT (normalizeHostPort). "" is allowed (off) where the flag is optional. */
function hostPort(flag: string, v: string, problems: string[]): string {
  if (v === '') return v;
  const value = normalizeHostPort(v);
  if (value === undefined) problems.push(`--${flag}: "${v}" must be HOST:PORT`);
  return value ?? v;
}

/** The allowed form of a hostPortList flag, for messages. */
export const HOST_PORT_LIST_FORM = 'HOST:PORT or a comma-separated list HOST:PORT,HOST:PORT,...';

/** The entries of a normalized hostPortList value ("" = none). */
export function splitHostPortList(value: string): string[] {
  return value === '' ? [] : value.split(',');
}

/** Host and port of a validated HOST:PORT; an IPv6 host comes without its brackets. */
export function parseHostPort(value: string): { readonly host: string; readonly port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9_.-]+)):(\d{1,5})$/.exec(value);
  const port = m === null ? Number.NaN : Number(m[3]);
  if (m === null || port < 1 || port > 65535)
    throw new RangeError(`"${value}" must be HOST:PORT with a port from 1 to 65535 ([IPv6]:PORT for IPv6 hosts)`);
  return { host: m[1] ?? m[2] ?? '', port };
}

/** Validate and normalize HOST:PORT[,HOST:PORT...]: no empty entry, no entry twice, each one HOST:PORT. */
function hostPortList(flag: string, v: string, problems: string[]): string {
  const entries = v.split(',').map((e) => e.trim());
  if (entries.some((e) => e === '')) {
    problems.push(`--${flag}: "${v}" has an empty entry; allowed: ${HOST_PORT_LIST_FORM}`);
    return v;
  }
  const normalized = entries.map(normalizeHostPort);
  const bad = entries.filter((_e, i) => normalized[i] === undefined);
  if (bad.length > 0) {
    problems.push(
      entries.length === 1
        ? `--${flag}: "${v}" must be ${HOST_PORT_LIST_FORM}`
        : `--${flag}: ${bad.map((b) => `"${b}"`).join(', ')} in "${v}" must be HOST:PORT; allowed: ${HOST_PORT_LIST_FORM}`,
    );
    return v;
  }
  const twice = normalized.find((e, i) => normalized.indexOf(e) !== i);
  if (twice !== undefined)
    problems.push(`--${flag}: "${twice}" is listed twice in "${v}"; allowed: ${HOST_PORT_LIST_FORM}`);
  return normalized.join(',');
}

function integer(flag: string, raw: string, range: { min: number; max: number }, problems: string[]): number {
  const n = /^-?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < range.min || n > range.max)
    problems.push(`--${flag}: "${raw}" is not an integer in ${range.min}..${range.max}`);
  return n;
}

function convert(flag: DriverFlag, raw: string, problems: string[]): string | number {
  const k = flag.kind;
  switch (k.type) {
    case 'int':
      return integer(flag.name, raw, k, problems);
    case 'enum':
      if (!k.values.includes(raw))
        problems.push(`--${flag.name}: "${raw}" is not allowed; allowed values: ${k.values.join(', ')}`);
      return raw;
    case 'dnsSubdomain':
      if (!isDnsSubdomain(raw))
        problems.push(`--${flag.name}: "${raw}" must be a DNS subdomain (lower-case letters, digits, '-', '.')`);
      return raw;
    case 'hostPort':
      return hostPort(flag.name, raw, problems);
    case 'hostPortList':
      return hostPortList(flag.name, raw, problems);
    case 'string':
      return raw;
  }
}

function valueOf(flag: DriverFlag, mode: DriverMode, raw: RawFlags, problems: string[]): string | number | undefined {
  const given = raw[flag.name];
  if (flag.required === true && (given === undefined || given === '')) {
    problems.push(`--${flag.name} is required`);
    return undefined;
  }
  const text = given ?? (typeof flag.defaultValue === 'function' ? flag.defaultValue(mode, raw) : flag.defaultValue);
  return text === undefined ? undefined : convert(flag, text, problems);
}

function modeOf(raw: RawFlags, problems: string[]): DriverMode | undefined {
  const mode = raw['mode'];
  if (mode === 'controller' || mode === 'node') return mode;
  const allowed = `allowed values: ${DRIVER_MODES.join(', ')}`;
  problems.push(mode === undefined ? `--mode is required; ${allowed}` : `--mode: "${mode}" is not allowed; ${allowed}`);
  return undefined;
}

/** Parse raw values (by flag name) into a configuration, or throw FlagError listing every problem. */
export function parseDriverFlags(raw: RawFlags): DriverConfig {
  const problems: string[] = [];
  const mode = modeOf(raw, problems);
  const config: Record<string, string | number> = {};
  for (const flag of DRIVER_FLAGS) {
    // Without a known mode, only the flags of both modes are checked.
    const applies = mode === undefined ? flag.modes.length === DRIVER_MODES.length : flag.modes.includes(mode);
    if (flag.key === 'mode' || !applies) continue;
    const value = valueOf(flag, mode ?? 'controller', raw, problems);
    if (value !== undefined) config[flag.key] = value;
  }
  if (problems.length > 0 || mode === undefined) throw new FlagError(problems);
  // pmem-percentage 0 means all of it (the Go driver's convention).
  if (config['pmemPercentage'] === 0) config['pmemPercentage'] = 100;
  // Every field of the mode's configuration was set above from its flag (DRIVER_FLAGS covers them:
  // driver-flags.test.ts), with the type its kind gives.
  return { ...config, mode } as unknown as DriverConfig;
}
