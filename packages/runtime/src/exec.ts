// The one command runner for host tools (ndctl, lvm, mkfs.*, xfs_io, mount, umount, blkid, findmnt,
// losetup, ...). Commands are argument arrays, never shell strings; every call runs with LC_ALL=C,
// a timeout and an optional AbortSignal (tied to the gRPC deadline by callers), and fails with a
// typed error carrying the command, exit code and stderr. A missing tool is reported by name.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { DomainError, type ErrorKind } from '@pmem-csi/csi';

export interface RunOptions {
  /** Hard limit for the process; it is killed (TERM, then KILL) when exceeded. Default 60 s. */
  timeoutMs?: number;
  /** Aborts the process early, e.g. when the gRPC call is cancelled or its deadline passes. */
  signal?: AbortSignal;
  /** Data written to stdin. */
  input?: string;
  /** Exit codes that count as success (default [0]). */
  okExitCodes?: readonly number[];
}

export interface RunResult {
  command: string;
  args: readonly string[];
  exitCode: number;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** Runs host tools. The production implementation is `HostRunner`; tests inject fakes. */
export interface CommandRunner {
  run(command: string, args: readonly string[], options?: RunOptions): Promise<RunResult>;
  /** Absolute path of `tool`, or undefined when it is not installed. */
  which(tool: string): string | undefined;
}

/** Base of all command failures; `command` is the rendered command line (arguments quoted). */
export abstract class CommandError extends DomainError {
  constructor(
    message: string,
    readonly command: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}
/** The tool exited with a code that is not in okExitCodes. */
export class CommandFailedError extends CommandError {
  readonly kind: ErrorKind = 'Internal';
}
/** The tool did not finish within its timeout (or the caller's deadline). */
export class CommandTimeoutError extends CommandError {
  readonly kind: ErrorKind = 'DeadlineExceeded';
}
/** The call was aborted by the caller (cancelled RPC). */
export class CommandAbortedError extends CommandError {
  readonly kind: ErrorKind = 'Aborted';
}
/** The tool is not installed on this machine. */
export class CommandNotFoundError extends CommandError {
  readonly kind: ErrorKind = 'FailedPrecondition';
}

/** Debian packages that provide the host tools we run, for "missing tool" messages. */
export const TOOL_PACKAGES: Readonly<Record<string, string>> = {
  ndctl: 'ndctl',
  cxl: 'ndctl', // Debian's ndctl package ships the cxl tool (76 and later)
  lvm: 'lvm2',
  lvs: 'lvm2',
  vgs: 'lvm2',
  pvs: 'lvm2',
  lvcreate: 'lvm2',
  lvremove: 'lvm2',
  vgcreate: 'lvm2',
  vgextend: 'lvm2',
  vgchange: 'lvm2',
  pvcreate: 'lvm2',
  lvextend: 'lvm2',
  'mkfs.ext4': 'e2fsprogs',
  resize2fs: 'e2fsprogs',
  dumpe2fs: 'e2fsprogs',
  e2fsck: 'e2fsprogs',
  'mkfs.xfs': 'xfsprogs',
  xfs_io: 'xfsprogs',
  xfs_growfs: 'xfsprogs',
  mount: 'mount',
  umount: 'mount',
  losetup: 'mount',
  blkid: 'util-linux',
  findmnt: 'util-linux',
  fallocate: 'util-linux',
  wipefs: 'util-linux',
  blkdiscard: 'util-linux',
  blockdev: 'util-linux',
  dd: 'coreutils',
  truncate: 'coreutils',
};

const SBIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];
const MAX_OUTPUT = 32 * 1024 * 1024;
const KILL_GRACE_MS = 2000;

/** Render a command line for messages and logs, quoting arguments that need it. */
export function renderCommand(command: string, args: readonly string[]): string {
  return [command, ...args].map((a) => (/^[\w./:=,@%+-]+$/.test(a) ? a : JSON.stringify(a))).join(' ');
}

function searchPath(): string {
  const parts = (process.env['PATH'] ?? '/usr/bin:/bin').split(delimiter);
  return [...parts, ...SBIN_DIRS.filter((d) => !parts.includes(d))].join(delimiter);
}

/** The runner for the real host. */
export class HostRunner implements CommandRunner {
  readonly #defaultTimeoutMs: number;
  readonly #path = searchPath();

  constructor(options: { defaultTimeoutMs?: number } = {}) {
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? 60_000;
  }

