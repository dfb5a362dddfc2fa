// `pmem-csi-driver check-tools [MODE ...]`: whether this machine (or image) has every host tool the
// node driver runs in those device modes (default: all), looked up the way the node driver looks
// them up at start-up (the command runner's search path), so that an image can be checked
// without PMEM, a cluster or root. Exit 0 when all are found, 1 naming the missing ones with their
// Debian packages, 2 for an unknown mode.
import { VOLUME_DEVICE_MODES, type VolumeDeviceMode } from '@pmem-csi/api';
import { nodeTools } from '@pmem-csi/csi';
import { HostRunner, TOOL_PACKAGES, type CommandRunner } from '@pmem-csi/runtime';

export const CHECK_TOOLS_USAGE = `usage: pmem-csi-driver check-tools [${VOLUME_DEVICE_MODES.join('|')} ...]`;

export interface CheckToolsDeps {
  readonly runner: Pick<CommandRunner, 'which'>;
  /** nodeTools() of @pmem-csi/csi. */
  readonly toolsOf: (mode: VolumeDeviceMode) => readonly string[];
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

const isMode = (m: string): m is VolumeDeviceMode => (VOLUME_DEVICE_MODES as readonly string[]).includes(m);

/** Prints `<mode> <tool> <path>` or `<mode> <tool> MISSING (Debian package <p>)` per tool, then a summary; returns the exit code. */
export function checkTools(argv: readonly string[], deps: CheckToolsDeps): number {
  const unknown = argv.filter((m) => !isMode(m));
  if (unknown.length > 0) {
    deps.err(
      `check-tools: unknown device mode ${unknown.map((m) => `"${m}"`).join(', ')}; allowed: ${VOLUME_DEVICE_MODES.join(', ')}\n${CHECK_TOOLS_USAGE}`,
    );
    return 2;
  }
  const modes = argv.length === 0 ? VOLUME_DEVICE_MODES : argv.filter(isMode);
  const missing = new Set<string>();
  let checked = 0;
  for (const mode of modes) {
    for (const tool of deps.toolsOf(mode)) {
      const path = deps.runner.which(tool);
      checked++;
      if (path === undefined) missing.add(tool);
      deps.out(`${mode} ${tool} ${path ?? `MISSING (Debian package ${TOOL_PACKAGES[tool] ?? 'unknown'})`}`);
    }
  }
  const summary = `check-tools: ${checked} tool lookups in device modes ${modes.join(', ')}`;
  if (missing.size === 0) {
    deps.out(`${summary}: all found`);
    return 0;
  }
  deps.err(`${summary}: missing ${[...missing].join(', ')}`);
  return 1;
}

/** The subcommand on this machine. */
export async function runCheckTools(argv: readonly string[]): Promise<number> {
  return checkTools(argv, {
    runner: new HostRunner(),
    toolsOf: nodeTools,
    out: (line) => void process.stdout.write(`${line}\n`),
    err: (line) => void process.stderr.write(`${line}\n`),
  });
}
