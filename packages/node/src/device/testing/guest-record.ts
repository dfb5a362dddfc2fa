// Recorded tool outputs: the stdout of chosen guest commands saved under <results>/recorded with
// their command lines (commands.tsv), from which the host's parser fixtures are refreshed.
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderCommand, type RunResult } from '@pmem-csi/runtime';
import { RESULTS, runner } from './guest-env.js';

async function saveStdout(name: string, res: RunResult): Promise<void> {
  const dir = join(RESULTS, 'recorded');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, name), res.stdout);
  await appendFile(join(dir, 'commands.tsv'), `${name}\t${renderCommand(res.command, res.args)}\n`);
}

/** Run `fn` and save the stdout of the last command it ran as recorded/<name> (with the command line). */
export async function record<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const before = runner.results.length;
  const value = await fn();
  const res = runner.results.at(-1);
  if (res === undefined || runner.results.length === before) throw new Error(`record ${name}: no command ran`);
  await saveStdout(name, res);
  return value;
}

/** Like record(), for the first command of `fn` whose arguments start with `first`. */
export async function recordCall<T>(name: string, first: string, fn: () => Promise<T>): Promise<T> {
  const before = runner.results.length;
  const value = await fn();
  const res = runner.results.slice(before).find((r) => r.args[0] === first);
  if (res === undefined) throw new Error(`record ${name}: no "${first}" command ran`);
  await saveStdout(name, res);
  return value;
}
