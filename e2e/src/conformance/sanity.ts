// The conformance harness: starts the real controller and one node driver (child processes of the
// pmem-csi-driver binary, mutual TLS between them) and runs the upstream csi-sanity suite against
// their sockets, reading the JUnit file for the counts. csi-sanity's --csi.endpoint is the plugin
// shim (plugin-shim.ts: the node's Identity plus CONTROLLER_SERVICE, the node's Node service), its
// --csi.controllerendpoint the real controller; with one node in the stack, every volume the
// lifecycle specs create lands on the node they stage and publish on.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startLocalStack } from '@pmem-csi/driver';
import { createLogger } from '@pmem-csi/runtime';
import { GiB } from '@pmem-csi/csi';
import { runTool, ToolError } from '../cluster/processes.js';
import { toolPath } from '../tools.js';
import { readJUnit, type JUnitSummary } from './junit.js';
import { startPluginShim } from './plugin-shim.js';
import { skipRegex, type SanitySkip } from './skips.js';

export interface SanityRun {
  readonly summary: JUnitSummary;
  readonly exitCode: number;
  readonly outputFile: string;
  /** Calls the plugin shim answered, by method: evidence that csi-sanity went through it. */
  readonly shimCalls: ReadonlyMap<string, number>;
  /** Wall time of the csi-sanity run alone (stack start and stop not included). */
  readonly sanityMs: number;
  /** The node driver's log file (JSON lines). */
  readonly nodeLog: string;
}

/**
 * Run csi-sanity through the e2e command runner and keep its output in `logFile` (written when it
 * ends). Failed specs make it exit non-zero: that is a result (the caller reads the JUnit file), not
 * an error. A run that hits the time limit throws, naming the log — by the time spent, because
 * Ginkgo answers the runner's SIGTERM with exit code 1 like a run with failed specs; a run ended by
 * a signal throws too.
 */
async function runCsiSanity(args: readonly string[], logFile: string, timeoutMs: number): Promise<number> {
  const keep = (r: { stdout: string; stderr: string }): Promise<void> =>
    writeFile(logFile, r.stderr === '' ? r.stdout : `${r.stdout}\n--- stderr ---\n${r.stderr}`);
  const started = Date.now();
  try {
    const r = await runTool(toolPath('csi-sanity'), args, { timeoutMs });
    await keep(r);
    return r.code;
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    await keep(e);
    if (Date.now() - started >= timeoutMs)
      throw new Error(`csi-sanity did not finish within ${timeoutMs / 1000} s (output: ${logFile})`, { cause: e });
    if (e.code === null) throw new Error(`${e.message.split('\n')[0]} (output: ${logFile})`, { cause: e });
    return e.code;
  }
}

/**
 * Run csi-sanity against a fresh one-node stack in `mode`; skips by exact spec text. `parameters`:
 * the StorageClass parameters of every volume csi-sanity provisions (--csi.testvolumeparameters).
 */
export async function runSanity(
  dir: string,
  mode: 'fake' | 'emulated',
  skips: readonly SanitySkip[],
  parameters?: Readonly<Record<string, string>>,
): Promise<SanityRun> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const log = createLogger({ level: 'warn' });
  // One node only: the lifecycle specs create a volume and stage it on the node csi-sanity talks to.
  const stack = await startLocalStack(join(dir, 'stack'), mode, log, [['sanity-node', 8 * GiB]]);
  const junit = join(dir, 'junit.xml');
  const outputFile = join(dir, 'csi-sanity.log');
  let shim: Awaited<ReturnType<typeof startPluginShim>> | undefined;
  try {
    const node = stack.nodes[0];
    if (node === undefined) throw new Error('no node in the stack');
    shim = await startPluginShim({
      socket: join(dir, 'plugin.sock'),
      nodeSocket: node.socket,
      controllerSocket: stack.controllerSocket,
      log,
    });
    const skip = skipRegex(skips);
    const parametersFile = join(dir, 'volume-parameters.yaml');
    if (parameters !== undefined)
      await writeFile(
        parametersFile,
        Object.entries(parameters)
          .map(([k, v]) => `${k}: ${JSON.stringify(v)}\n`)
          .join(''),
      );
    const started = Date.now();
    const exitCode = await runCsiSanity(
      [
        `--csi.endpoint=unix://${shim.socket}`,
        `--csi.controllerendpoint=unix://${stack.controllerSocket}`,
        `--csi.stagingdir=${join(dir, 'staging')}`,
        `--csi.mountdir=${join(dir, 'mount')}`,
        `--csi.testvolumesize=${300 * 1024 ** 2}`,
        `--csi.junitfile=${junit}`,
        '--ginkgo.no-color',
        ...(parameters === undefined ? [] : [`--csi.testvolumeparameters=${parametersFile}`]),
        ...(skip === undefined ? [] : [`--ginkgo.skip=${skip}`]),
      ],
      outputFile,
      15 * 60_000,
    );
    const sanityMs = Date.now() - started;
    return {
      summary: readJUnit(junit),
      exitCode,
      outputFile,
      shimCalls: new Map(shim.calls),
      sanityMs,
      nodeLog: join(dir, 'stack', 'logs', `${node.id}.log`),
    };
  } finally {
    await shim?.close();
    await stack.stop();
  }
}
