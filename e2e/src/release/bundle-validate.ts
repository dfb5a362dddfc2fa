// The OLM bundle checked by the operator framework's validators (pmem-csi-bundle-validate,
// e2e/release/go): the default set that `operator-sdk bundle validate` runs and its optional
// operatorframework suite, plus the bundle format of metadata/annotations.yaml.
import { runTool, ToolError } from '../cluster/processes.js';

export interface BundleFinding {
  readonly validator: string;
  readonly level: 'error' | 'warning';
  readonly manifest?: string;
  readonly type?: string;
  readonly field?: string;
  readonly detail: string;
}

export interface BundleReport {
  readonly bundle: string;
  readonly package: string;
  readonly csv: string;
  readonly validators: readonly string[];
  readonly errors: number;
  readonly warnings: number;
  readonly findings: readonly BundleFinding[];
}

/** Run the validators on `dir`; resolves with the report whether or not it found errors. */
export async function validateBundle(validator: string, dir: string, k8sVersion: string): Promise<BundleReport> {
  const args = ['--json', '--optional', 'operatorframework', '--k8s-version', k8sVersion, dir];
  let stdout: string;
  try {
    stdout = (await runTool(validator, args, { timeoutMs: 120_000, okCodes: [0, 1] })).stdout;
  } catch (e) {
    throw new Error(`pmem-csi-bundle-validate ${dir} failed to run: ${e instanceof ToolError ? e.message : String(e)}`);
  }
  const report = JSON.parse(stdout) as BundleReport;
  if (typeof report.errors !== 'number' || !Array.isArray(report.findings))
    throw new Error(`pmem-csi-bundle-validate printed no report: ${stdout.slice(0, 300)}`);
  return report;
}

/** One line per error, for failure messages. */
export function bundleErrors(report: BundleReport): string[] {
  return report.findings
    .filter((f) => f.level === 'error')
    .map((f) => `[${f.validator}] ${[f.manifest, f.field].filter(Boolean).join(' ')}: ${f.detail}`);
}
