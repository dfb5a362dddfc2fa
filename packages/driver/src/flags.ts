// Command-line flags of the pmem-csi-driver binary. One binary, two modes (the Go driver's
// layout): `--mode controller` (CSI controller + registry) and `--mode node` (CSI node service +
// node-controller service). Flags are parsed into a typed configuration; every bad flag gives an
// error that names the flag and what is allowed, and all problems are reported at once.
import { parseArgs } from 'node:util';
import { DEFAULT_DRIVER_NAME, METRICS_PORT, NODE_CONTROLLER_PORT, REGISTRY_PORT, VOLUME_DEVICE_MODES as DEVICE_MODES, isDnsSubdomain, type VolumeDeviceMode as DeviceMode } from '@pmem-csi/api';

export type LogFormat = 'text' | 'json';

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
  /** host:port of the node's HTTP endpoint with /healthz, /readyz, /status, /metrics ("" = off, the default). */
  metricsListen: string;
  mode: 'node';
  nodeId: string;
  deviceMode: DeviceMode;
  pmemPercentage: number;
  stateDir: string;
  /** host:port the node-controller service listens on (mutual TLS). */
  nodeControllerListen: string;
  /** host:port the controller dials to reach this node (registered in the registry). */
  advertisedEndpoint: string;
  /** host:port of the controller's registry. */
  registryEndpoint: string;
  /** Size of the emulated PMEM (emulated and fake modes), bytes. */
  emulatedSize: number;
}

export type DriverConfig = ControllerConfig | NodeConfig;

/** Thrown with every flag problem; the message lists them one per line. */
export class FlagError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'FlagError';
  }
}

const OPTIONS = {
  mode: { type: 'string' },
  drivername: { type: 'string', default: DEFAULT_DRIVER_NAME },
  endpoint: { type: 'string' },
  'ca-file': { type: 'string' },
  'cert-file': { type: 'string' },
  'key-file': { type: 'string' },
  'log-format': { type: 'string', default: 'text' },
  v: { type: 'string', default: '3' },
  'registry-listen': { type: 'string', default: `0.0.0.0:${REGISTRY_PORT}` },
  'lease-seconds': { type: 'string', default: '30' },
  'metrics-listen': { type: 'string' },
  nodeid: { type: 'string' },
  'device-mode': { type: 'string', default: 'lvm' },
  'pmem-percentage': { type: 'string', default: '100' },
  'state-dir': { type: 'string' },
  'node-controller-listen': { type: 'string', default: `0.0.0.0:${NODE_CONTROLLER_PORT}` },
  'advertised-endpoint': { type: 'string' },
  'registry-endpoint': { type: 'string' },
  'emulated-size': { type: 'string', default: String(4 * 1024 ** 3) },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

/** Usage text for --help. */
export const USAGE = `usage: pmem-csi-driver --mode controller|node [flags]
common:     --drivername NAME (default ${DEFAULT_DRIVER_NAME}) --endpoint unix:///path/csi.sock
            --ca-file F --cert-file F --key-file F (mutual TLS) --log-format text|json --v 0..10
controller: --registry-listen HOST:PORT (default 0.0.0.0:${REGISTRY_PORT}) --lease-seconds N (default 30)
            --metrics-listen HOST:PORT (default 0.0.0.0:${METRICS_PORT}; "" = off): /healthz /readyz /status /metrics
node:       --metrics-listen HOST:PORT (default off): /healthz /readyz /status /metrics of this node
            --nodeid NAME --device-mode lvm|direct|emulated|fake --pmem-percentage 0..100 (0 = 100)
            --state-dir DIR (default /var/lib/<drivername>) --node-controller-listen HOST:PORT
            --advertised-endpoint HOST:PORT --registry-endpoint HOST:PORT --emulated-size BYTES (emulated and fake modes)`;

function intFlag(problems: string[], name: string, raw: string, range: [number, number]): number {
  const n = /^-?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < range[0] || n > range[1]) {
    problems.push(`--${name}: "${raw}" is not an integer in ${range[0]}..${range[1]}`);
  }
  return n;
}

function required(problems: string[], name: string, v: string | undefined): string {
  if (v === undefined || v === '') problems.push(`--${name} is required`);
  return v ?? '';
}

