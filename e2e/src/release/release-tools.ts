// The host tools of the release, resolved from the pinned tool cache (e2e/tools/versions.env),
// and the environment they run with: a CA bundle with the registry's CA for the Go tools, their
// configuration and caches in the release's work directory (never the user's), no update checks.
import { spawnSync } from 'node:child_process';
import { HostRunner } from '@pmem-csi/runtime';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../cluster/components.js';
import { runTool, type ToolRun } from '../cluster/processes.js';
import { parseExports } from '../realnode/images.js';
import { toolPath } from '../tools.js';
import { writeCaBundle } from './tls.js';

export interface ReleaseTools {
  readonly helm: string;
  readonly kustomize: string;
  readonly syft: string;
  readonly cosign: string;
  readonly validator: string;
  readonly buildah: string;
}

export class ToolMissingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolMissingError';
  }
}

/**
 * The bundle validator is versioned by its source hash: its path comes from bootstrap.sh. A project
 * script, not a host tool, run synchronously like images.sh --print-env (realnode/images.ts says why).
 */
export function bundleValidatorPath(): string {
  const r = spawnSync('bash', [join(REPO_ROOT, 'e2e/tools/bootstrap.sh'), '--print-env', 'release-tools'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  const path = parseExports(r.stdout ?? '').get('PMEM_CSI_PMEM_CSI_BUNDLE_VALIDATE');
  if (r.status !== 0 || path === undefined)
    throw new ToolMissingError(
      `pmem-csi-bundle-validate is not built: run bash e2e/tools/bootstrap.sh release-tools (${(r.stderr ?? '').trim()})`,
    );
  return path;
}

/** Every tool or an error naming each missing one and the command that builds or installs it. */
export function resolveReleaseTools(): ReleaseTools {
  const problems: string[] = [];
  const pinned = (binary: string): string => {
    try {
      return toolPath(binary);
    } catch (e) {
      problems.push((e as Error).message);
      return '';
    }
  };
  const tools = {
    helm: pinned('helm'),
    kustomize: pinned('kustomize'),
    syft: pinned('syft'),
    cosign: pinned('cosign'),
    validator: '',
    buildah: new HostRunner().which('buildah') ?? '',
  };
  try {
    tools.validator = bundleValidatorPath();
  } catch (e) {
    problems.push((e as Error).message);
  }
  if (tools.buildah === '') problems.push('buildah is not installed: bash e2e/tools/images.sh installs it (apt)');
  if (problems.length > 0)
    throw new ToolMissingError(`the release needs tools that are missing:\n  ${problems.join('\n  ')}`);
  return tools;
}

/** Environment of the Go tools (cosign, syft, helm) for one release run. */
export function toolEnv(work: string, registryCa: string | undefined, cosignPassword: string): Record<string, string> {
  const home = join(work, 'tool-home');
  for (const d of ['helm-config', 'helm-cache', 'sigstore', 'syft-cache'])
    mkdirSync(join(home, d), { recursive: true });
  const env: Record<string, string> = {
    HELM_CONFIG_HOME: join(home, 'helm-config'),
    HELM_CACHE_HOME: join(home, 'helm-cache'),
    HELM_DATA_HOME: join(home, 'helm-config'),
    HELM_REGISTRY_CONFIG: join(home, 'helm-config', 'registry.json'),
    // cosign: its TUF cache and docker config under the work directory; no transparency log
    // (no internet: every sign/verify call passes --tlog-upload=false / --insecure-ignore-tlog).
    TUF_ROOT: join(home, 'sigstore'),
    DOCKER_CONFIG: join(home, 'docker'),
    COSIGN_PASSWORD: cosignPassword,
    SYFT_CHECK_FOR_APP_UPDATE: 'false',
    SYFT_CACHE_DIR: join(home, 'syft-cache'),
  };
  if (registryCa !== undefined) env['SSL_CERT_FILE'] = writeCaBundle(join(home, 'ca-bundle.pem'), registryCa);
  return env;
}

/** runTool with the release's environment and a longer default timeout. */
export function runReleaseTool(
  bin: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  timeoutMs = 10 * 60_000,
): Promise<ToolRun> {
  return runTool(bin, args, { env, timeoutMs });
}
