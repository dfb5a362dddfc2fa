// The one schema of pmem-csi-driver's command line. The driver's parser is generated from it
// (packages/driver/src/cli.ts builds the commander program from DRIVER_FLAGS and hands the values
// to parseDriverFlags), and the operator's builders render the controller Deployment's and the node
// DaemonSet's arguments with renderDriverArgs and read them back with driverArgValue, so the
// binary and the objects that start it cannot disagree. One binary, two modes (the Go driver's
// layout): `--mode controller` (CSI controller + registry), `--mode node` (CSI node service +
// node-controller service). Every bad flag gives a problem naming the flag and what is allowed;
// all problems are reported at once.
import {
  DEFAULT_DRIVER_NAME,
  LOG_FORMATS,
  METRICS_PORT,
  NODE_CONTROLLER_PORT,
  REGISTRY_PORT,
  VOLUME_DEVICE_MODES,
  isDnsSubdomain,
  type VolumeDeviceMode,
} from '@pmem-csi/api';
import { GiB, MiB } from './bytes.js';

export const DRIVER_MODES = ['controller', 'node'] as const;
export type DriverMode = (typeof DRIVER_MODES)[number];
/** Log formats of every binary (the list is the CRD's spec.logFormat, @pmem-csi/api). */
export type LogFormat = (typeof LOG_FORMATS)[number];

interface CommonConfig {
  driverName: string;
  /** CSI endpoint (unix socket) for external-provisioner (controller) or kubelet (node). */
  csiEndpoint: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  logFormat: LogFormat;
  verbosity: number;
}

export interface ControllerConfig extends CommonConfig {
  mode: 'controller';
  /** host:port the registry listens on (mutual TLS). */
  registryListen: string;
  leaseSeconds: number;
  /** host:port of the HTTP endpoint with /healthz, /readyz, /status, /metrics ("" = off). */
  metricsListen: string;
}

export interface NodeConfig extends CommonConfig {
  mode: 'node';
  /** host:port of the node's HTTP endpoint with /healthz, /readyz, /status, /metrics ("" = off, the default). */
  metricsListen: string;
  nodeId: string;
  deviceMode: VolumeDeviceMode;
  pmemPercentage: number;
  stateDir: string;
  /** host:port the node-controller service listens on (mutual TLS). */
  nodeControllerListen: string;
  /** host:port the controller dials to reach this node (registered in the registry). */
  advertisedEndpoint: string;
  /**
   * host:port of the controller's registry, or several, comma-separated (normalized: IPv6 hosts
   * bracketed). The node registers with every address each host resolves to (every controller
   * replica behind a headless Service); splitHostPortList gives the entries.
   */
  registryEndpoint: string;
  /** Size of the emulated PMEM (emulated and fake modes), bytes. */
  emulatedSize: number;
}

export type DriverConfig = ControllerConfig | NodeConfig;
type ConfigKey = Exclude<keyof ControllerConfig | keyof NodeConfig, 'mode'>;

/** What a flag's value must be; the parsed value is a string unless the kind says number. */
export type FlagKind =
  | { readonly type: 'string' }
  | { readonly type: 'dnsSubdomain' }
  | { readonly type: 'hostPort' }
  /** One HOST:PORT or several, comma-separated; the value stays a string (normalized). */
  | { readonly type: 'hostPortList' }
  | { readonly type: 'int'; readonly min: number; readonly max: number }
  | { readonly type: 'enum'; readonly values: readonly string[] };

export interface DriverFlag {
  /** The flag without dashes: --<name>=<value>. */
  readonly name: string;
  /** The configuration field it sets ('mode' for --mode). */
  readonly key: ConfigKey | 'mode';
  readonly modes: readonly DriverMode[];
  readonly kind: FlagKind;
  /** Placeholder in --help. */
  readonly valueName: string;
  readonly description: string;
  readonly required?: boolean;
  /** The value when the flag is absent (per mode), computed from the other raw values when needed. */
  readonly defaultValue?: string | ((mode: DriverMode, raw: RawFlags) => string);
  /** Spellings of other drivers and operators, accepted when reading arguments back (the Go operator's -deviceMode). */
  readonly legacyNames?: readonly string[];
}

