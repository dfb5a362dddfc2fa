// Where the real components built by e2e/tools/bootstrap.sh live, for the e2e harness.
// Same layout and pins as the script: ${PMEM_CSI_TOOLS_CACHE:-$HOME/.cache/pmem-csi-tools}/
// <tool>/<version>/bin/<binary>, versions from e2e/tools/versions.env. Pure node:fs/path.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// e2e/src/tools.ts (or dist/tools.js) -> e2e/tools/versions.env
const TOOLS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'tools');
const BOOTSTRAP = 'bash e2e/tools/bootstrap.sh';

export interface ToolInfo {
  /** Build unit in versions.env and the cache: "kubernetes", "kwok", "csi-sanity", ... */
  readonly tool: string;
  /** Executable name: "kube-apiserver", "kwokctl", "csi-provisioner", ... */
  readonly binary: string;
  readonly version: string;
  /** Where bootstrap.sh puts the binary (whether or not it is there yet). */
  readonly path: string;
  /** The environment variable `bootstrap.sh --print-env` exports for it. */
  readonly envVar: string;
}

export interface ToolOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** versions.env to read; defaults to e2e/tools/versions.env. */
  readonly pinsFile?: string;
}

/** A tool that bootstrap.sh has not built (or not finished building) on this machine. */
export class ToolNotBuiltError extends Error {
  constructor(
    readonly info: ToolInfo,
    detail: string,
  ) {
    super(`${info.binary} ${info.version} is not built (${detail}): run ${BOOTSTRAP} ${info.tool}`);
    this.name = 'ToolNotBuiltError';
  }
}

/** KEY=VALUE lines of versions.env (comments and blank lines skipped, quotes removed). */
export function readPins(file: string = join(TOOLS_DIR, 'versions.env')): Map<string, string> {
  const pins = new Map<string, string>();
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(raw.trim());
    if (m?.[1] === undefined || m[2] === undefined) continue;
    pins.set(m[1], m[2].replace(/^"(.*)"$/, '$1'));
  }
  return pins;
}

export function toolsCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['PMEM_CSI_TOOLS_CACHE'] || join(env['HOME'] || homedir(), '.cache', 'pmem-csi-tools');
}

const upper = (name: string): string => name.toUpperCase().replaceAll('-', '_');
const words = (s: string | undefined): string[] => (s ?? '').split(/\s+/).filter((w) => w !== '');

/** Every tool and binary of versions.env, resolved to its cache path. */
export function listTools(options: ToolOptions = {}): ToolInfo[] {
  const pins = readPins(options.pinsFile);
  const cache = toolsCacheDir(options.env);
  const out: ToolInfo[] = [];
  for (const tool of words(pins.get('TOOLS'))) {
    const version = pins.get(`${upper(tool)}_VERSION`);
    if (version === undefined) throw new Error(`versions.env has no ${upper(tool)}_VERSION`);
    for (const binary of words(pins.get(`${upper(tool)}_BINARIES`))) {
      const path = join(cache, tool, version, 'bin', binary);
      out.push({ tool, binary, version, path, envVar: `PMEM_CSI_${upper(binary)}` });
    }
  }
  return out;
}

/** Resolves a binary name ("kube-apiserver") or a one-binary tool ("external-provisioner"). */
export function toolInfo(name: string, options: ToolOptions = {}): ToolInfo {
  const all = listTools(options);
  const byBinary = all.find((t) => t.binary === name);
  if (byBinary) return byBinary;
  const ofTool = all.filter((t) => t.tool === name);
  if (ofTool.length === 1 && ofTool[0]) return ofTool[0];
  if (ofTool.length > 1) {
    throw new Error(`${name} has several binaries; name one: ${ofTool.map((t) => t.binary).join(', ')}`);
  }
  throw new Error(`unknown tool ${name}; known: ${all.map((t) => t.binary).join(', ')}`);
}

/**
 * Absolute path of a built tool. An explicit PMEM_CSI_<BINARY> in the environment wins (it must
 * exist); otherwise the cache entry must be complete (binary and stamp). Throws ToolNotBuiltError
 * saying which bootstrap command to run.
 */
export function toolPath(name: string, options: ToolOptions = {}): string {
  const info = toolInfo(name, options);
  const override = (options.env ?? process.env)[info.envVar];
  if (override) {
    if (!existsSync(override)) throw new ToolNotBuiltError(info, `${info.envVar}=${override} does not exist`);
    return override;
  }
  if (!existsSync(info.path)) throw new ToolNotBuiltError(info, `no ${info.path}`);
  const stamp = join(dirname(dirname(info.path)), 'stamp');
  if (!existsSync(stamp)) throw new ToolNotBuiltError(info, `no ${stamp}`);
  return info.path;
}
