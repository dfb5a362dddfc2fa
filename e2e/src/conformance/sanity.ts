// The conformance harness: starts the real controller and one node driver (child processes of the
// pmem-csi-driver binary, mutual TLS between them) and runs the upstream csi-sanity suite against
// their sockets, reading the JUnit file for the counts.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startLocalStack } from '@pmem-csi/driver';
import { createLogger } from '@pmem-csi/runtime';
import { toolPath } from '../tools.js';
import { readJUnit, type JUnitSummary } from './junit.js';
import { skipRegex, type SanitySkip } from './skips.js';

export interface SanityRun {
  readonly summary: JUnitSummary;
  readonly exitCode: number | null;
  readonly outputFile: string;
}

const GiB = 1024 ** 3;

function runTool(bin: string, args: readonly string[], logFile: string, timeoutMs: number): Promise<number | null> {
  const fd = openSync(logFile, 'w');
  const child = spawn(bin, [...args], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`csi-sanity did not finish within ${timeoutMs / 1000} s (output: ${logFile})`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Run csi-sanity against a fresh one-node stack in `mode`; skips by exact spec text. */
export async function runSanity(dir: string, mode: 'fake' | 'emulated', skips: readonly SanitySkip[]): Promise<SanityRun> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const stack = await startLocalStack(join(dir, 'stack'), mode, createLogger({ level: 'warn' }), [['sanity-node', 8 * GiB]]);
  const junit = join(dir, 'junit.xml');
  const outputFile = join(dir, 'csi-sanity.log');
  try {
    const node = stack.nodes[0];
    if (node === undefined) throw new Error('no node in the stack');
    const skip = skipRegex(skips);
    const exitCode = await runTool(toolPath('csi-sanity'), [
      `--csi.endpoint=unix://${node.socket}`,
      `--csi.controllerendpoint=unix://${stack.controllerSocket}`,
      `--csi.stagingdir=${join(dir, 'staging')}`,
      `--csi.mountdir=${join(dir, 'mount')}`,
      `--csi.testvolumesize=${300 * 1024 ** 2}`,
      `--csi.junitfile=${junit}`,
      '--ginkgo.no-color',
      ...(skip === undefined ? [] : [`--ginkgo.skip=${skip}`]),
    ], outputFile, 15 * 60_000);
    return { summary: readJUnit(junit), exitCode, outputFile };
  } finally {
    await stack.stop();
  }
}