  which(tool: string): string | undefined {
    if (tool.includes('/')) return isExecutable(tool) ? tool : undefined;
    for (const dir of this.#path.split(delimiter)) {
      const p = join(dir, tool);
      if (isExecutable(p)) return p;
    }
    return undefined;
  }

  run(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    const rendered = renderCommand(command, args);
    const exe = this.which(command);
    if (exe === undefined) {
      const pkg = TOOL_PACKAGES[command];
      return Promise.reject(
        new CommandNotFoundError(
          `${command}: command not found on this machine${pkg ? ` (install the Debian package "${pkg}")` : ''}`,
          rendered,
          null,
          '',
        ),
      );
    }
    return runProcess(exe, args, {
      ...options,
      timeoutMs: options.timeoutMs ?? this.#defaultTimeoutMs,
      rendered,
      path: this.#path,
    });
  }
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

interface ProcessOptions extends RunOptions {
  timeoutMs: number;
  rendered: string;
  path: string;
}

function runProcess(exe: string, args: readonly string[], o: ProcessOptions): Promise<RunResult> {
  const started = Date.now();
  return new Promise<RunResult>((resolve, reject) => {
    if (o.signal?.aborted) {
      reject(new CommandAbortedError(`${o.rendered}: aborted before start`, o.rendered, null, ''));
      return;
    }
    const child = spawn(exe, [...args], {
      env: { ...process.env, PATH: o.path, LC_ALL: 'C', LANG: 'C' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outLen = 0;
    let ended: 'timeout' | 'abort' | undefined;
    const collect = (buf: Buffer[], chunk: Buffer): void => {
      if (outLen + chunk.length <= MAX_OUTPUT) buf.push(chunk);
      outLen += chunk.length;
    };
    child.stdout.on('data', (c: Buffer) => collect(out, c));
    child.stderr.on('data', (c: Buffer) => collect(err, c));
    const kill = (why: 'timeout' | 'abort'): void => {
      ended ??= why;
      child.kill('SIGTERM');
      setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => kill('timeout'), o.timeoutMs);
    const onAbort = (): void => kill('abort');
    o.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      reject(new CommandFailedError(`${o.rendered}: ${e.message}`, o.rendered, null, ''));
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      const stderr = Buffer.concat(err).toString('utf8');
      const result: RunResult = {
        command: exe,
        args,
        exitCode: code ?? -1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr,
        durationMs: Date.now() - started,
      };
      if (ended === 'timeout') {
        reject(
          new CommandTimeoutError(`${o.rendered}: no result after ${o.timeoutMs} ms, killed`, o.rendered, null, stderr),
        );
      } else if (ended === 'abort') {
        reject(new CommandAbortedError(`${o.rendered}: aborted by the caller`, o.rendered, null, stderr));
      } else if (code === null) {
        reject(new CommandFailedError(`${o.rendered}: killed by signal ${sig}`, o.rendered, null, stderr));
      } else if (!(o.okExitCodes ?? [0]).includes(code)) {
        const detail = stderr.trim().split('\n').slice(-5).join('; ');
        reject(
          new CommandFailedError(
            `${o.rendered}: exit code ${code}${detail ? `: ${detail}` : ''}`,
            o.rendered,
            code,
            stderr,
          ),
        );
      } else {
        resolve(result);
      }
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(o.input ?? '');
  });
}

/** Run a tool that prints JSON and decode it with `decode` (which validates the shape). */
export async function runJson<T>(
  runner: CommandRunner,
  call: { command: string; args: readonly string[]; options?: RunOptions },
  decode: (value: unknown) => T,
): Promise<T> {
  const res = await runner.run(call.command, call.args, call.options);
  const text = res.stdout.trim();
  let value: unknown;
  try {
    value = text === '' ? undefined : JSON.parse(text);
  } catch (e) {
    const rendered = renderCommand(call.command, call.args);
    throw new CommandFailedError(
      `${rendered}: output is not JSON (${(e as Error).message})`,
      rendered,
      res.exitCode,
      res.stderr,
    );
  }
  return decode(value);
}

/** Check that every tool is installed; throws one error listing all missing tools and packages. */
export function requireTools(runner: CommandRunner, tools: readonly string[], purpose: string): void {
  const missing = tools.filter((t) => runner.which(t) === undefined);
  if (missing.length === 0) return;
  const pkgs = [...new Set(missing.map((t) => TOOL_PACKAGES[t] ?? t))];
  throw new CommandNotFoundError(
    `${purpose} needs ${missing.join(', ')}, not found on this machine (Debian packages: ${pkgs.join(', ')})`,
    missing.join(' '),
    null,
    '',
  );
}
