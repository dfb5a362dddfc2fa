// Command-line flags of the operator binary (commander), parsed into a typed configuration. --help
// and --version answer without side effects; an unknown option is refused; every problem of the
// values is reported at once, naming the flag and what is allowed.
import { isImageReference } from '@pmem-csi/api';
import type { LogFormat } from '@pmem-csi/csi';
import type { LogLevel } from '@pmem-csi/runtime';
import { Command, CommanderError } from 'commander';
import { OPERATOR_VERSION } from '../version.js';

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

/** What the command line asks for: run with this configuration, or print `output` (--help, --version) and exit 0. */
export type OperatorCommand = OperatorConfig | { readonly output: string };

interface Values {
  namespace?: string;
  leaderElect: boolean;
  metricsAddress: string;
  logFormat: string;
  logLevel: string;
  driverImage?: string;
  kubeconfig?: string;
  operatorVersion: string;
}

/** The commander program of pmem-csi-operator (parses only; it never exits or prints by itself). */
function operatorProgram(write: (text: string) => void): Command {
  return new Command('pmem-csi-operator')
    .description('PMEM-CSI operator: deploys and upgrades PMEM-CSI drivers from PmemCSIDeployments')
    .version(`pmem-csi-operator ${OPERATOR_VERSION}`, '--version', 'print the version')
    .option('--namespace <NS>', `namespace of the driver objects (default: $POD_NAMESPACE or ${DEFAULT_NAMESPACE})`)
    .option('--leader-elect', 'elect a leader among operator replicas with a Lease', false)
    .option('--metrics-address <HOST:PORT>', "/metrics, /healthz, /readyz ('' = off)", DEFAULT_METRICS_ADDRESS)
    .option('--log-format <FORMAT>', 'text or json', 'text')
    .option('--log-level <LEVEL>', LOG_LEVELS.join(', '), 'info')
    .option('--driver-image <IMAGE>', 'default driver image (default: $PMEM_CSI_OPERATOR_IMAGE)')
    .option('--kubeconfig <FILE>', 'default: in-cluster, then $KUBECONFIG / ~/.kube/config')
    .option(
      '--operator-version <VERSION>',
      'operator version recorded on objects (tests run "version A" and "version B")',
      OPERATOR_VERSION,
    )
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ writeOut: write, writeErr: write, outputError: () => undefined });
}

/** The operator's --help text. */
export function operatorUsage(): string {
  return operatorProgram(() => undefined)
    .helpInformation()
    .trimEnd();
}

/** Parse argv (without node and script); `env` supplies POD_NAMESPACE and PMEM_CSI_OPERATOR_IMAGE. @throws OperatorFlagError */
export function parseOperatorFlags(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): OperatorCommand {
  let output = '';
  const program = operatorProgram((text) => void (output += text));
  try {
    program.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError && e.exitCode === 0) return { output: output.trimEnd() };
    throw new OperatorFlagError([e instanceof CommanderError ? e.message.replace(/^error: /, '') : String(e)]);
  }
  return configOf(program.opts<Values>(), env);
}

function configOf(values: Values, env: Readonly<Record<string, string | undefined>>): OperatorConfig {
  const driverImage = values.driverImage ?? env['PMEM_CSI_OPERATOR_IMAGE'] ?? '';
  const problems = [
    ...loggingProblems(values.logFormat, values.logLevel),
    ...addressProblems(values.metricsAddress),
    ...imageProblems(driverImage),
  ];
  if (problems.length > 0) throw new OperatorFlagError(problems);
  return {
    namespace: values.namespace ?? env['POD_NAMESPACE'] ?? DEFAULT_NAMESPACE,
    leaderElect: values.leaderElect,
    metricsAddress: values.metricsAddress,
    logFormat: values.logFormat as LogFormat,
    logLevel: values.logLevel as LogLevel,
    driverImage,
    ...(values.kubeconfig === undefined ? {} : { kubeconfig: values.kubeconfig }),
    version: values.operatorVersion,
  };
}

const LOG_LEVELS: readonly string[] = ['debug', 'info', 'warn', 'error'];
const HOST_PORT = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9_.-]*):\d{1,5}$/;

function loggingProblems(logFormat: string, logLevel: string): string[] {
  const problems: string[] = [];
  if (logFormat !== 'text' && logFormat !== 'json')
    problems.push(`--log-format: "${logFormat}" is not allowed; allowed values: text, json`);
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`--log-level: "${logLevel}" is not allowed; allowed values: ${LOG_LEVELS.join(', ')}`);
  return problems;
}

function addressProblems(address: string): string[] {
  return address === '' || HOST_PORT.test(address)
    ? []
    : [`--metrics-address: "${address}" must be HOST:PORT, :PORT or empty`];
}

function imageProblems(image: string): string[] {
  if (image === '') return ['--driver-image (or $PMEM_CSI_OPERATOR_IMAGE) is required: it is the default driver image'];
  return isImageReference(image) ? [] : [`--driver-image: "${image}" is not an image reference`];
}