/** Raw flag values by flag name, as the command line gave them. */
export type RawFlags = Readonly<Record<string, string | undefined>>;

const BOTH = DRIVER_MODES;
const CONTROLLER = ['controller'] as const;
const NODE = ['node'] as const;
const HOST_PORT = { type: 'hostPort' } as const;
const TEXT = { type: 'string' } as const;

/** Every flag, in the order the operator renders them. */
export const DRIVER_FLAGS: readonly DriverFlag[] = [
  {
    name: 'mode',
    key: 'mode',
    modes: BOTH,
    kind: { type: 'enum', values: DRIVER_MODES },
    valueName: 'MODE',
    description: 'controller (CSI controller + registry) or node (CSI node service + node-controller)',
    required: true,
  },
  {
    name: 'drivername',
    key: 'driverName',
    modes: BOTH,
    kind: { type: 'dnsSubdomain' },
    valueName: 'NAME',
    description: 'CSI driver name',
    defaultValue: DEFAULT_DRIVER_NAME,
  },
  {
    name: 'endpoint',
    key: 'csiEndpoint',
    modes: BOTH,
    kind: TEXT,
    valueName: 'ENDPOINT',
    description: 'CSI socket, unix:///path/csi.sock',
    required: true,
  },
  {
    name: 'ca-file',
    key: 'caFile',
    modes: BOTH,
    kind: TEXT,
    valueName: 'FILE',
    description: 'CA certificate (mutual TLS)',
    required: true,
  },
  {
    name: 'cert-file',
    key: 'certFile',
    modes: BOTH,
    kind: TEXT,
    valueName: 'FILE',
    description: "this component's certificate (mutual TLS)",
    required: true,
  },
  {
    name: 'key-file',
    key: 'keyFile',
    modes: BOTH,
    kind: TEXT,
    valueName: 'FILE',
    description: "this component's private key (mutual TLS)",
    required: true,
  },
  {
    name: 'log-format',
    key: 'logFormat',
    modes: BOTH,
    kind: { type: 'enum', values: LOG_FORMATS },
    valueName: 'FORMAT',
    description: 'text or json',
    defaultValue: 'text',
  },
  {
    name: 'v',
    key: 'verbosity',
    modes: BOTH,
    kind: { type: 'int', min: 0, max: 10 },
    valueName: 'LEVEL',
    description: 'log verbosity 0..10',
    defaultValue: '3',
  },
  {
    name: 'registry-listen',
    key: 'registryListen',
    modes: CONTROLLER,
    kind: HOST_PORT,
    valueName: 'HOST:PORT',
    description: 'registry address (mutual TLS)',
    defaultValue: `0.0.0.0:${REGISTRY_PORT}`,
  },
  {
    name: 'lease-seconds',
    key: 'leaseSeconds',
    modes: CONTROLLER,
    kind: { type: 'int', min: 3, max: 3600 },
    valueName: 'N',
    description: 'registration lease of the nodes',
    defaultValue: '30',
  },
  {
    name: 'nodeid',
    key: 'nodeId',
    modes: NODE,
    kind: TEXT,
    valueName: 'NAME',
    description: "this node's name",
    required: true,
  },
  {
    name: 'device-mode',
    key: 'deviceMode',
    modes: NODE,
    kind: { type: 'enum', values: VOLUME_DEVICE_MODES },
    valueName: 'MODE',
    description: VOLUME_DEVICE_MODES.join(', '),
    defaultValue: 'lvm',
    legacyNames: ['deviceMode'],
  },
  {
    name: 'pmem-percentage',
    key: 'pmemPercentage',
    modes: NODE,
    kind: { type: 'int', min: 0, max: 100 },
    valueName: 'PERCENT',
    description: 'share of PMEM to use, 0..100 (0 = 100)',
    defaultValue: '100',
  },
  {
    name: 'emulated-size',
    key: 'emulatedSize',
    modes: NODE,
    kind: { type: 'int', min: 64 * MiB, max: Number.MAX_SAFE_INTEGER },
    valueName: 'BYTES',
    description: 'emulated PMEM pool (emulated and fake modes)',
    defaultValue: String(4 * GiB),
  },
  {
    name: 'state-dir',
    key: 'stateDir',
    modes: NODE,
    kind: TEXT,
    valueName: 'DIR',
    description: 'node state (default /var/lib/<drivername>)',
    defaultValue: (_mode, raw) => `/var/lib/${raw['drivername'] ?? DEFAULT_DRIVER_NAME}`,
  },
  {
    name: 'node-controller-listen',
    key: 'nodeControllerListen',
    modes: NODE,
    kind: HOST_PORT,
    valueName: 'HOST:PORT',
    description: 'node-controller address (mutual TLS)',
    defaultValue: `0.0.0.0:${NODE_CONTROLLER_PORT}`,
  },
  {
    name: 'advertised-endpoint',
    key: 'advertisedEndpoint',
    modes: NODE,
    kind: HOST_PORT,
    valueName: 'HOST:PORT',
    description: 'where the controller reaches this node',
    required: true,
  },
  {
    name: 'registry-endpoint',
    key: 'registryEndpoint',
    modes: NODE,
    kind: { type: 'hostPortList' },
    valueName: 'HOST:PORT[,HOST:PORT...]',
    description:
      "the controller's registry: each host is resolved to all its addresses (a headless Service: every controller replica), and the node registers with each",
    required: true,
  },
  {
    name: 'metrics-listen',
    key: 'metricsListen',
    modes: BOTH,
    kind: HOST_PORT,
    valueName: 'HOST:PORT',
    description: `/healthz /readyz /status /metrics ("" = off; default 0.0.0.0:${METRICS_PORT} for the controller, off for a node)`,
    defaultValue: (mode) => (mode === 'controller' ? `0.0.0.0:${METRICS_PORT}` : ''),
  },
];

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