/**
 * Validate HOST:PORT. An unbracketed IPv6 host (as `$(POD_IP):10001` expands to on IPv6 clusters)
 * is bracketed, so gRPC can parse it.
 */
function hostPort(problems: string[], name: string, v: string): string {
  const unbracketed = /^([0-9a-fA-F]*:[0-9a-fA-F:.]*):(\d{1,5})$/.exec(v);
  const value = unbracketed ? `[${unbracketed[1]}]:${unbracketed[2]}` : v;
  if (value !== '' && !/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$/.test(value)) problems.push(`--${name}: "${v}" must be HOST:PORT`);
  return value;
}

function common(problems: string[], v: Values): CommonConfig {
  const logFormat = v['log-format'];
  if (logFormat !== 'text' && logFormat !== 'json') problems.push(`--log-format: "${logFormat}" is not allowed; allowed values: text, json`);
  if (!isDnsSubdomain(v.drivername)) problems.push(`--drivername: "${v.drivername}" must be a DNS subdomain (lower-case letters, digits, '-', '.')`);
  return {
    driverName: v.drivername,
    csiEndpoint: required(problems, 'endpoint', v.endpoint),
    caFile: required(problems, 'ca-file', v['ca-file']),
    certFile: required(problems, 'cert-file', v['cert-file']),
    keyFile: required(problems, 'key-file', v['key-file']),
    logFormat: logFormat === 'json' ? 'json' : 'text',
    verbosity: intFlag(problems, 'v', v.v, [0, 10]),
  };
}

function nodeConfig(problems: string[], v: Values, base: CommonConfig): NodeConfig {
  const deviceMode = v['device-mode'] as DeviceMode;
  if (!DEVICE_MODES.includes(deviceMode)) problems.push(`--device-mode: "${v['device-mode']}" is not allowed; allowed values: ${DEVICE_MODES.join(', ')}`);
  const pct = intFlag(problems, 'pmem-percentage', v['pmem-percentage'], [0, 100]);
  return {
    ...base,
    mode: 'node',
    nodeId: required(problems, 'nodeid', v.nodeid),
    deviceMode,
    pmemPercentage: pct === 0 ? 100 : pct,
    stateDir: v['state-dir'] ?? `/var/lib/${base.driverName}`,
    nodeControllerListen: hostPort(problems, 'node-controller-listen', v['node-controller-listen']),
    advertisedEndpoint: hostPort(problems, 'advertised-endpoint', required(problems, 'advertised-endpoint', v['advertised-endpoint'])),
    registryEndpoint: hostPort(problems, 'registry-endpoint', required(problems, 'registry-endpoint', v['registry-endpoint'])),
    emulatedSize: intFlag(problems, 'emulated-size', v['emulated-size'], [64 * 1024 ** 2, Number.MAX_SAFE_INTEGER]),
    // Off by default: several node processes share one host in tests and the local stack.
    metricsListen: hostPort(problems, 'metrics-listen', v['metrics-listen'] ?? ''),
  };
}

/** Parse argv (without node and script) into a configuration, or throw FlagError. */
export function parseFlags(argv: readonly string[]): DriverConfig {
  let values: Values;
  try {
    values = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (e) {
    throw new FlagError([(e as Error).message]);
  }
  const problems: string[] = [];
  const base = common(problems, values);
  let config: DriverConfig | undefined;
  if (values.mode === 'controller') {
    config = {
      ...base,
      mode: 'controller',
      registryListen: hostPort(problems, 'registry-listen', values['registry-listen']),
      leaseSeconds: intFlag(problems, 'lease-seconds', values['lease-seconds'], [3, 3600]),
      metricsListen: hostPort(problems, 'metrics-listen', values['metrics-listen'] ?? `0.0.0.0:${METRICS_PORT}`),
    };
  } else if (values.mode === 'node') {
    config = nodeConfig(problems, values, base);
  } else {
    problems.unshift(values.mode === undefined ? '--mode is required; allowed values: controller, node' : `--mode: "${values.mode}" is not allowed; allowed values: controller, node`);
  }
  if (problems.length > 0 || config === undefined) throw new FlagError(problems);
  return config;
}
