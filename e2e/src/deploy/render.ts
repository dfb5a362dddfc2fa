// Renders every install path with the real tools: `kustomize build` of each base and overlay,
// `helm template` / `helm lint` of the chart. Used by the deploy suites here and reusable by the
// cluster tier (server-side dry-run apply of renderAllOutputs() against a real apiserver).
// Tools come from e2e/tools (toolPath); a missing tool is an error that says how to build it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { HELM_CHART_DIR, kustomizeTargets, renderedManifestPaths, type KubeObject } from '@pmem-csi/operator';
import { ToolNotBuiltError, toolPath } from '../tools.js';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BOOTSTRAP_HINT = 'run bash e2e/tools/bootstrap.sh helm kustomize';
export const CHART = HELM_CHART_DIR;
/** Release namespace of the chart in these tests (the operator's own namespace). */
export const RELEASE_NAMESPACE = 'pmem-csi-operator';

/** Path of helm or kustomize; fails (never skips) with how to build it. */
export function deployTool(name: 'helm' | 'kustomize'): string {
  try {
    return toolPath(name);
  } catch (e) {
    if (e instanceof ToolNotBuiltError) throw new Error(`${name} is not available (${e.message}): ${BOOTSTRAP_HINT}`);
    throw e;
  }
}

export class ToolFailedError extends Error {
  constructor(
    readonly command: string,
    readonly status: number | null,
    readonly stderr: string,
  ) {
    super(`${command} failed (exit ${status ?? 'signal'}): ${stderr.trim()}`);
    this.name = 'ToolFailedError';
  }
}

function run(tool: 'helm' | 'kustomize', args: readonly string[]): string {
  const r = spawnSync(deployTool(tool), args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  if (r.error !== undefined) throw r.error;
  if (r.status !== 0) throw new ToolFailedError(`${tool} ${args.join(' ')}`, r.status, r.stderr);
  return r.stdout;
}

/** `kustomize build <dir>` (dir relative to the repository root). */
export function kustomizeBuild(dir: string): string {
  return run('kustomize', ['build', dir]);
}

export interface HelmOptions {
  readonly release?: string;
  readonly namespace?: string;
  /** Chart directory (default: the repository's chart). */
  readonly chart?: string;
  /** -f files, relative to the repository root or absolute. */
  readonly valuesFiles?: readonly string[];
  /** --set key=value (values are strings as on the command line). */
  readonly set?: Readonly<Record<string, string>>;
  /** --set-file key=path. */
  readonly setFile?: Readonly<Record<string, string>>;
  readonly includeCrds?: boolean;
}

function helmValueArgs(o: HelmOptions): string[] {
  return [
    ...(o.valuesFiles ?? []).flatMap((f) => ['-f', f]),
    ...Object.entries(o.set ?? {}).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
    ...Object.entries(o.setFile ?? {}).flatMap(([k, v]) => ['--set-file', `${k}=${v}`]),
  ];
}

/** `helm template` of the chart. */
export function helmTemplate(o: HelmOptions = {}): string {
  return run('helm', ['template', o.release ?? 'pmem-csi', o.chart ?? CHART, '--namespace', o.namespace ?? RELEASE_NAMESPACE, ...(o.includeCrds ? ['--include-crds'] : []), ...helmValueArgs(o)]);
}

/** `helm lint --strict` of the chart (values schema included). */
export function helmLint(o: HelmOptions = {}): string {
  return run('helm', ['lint', '--strict', o.chart ?? CHART, '--namespace', o.namespace ?? RELEASE_NAMESPACE, ...helmValueArgs(o)]);
}

/** The objects of a YAML stream (empty documents dropped). */
export function parseManifests(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((d) => {
      if ('errors' in d && d.errors.length > 0) throw new Error(`invalid YAML: ${d.errors.map((e) => e.message).join('; ')}`);
      return d.toJS() as KubeObject | null;
    })
    .filter((o): o is KubeObject => o !== null);
}

/** "kind namespace/name", the identity of an object in comparisons. */
export function identity(o: KubeObject): string {
  return `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** Objects sorted by identity, for order-independent comparison. */
export function byIdentity(objects: readonly KubeObject[]): KubeObject[] {
  return [...objects].sort((a, b) => (identity(a) < identity(b) ? -1 : identity(a) > identity(b) ? 1 : 0));
}

/** The Helm values files of the chart's ci/ directory (repository-relative). */
export const HELM_CI_VALUES = [`${CHART}/ci/lvm-values.yaml`, `${CHART}/ci/direct-custom-values.yaml`] as const;

export interface RenderedOutput {
  /** e.g. "kustomize deploy/kustomize/operator", "file deploy/kubernetes/lvm-production/pmem-csi.yaml". */
  readonly id: string;
  readonly yaml: string;
}

/**
 * Every install manifest: the committed rendered files, `kustomize build` of every base, overlay
 * and the examples, and `helm template --include-crds` with the default and ci/ values. The
 * cluster tier dry-runs each of them against a real apiserver.
 */
export function renderAllOutputs(): RenderedOutput[] {
  return [
    ...renderedManifestPaths().map((path) => ({ id: `file ${path}`, yaml: readFileSync(join(REPO_ROOT, path), 'utf8') })),
    ...kustomizeTargets().map((t) => ({ id: `kustomize ${t.dir}`, yaml: kustomizeBuild(t.dir) })),
    { id: 'helm (default values)', yaml: helmTemplate({ includeCrds: true }) },
    ...HELM_CI_VALUES.map((f) => ({ id: `helm -f ${f}`, yaml: helmTemplate({ includeCrds: true, valuesFiles: [f] }) })),
  ];
}