/** The arguments an installer passes: the mode and any subset of its configuration (values may hold $(VAR) references). */
export type DriverArgs =
  | ({ readonly mode: 'controller' } & {
      readonly [K in Exclude<keyof ControllerConfig, 'mode'>]?: ControllerConfig[K];
    })
  | ({ readonly mode: 'node' } & { readonly [K in Exclude<keyof NodeConfig, 'mode'>]?: NodeConfig[K] | string });

/** Render `args` as --flag=value arguments, in DRIVER_FLAGS order (mode first). */
export function renderDriverArgs(args: DriverArgs): string[] {
  const values: Readonly<Record<string, string | number | undefined>> = args;
  const out: string[] = [];
  for (const flag of DRIVER_FLAGS) {
    if (!flag.modes.includes(args.mode)) continue;
    const value = values[flag.key];
    if (value !== undefined) out.push(`--${flag.name}=${value}`);
  }
  return out;
}

/** The value of flag `name` in rendered arguments (also its legacy spellings, with one or two dashes), if present. */
export function driverArgValue(args: readonly string[], name: string): string | undefined {
  const flag = DRIVER_FLAGS.find((f) => f.name === name);
  if (flag === undefined)
    throw new RangeError(
      `pmem-csi-driver has no flag --${name}; flags: ${DRIVER_FLAGS.map((f) => `--${f.name}`).join(', ')}`,
    );
  const names = [flag.name, ...(flag.legacyNames ?? [])];
  for (const [i, arg] of args.entries()) {
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(arg);
    if (m === null || !names.includes(m[1] ?? '')) continue;
    return m[2] ?? args[i + 1];
  }
  return undefined;
}

/** Every flag found in rendered arguments, by flag name (the input of parseDriverFlags). */
export function readDriverArgs(args: readonly string[]): RawFlags {
  const raw: Record<string, string> = {};
  for (const flag of DRIVER_FLAGS) {
    const value = driverArgValue(args, flag.name);
    if (value !== undefined) raw[flag.name] = value;
  }
  return raw;
}
