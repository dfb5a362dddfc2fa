// The one schema of pmem-csi-driver's command line. The driver's parser is generated from it
// (packages/driver/src/cli.ts builds the commander program from DRIVER_FLAGS and hands the values
// to parseDriverFlags), and the operator's builders render the controller Deployment's and the node
// DaemonSet's arguments with renderDriverArgs and read them back with driverArgValue, so the
// binary and the objects that start it cannot disagree. One binary, two modes (the Go driver's
// layout): `--mode controller` (CSI controller + registry), `--mode node` (CSI node service +
// node-controller service). Every bad flag gives a problem naming the flag and what is allowed;
// all problems are reported at once. This file is the schema; driver-flags-parse.ts turns raw
// values into a configuration and driver-args.ts renders and reads back argument lists.
import {
  DEFAULT_DRIVER_NAME,
  LOG_FORMATS,
  METRICS_PORT,
  NODE_CONTROLLER_PORT,
  REGISTRY_PORT,
  CXL_REGION_POLICIES,
  VOLUME_DEVICE_MODES,
  type CxlRegionPolicy,
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
  /** lvm and direct mode: assemble pmem regions from CXL memory devices at start-up, or only report them. */
  cxlRegions: CxlRegionPolicy;
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
    name: 'cxl-regions',
    key: 'cxlRegions',
    modes: NODE,
    kind: { type: 'enum', values: CXL_REGION_POLICIES },
    valueName: 'POLICY',
    description:
      'lvm and direct mode: "assemble" makes one pmem region per CXL memory device whose persistent capacity no region maps (cxl create-region), "manual" only reports such capacity',
    defaultValue: 'manual',
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
