// The QEMU guest of the real-PMEM tier (e2e/qemu) as the guest suites see it: which boot this is,
// where results go, the host runner that remembers every call (time for the report, stdout for
// recorded/), ndctl on it, the driver's log file, and Jest cases registered for one boot only.
// Only for code that runs inside the guest; importing it elsewhere throws (and so does importing any
// guest-*.ts file, since each one builds on this runner).
import { describe } from '@jest/globals';
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  HostRunner,
  createLogger,
  type CommandRunner,
  type LogFields,
  type Logger,
  type RunOptions,
  type RunResult,
} from '@pmem-csi/runtime';
import { Ndctl } from '../ndctl.js';

if (process.env['PMEM_CSI_GUEST'] !== '1') {
  throw new Error(
    'the *.guest.test.ts suites need the QEMU guest of the real-PMEM tier (run: bash e2e/qemu/run.sh); ' +
      'the host unit run must exclude *.guest.test.ts (jest.preset.js testPathIgnorePatterns)',
  );
}

/** Which boot of the guest this is: 1 = blank NVDIMMs, 2 = the same NVDIMMs after a power-off. */
export const BOOT = process.env['PMEM_CSI_GUEST_BOOT'] ?? '1';
/** Shared with the host: Jest results, logs, recorded outputs, data handed from boot 1 to boot 2. */
export const RESULTS = process.env['PMEM_CSI_GUEST_RESULTS'] ?? '/results';
/** The node driver's state directory, on the guest's persistent state disk. */
export const STATE_DIR = process.env['PMEM_CSI_GUEST_STATE_DIR'] ?? '/var/lib/pmem-csi.intel.com';
/**
 * The guest's PMEM: `nvdimm` (the tier's two label-less emulated NVDIMMs, default) or `cxl` (two CXL
 * type-3 persistent devices whose regions the node assembles: e2e/qemu/cxl). A CXL region comes with
 * labels (the device's label storage area), so the cases that check the blank state differ.
 */
export const PMEM_KIND: 'nvdimm' | 'cxl' = ((): 'nvdimm' | 'cxl' => {
  const kind = process.env['PMEM_CSI_GUEST_PMEM'] ?? 'nvdimm';
  if (kind !== 'nvdimm' && kind !== 'cxl') {
    throw new Error(`PMEM_CSI_GUEST_PMEM must be nvdimm or cxl (e2e/qemu sets it), got ${JSON.stringify(kind)}`);
  }
  return kind;
})();
/** What the guest's PMEM is, for case names: `emulated NVDIMMs` or `emulated CXL pmem`. */
export const PMEM_NAME = PMEM_KIND === 'cxl' ? 'emulated CXL pmem' : 'emulated NVDIMMs';
/** Per-case timeout: tool calls under TCG are slow, and in CI the guests run beside the e2e and
 * real-node tiers at lower CPU priority (e2e/tools/tiers.sh): the slowest case takes ~70 s alone. */
export const SLOW = 600_000;
interface ToolCall {
  readonly command: string;
  readonly ms: number;
}

/** A short name of a tool call for the timing report: "ndctl create-namespace", "dd (read)", "lvcreate". */
function toolLabel(command: string, args: readonly string[]): string {
  if (command === 'ndctl') return `ndctl ${args[0] ?? ''}`;
  if (command === 'xfs_io') return `xfs_io ${(args[1] ?? '').split(' ')[0] ?? ''}`;
  if (command === 'dd') return args[0] === 'if=/dev/zero' ? 'dd (zero)' : 'dd (read)';
  return command;
}

/** The host runner, remembering every call. */
export class RecordingRunner implements CommandRunner {
  readonly inner = new HostRunner({ defaultTimeoutMs: 180_000 });
  readonly results: RunResult[] = [];
  readonly calls: ToolCall[] = [];
  which(tool: string): string | undefined {
    return this.inner.which(tool);
  }
  async run(command: string, args: readonly string[], options?: RunOptions): Promise<RunResult> {
    const t0 = Date.now();
    try {
      const res = await this.inner.run(command, args, options);
      this.results.push(res);
      return res;
    } finally {
      this.calls.push({ command: toolLabel(command, args), ms: Date.now() - t0 });
    }
  }
}

/** One runner per suite file (Jest loads this module once per test file). */
export const runner = new RecordingRunner();
export const ndctl = new Ndctl(runner);

/** The driver's JSON log of a mode and boot, written next to the results. */
export function guestLogger(mode: string): Logger {
  return createLogger({
    format: 'json',
    level: 'debug',
    sink: (line) =>
      void appendFile(join(RESULTS, `driver-${mode}-boot${BOOT}.log`), `${line}\n`).catch(() => undefined),
  });
}

/** A driver log that also keeps its lines, for cases that assert what a driver logged. */
export function capturingLogger(mode: string): { log: Logger; lines: LogFields[] } {
  const lines: LogFields[] = [];
  const log = createLogger({
    format: 'json',
    level: 'debug',
    sink: (line) => {
      lines.push(JSON.parse(line) as LogFields);
      void appendFile(join(RESULTS, `driver-${mode}-boot${BOOT}.log`), `${line}\n`).catch(() => undefined);
    },
  });
  return { log, lines };
}

/** Save the tool timings of this boot for the harness's report. */
export async function saveToolTimings(mode: string): Promise<void> {
  await writeFile(join(RESULTS, `tool-timings-${mode}-boot${BOOT}.json`), JSON.stringify(runner.calls));
}

/** Cases of one boot only (the other boot's cases are not registered at all, not skipped). */
function onBoot(boot: '1' | '2'): (name: string, fn: () => void) => void {
  return (name, fn) => {
    if (BOOT === boot) describe(name, fn);
  };
}
export const boot1 = onBoot('1');
export const boot2 = onBoot('2');

/** The error a promise rejects with; throws when it resolves. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail, but it succeeded');
}
