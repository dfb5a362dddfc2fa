// A CommandRunner for unit tests: answers from a script of expected calls (matched by command and
// argument prefix) and records every call, so parsers and call sequences can be tested without
// the tools. Unexpected calls fail loudly with the rendered command.
import { CommandFailedError, renderCommand, type CommandRunner, type RunOptions, type RunResult } from '../exec.js';

export interface ScriptedReply {
  /** Command name to match. */
  command: string;
  /** Arguments that must be a prefix of the call's arguments (all of them when exact is set). */
  args?: readonly string[];
  exact?: boolean;
  stdout?: string;
  stderr?: string;
  exitCode?: number;
  /** Match any number of times instead of once. */
  repeat?: boolean;
}

export class ScriptedRunner implements CommandRunner {
  readonly calls: Array<{ command: string; args: readonly string[] }> = [];
  readonly #replies: ScriptedReply[];
  readonly #installed: ReadonlySet<string> | undefined;

  constructor(replies: ScriptedReply[] = [], installed?: Iterable<string>) {
    this.#replies = [...replies];
    this.#installed = installed === undefined ? undefined : new Set(installed);
  }

  add(...replies: ScriptedReply[]): this {
    this.#replies.push(...replies);
    return this;
  }

  which(tool: string): string | undefined {
    return this.#installed === undefined || this.#installed.has(tool) ? `/usr/bin/${tool}` : undefined;
  }

  async run(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
    this.calls.push({ command, args });
    const i = this.#replies.findIndex((r) => matches(r, command, args));
    const rendered = renderCommand(command, args);
    if (i < 0) throw new Error(`ScriptedRunner: unexpected call: ${rendered}`);
    const reply = this.#replies[i] as ScriptedReply;
    if (!reply.repeat) this.#replies.splice(i, 1);
    const exitCode = reply.exitCode ?? 0;
    const stderr = reply.stderr ?? '';
    if (!(options.okExitCodes ?? [0]).includes(exitCode)) {
      throw new CommandFailedError(`${rendered}: exit code ${exitCode}: ${stderr.trim()}`, rendered, exitCode, stderr);
    }
    return { command, args, exitCode, stdout: reply.stdout ?? '', stderr, durationMs: 0 };
  }

  /** Replies that were scripted but never used (tests assert this is empty). */
  unused(): ScriptedReply[] {
    return this.#replies.filter((r) => !r.repeat);
  }
}

function matches(r: ScriptedReply, command: string, args: readonly string[]): boolean {
  if (r.command !== command) return false;
  const want = r.args ?? [];
  if (r.exact && want.length !== args.length) return false;
  return want.every((a, i) => args[i] === a);
}
