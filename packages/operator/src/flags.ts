// Command-line flags of the operator binary, parsed into a typed configuration. Every problem is
// reported at once, naming the flag and what is allowed.
import { parseArgs } from 'node:util';
import { isImageReference } from '@pmem-csi/api';
import type { LogFormat, LogLevel } from '@pmem-csi/runtime';
import { OPERATOR_VERSION } from './version.js';

export interface OperatorConfig {
  /** Where namespaced driver objects go (and the leader-election Lease). */
  readonly namespace: string;
  readonly leaderElect: boolean;
  /** host:port of /metrics, /healthz and /readyz; '' disables the server. */
  readonly metricsAddress: string;
  readonly logFormat: LogFormat;
  readonly logLevel: LogLevel;
  /** Default driver image: the operator's own. */
  readonly driverImage: string;
  readonly kubeconfig?: string;
  readonly version: string;
}

export class OperatorFlagError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'OperatorFlagError';
  }
}

export const DEFAULT_NAMESPACE = 'pmem-csi';
export const DEFAULT_METRICS_ADDRESS = '127.0.0.1:8080';

export const OPERATOR_USAGE = `usage: pmem-csi-operator [flags]
  --namespace NS            namespace of the driver objects (default: $POD_NAMESPACE or ${DEFAULT_NAMESPACE})
  --leader-elect            elect a leader among operator replicas with a Lease
  --metrics-address H:P     /metrics, /healthz, /readyz (default ${DEFAULT_METRICS_ADDRESS}; '' = off)
  --log-format text|json    (default text)
  --log-level debug|info|warn|error (default info)
  --driver-image IMAGE      default driver image (default: $PMEM_CSI_OPERATOR_IMAGE)
  --kubeconfig FILE         (default: in-cluster, then $KUBECONFIG / ~/.kube/config)
  --version VERSION         operator version recorded on objects (default ${OPERATOR_VERSION})`;

const OPTIONS = {
  namespace: { type: 'string' },
  'leader-elect': { type: 'boolean', default: false },
  'metrics-address': { type: 'string', default: DEFAULT_METRICS_ADDRESS },
  'log-format': { type: 'string', default: 'text' },
  'log-level': { type: 'string', default: 'info' },
  'driver-image': { type: 'string' },
  kubeconfig: { type: 'string' },
  version: { type: 'string', default: OPERATOR_VERSION },
  help: { type: 'boolean', default: false },
} as const;

const LOG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'];
const HOST_PORT = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]*):\d{1,5}$/;

/** Parse argv (without node and script); `env` supplies POD_NAMESPACE and PMEM_CSI_OPERATOR_IMAGE. */
export function parseOperatorFlags(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): OperatorConfig | 'help' {
  let values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];
  try {
    values = parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (e) {
    throw new OperatorFlagError([(e as Error).message]);
  }
  if (values.help) return 'help';
  const driverImage = values['driver-image'] ?? env['PMEM_CSI_OPERATOR_IMAGE'] ?? '';
  const problems = [...loggingProblems(values['log-format'], values['log-level']), ...addressProblems(values['metrics-address']), ...imageProblems(driverImage)];
  if (problems.length > 0) throw new OperatorFlagError(problems);
  const { 'log-format': logFormat, 'log-level': logLevel, 'metrics-address': metricsAddress } = values;
  const namespace = values.namespace ?? env['POD_NAMESPACE'] ?? DEFAULT_NAMESPACE;
  return {
    namespace,
    leaderElect: values['leader-elect'],
    metricsAddress,
    logFormat: logFormat as LogFormat,
    logLevel: logLevel as LogLevel,
    driverImage,
    ...(values.kubeconfig === undefined ? {} : { kubeconfig: values.kubeconfig }),
    version: values.version,
  };
}

function loggingProblems(logFormat: string, logLevel: string): string[] {
  const problems: string[] = [];
  if (logFormat !== 'text' && logFormat !== 'json') problems.push(`--log-format: "${logFormat}" is not allowed; allowed values: text, json`);
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`--log-level: "${logLevel}" is not allowed; allowed values: ${LOG_LEVELS.join(', ')}`);
  return problems;
}

function addressProblems(address: string): string[] {
  return address === '' || HOST_PORT.test(address) ? [] : [`--metrics-address: "${address}" must be HOST:PORT, :PORT or empty`];
}

function imageProblems(image: string): string[] {
  if (image === '') return ['--driver-image (or $PMEM_CSI_OPERATOR_IMAGE) is required: it is the default driver image'];
  return isImageReference(image) ? [] : [`--driver-image: "${image}" is not an image reference`];
}
