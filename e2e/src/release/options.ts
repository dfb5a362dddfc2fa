// The command line of `npm run release`: parsed once into a typed object; every bad input is
// refused naming the flag and what is allowed.
import { isAbsolute, join, resolve } from 'node:path';
import { REPO_ROOT } from '../cluster/components.js';

export const RELEASE_USAGE = `usage: npm run release -- --version X.Y.Z [--dry-run] [--registry HOST:PORT[/PATH]]
       [--registry-ca FILE] [--out DIR] [--cosign-key FILE] [--allow-dirty]

  --version X.Y.Z   the release version (semver; a pre-release suffix like 1.2.3-rc.1 is allowed)
  --dry-run         everything but a push to a remote registry and the git tag: without --registry
                    the release starts its own registry on 127.0.0.1 (TLS, a CA of its own) and
                    stops it at the end; with --registry, that registry must be on the loopback
                    interface (127.0.0.1, localhost, [::1])
  --registry R      where images, signatures, SBOM attestations and the chart go (required without
                    --dry-run); R/pmem-csi-driver, R/pmem-csi-operator, R/charts/pmem-csi
  --registry-ca F   PEM file of the CA that the registry's certificate chains to (default: the system's)
  --out DIR         where the files of the release go (default tmp/release/<version>); must be empty or absent
  --cosign-key F    cosign private key (its password in COSIGN_PASSWORD); default: a key pair made
                    for this run (dry-run only), its public half published as cosign.pub
  --allow-dirty     release from a work tree with uncommitted changes (tests); the manifest says so`;

export interface ReleaseOptions {
  readonly version: string;
  readonly dryRun: boolean;
  /** host:port[/path] without a scheme; undefined: dry-run with a registry of its own. */
  readonly registry: string | undefined;
  readonly registryCa: string | undefined;
  readonly out: string;
  readonly cosignKey: string | undefined;
  readonly allowDirty: boolean;
}

export class ReleaseUsageError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`${problems.join('\n')}\n\n${RELEASE_USAGE}`);
    this.name = 'ReleaseUsageError';
  }
}

/** Semantic version 2.0.0 without build metadata (a '+' is not allowed in an image tag). */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
/** host[:port][/path], lower-case path components as OCI repositories need. */
const REGISTRY = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])(:\d{1,5})?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;

/** True for a registry host on the loopback interface (the only kind a dry-run pushes to). */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.split('/')[0] ?? '';
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
  return name === 'localhost' || name === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name ?? '');
}

const FLAGS_WITH_VALUE = new Set(['--version', '--registry', '--registry-ca', '--out', '--cosign-key']);
const BOOLEAN_FLAGS = new Set(['--dry-run', '--allow-dirty']);

function splitArgs(argv: readonly string[], problems: string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (BOOLEAN_FLAGS.has(flag)) {
      if (eq > 0) problems.push(`${flag}: takes no value`);
      values.set(flag, 'true');
    } else if (FLAGS_WITH_VALUE.has(flag)) {
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '' || (eq < 0 && value.startsWith('--')))
        problems.push(`${flag}: needs a value`);
      else values.set(flag, value);
    } else problems.push(`${arg}: unknown argument (allowed: ${[...FLAGS_WITH_VALUE, ...BOOLEAN_FLAGS].join(', ')})`);
  }
  return values;
}

/** Parse the arguments after `npm run release --`; throws ReleaseUsageError listing every problem. */
export function parseReleaseArgs(argv: readonly string[], cwd = REPO_ROOT): ReleaseOptions {
  const problems: string[] = [];
  const v = splitArgs(argv, problems);
  const version = v.get('--version');
  if (version === undefined) problems.push('--version: required (X.Y.Z)');
  else if (!SEMVER.test(version))
    problems.push(`--version: "${version}" is not a semantic version X.Y.Z[-pre.release] (no build metadata)`);
  const dryRun = v.has('--dry-run');
  const registry = v.get('--registry')?.replace(/\/+$/, '');
  if (registry !== undefined) {
    if (/^[a-z]+:\/\//.test(registry))
      problems.push(`--registry: "${registry}" must be host:port[/path] without a scheme`);
    else if (!REGISTRY.test(registry))
      problems.push(
        `--registry: "${registry}" is not host[:port][/path] (path: lower-case letters, digits, '.', '_', '-')`,
      );
    else if (dryRun && !isLoopbackRegistry(registry))
      problems.push(`--registry: a dry run pushes only to a registry on the loopback interface, not to "${registry}"`);
  } else if (!dryRun) problems.push('--registry: required without --dry-run');
  const cosignKey = v.get('--cosign-key');
  if (!dryRun && cosignKey === undefined)
    problems.push(
      '--cosign-key: required without --dry-run (a release is signed with the project key, not a key made for the run)',
    );
  if (problems.length > 0) throw new ReleaseUsageError(problems);
  const abs = (p: string | undefined): string | undefined =>
    p === undefined ? undefined : isAbsolute(p) ? p : resolve(cwd, p);
  return {
    version: version ?? '',
    dryRun,
    registry,
    registryCa: abs(v.get('--registry-ca')),
    out: abs(v.get('--out')) ?? join(cwd, 'tmp', 'release', version ?? ''),
    cosignKey: abs(cosignKey),
    allowDirty: v.has('--allow-dirty'),
  };
}
