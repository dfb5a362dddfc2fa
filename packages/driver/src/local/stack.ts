// Starts and stops the local stack: certificates, one controller and N node drivers as child
// processes of the real binary, on emulated PMEM (root with loop devices) or fake devices. The
// state directory is locked for the stack's lifetime (lock.ts); what a crashed earlier owner left
// (mounts, loop devices) is released before it is reused, and stop() releases it all again.
import { accessSync, constants } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControllerStatus } from '@pmem-csi/controller';
import { type DriverArgs, MiB } from '@pmem-csi/csi';
import { releaseHostDir } from '@pmem-csi/node';
import { HostRunner, type Logger } from '@pmem-csi/runtime';
import { makeLocalCerts, type LocalCerts } from './certs.js';
import { acquireStackLock, type StackLock } from './lock.js';
import { freePort, startDriverProcess, STOP_GRACE_MS, waitUntil, type DriverProcess } from './processes.js';
import { silentProgress, type Progress } from './progress.js';
import { fetchStatus } from './status-command.js';

export interface LocalNode {
  readonly id: string;
  readonly socket: string;
  readonly sizeBytes: number;
}

export interface LocalStack {
  readonly dir: string;
  readonly deviceMode: 'emulated' | 'fake';
  readonly controllerSocket: string;
  readonly statusUrl: string;
  readonly nodes: readonly LocalNode[];
  readonly processes: readonly DriverProcess[];
  /**
   * Wait until the controller has settled and every node is registered and available (after a
   * start or a restart); when it times out, the error names a process of the stack that exited.
   */
  ready(timeoutMs?: number): Promise<ControllerStatus>;
  /** Kill a process (SIGKILL, like a crash, or SIGTERM) and start it again with the same flags. */
  restart(name: string, how: 'crash' | 'graceful'): Promise<void>;
  /**
   * Stop the node drivers, then the controller; unmount what is mounted below the directory,
   * detach its loop devices, remove the sockets and the lock. Idempotent.
   * @throws Error listing mounts or loop devices that could not be released
   */
  stop(): Promise<void>;
}

export type NodeSizes = ReadonlyArray<readonly [string, number]>;

export interface LocalStackOptions {
  /** Node ids and their emulated PMEM sizes (default NODE_SIZES). */
  readonly nodeSizes?: NodeSizes;
  /** Aborts the start-up (the processes started so far are stopped). */
  readonly signal?: AbortSignal;
  /** Where to say that a stale lock was taken over (default: the logger, at warn). */
  readonly notice?: (line: string) => void;
  /**
   * Progress lines while start-up, ready() and stop() wait: certificates, registration, processes
   * stopping, mounts and loop devices released (default: none).
   */
  readonly progress?: Progress;
}

/** How long the start-up waits for every node to register (and ready() by default). */
export const READY_TIMEOUT_MS = 90_000;

export const NODE_SIZES: ReadonlyArray<readonly [string, number]> = [
  ['node-a', 1024 * MiB],
  ['node-b', 768 * MiB],
  ['node-c', 512 * MiB],
];

/** Emulated mode needs root, losetup and loop devices; otherwise say why and use fake devices. */
export function chooseDeviceMode(forceFake: boolean): { mode: 'emulated' | 'fake'; why: string } {
  if (forceFake) return { mode: 'fake', why: '--fake given' };
  if (process.getuid?.() !== 0) return { mode: 'fake', why: 'not running as root: emulated PMEM needs loop devices' };
  if (new HostRunner().which('losetup') === undefined) return { mode: 'fake', why: 'losetup is not installed' };
  try {
    accessSync('/dev/loop-control', constants.W_OK);
  } catch {
    return { mode: 'fake', why: 'no /dev/loop-control on this machine' };
  }
  return { mode: 'emulated', why: 'root with loop devices' };
}

/** The last lines of a log file (or why it cannot be read). */
async function logTail(file: string, lines = 15): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch (e) {
    return `(cannot read it: ${(e as Error).message})`;
  }
}

/** Unmount and detach what is left below `dir` (emulated mode only: fake devices mount nothing); returns what could not be released. */
async function releaseDir(dir: string, mode: 'emulated' | 'fake', log: Logger): Promise<readonly string[]> {
  if (mode !== 'emulated') return [];
  const released = await releaseHostDir(new HostRunner(), dir);
  if (released.unmounted.length > 0 || released.detached.length > 0)
    log.info('released mounts and loop devices', { dir, unmounted: released.unmounted, detached: released.detached });
  return released.left;
}

/** Remove what only a running stack may hold: sockets and the status URL. */
async function removeRunFiles(dir: string, nodeSizes: NodeSizes): Promise<void> {
  const files = [
    join(dir, 'controller', 'csi.sock'),
    join(dir, 'status-url'),
    ...nodeSizes.map(([id]) => join(dir, 'nodes', id, 'csi.sock')),
  ];
  await Promise.all(files.map((f) => rm(f, { force: true })));
}

/** Lock `dir` and clear what an earlier run left: mounts, loop devices, node state, certificates. */
async function prepareDir(
  dir: string,
  mode: 'emulated' | 'fake',
  o: { log: Logger; notice: (line: string) => void; progress: Progress },
): Promise<StackLock> {
  const lock = await acquireStackLock(dir, o.notice);
  try {
    const left = await o.progress(
      { what: `what an earlier run left below ${dir} (mounts, loop devices) to be released` },
      releaseDir(dir, mode, o.log),
    );
    if (left.length > 0)
      throw new Error(`${dir} still holds what an earlier run left and could not be released: ${left.join('; ')}`);
    await rm(join(dir, 'nodes'), { recursive: true, force: true });
    await rm(join(dir, 'certs'), { recursive: true, force: true });
    await mkdir(join(dir, 'logs'), { recursive: true });
    return lock;
  } catch (e) {
    await lock.release();
    throw e;
  }
}

function optionsOf(o: NodeSizes | LocalStackOptions): LocalStackOptions {
  return Array.isArray(o) ? { nodeSizes: o as NodeSizes } : (o as LocalStackOptions);
}

interface Wiring {
  readonly dir: string;
  readonly mode: 'emulated' | 'fake';
  readonly certs: LocalCerts;
  readonly registryPort: number;
}

function controllerFlags(w: Wiring, statusPort: number): DriverArgs {
  const { caFile, certFile, keyFile } = w.certs.registry;
  return {
    mode: 'controller',
    csiEndpoint: join(w.dir, 'controller', 'csi.sock'),
    caFile,
    certFile,
    keyFile,
    registryListen: `127.0.0.1:${w.registryPort}`,
    metricsListen: `127.0.0.1:${statusPort}`,
    leaseSeconds: 6,
  };
}

async function startNode(
  w: Wiring,
  [id, size]: readonly [string, number],
): Promise<{ node: LocalNode; process: DriverProcess }> {
  const nodeDir = join(w.dir, 'nodes', id);
  await mkdir(nodeDir, { recursive: true });
  const socket = join(nodeDir, 'csi.sock');
  const port = await freePort();
  const { caFile, certFile, keyFile } = w.certs.nodeController;
  const flags: DriverArgs = {
    mode: 'node',
    nodeId: id,
    deviceMode: w.mode,
    csiEndpoint: socket,
    caFile,
    certFile,
    keyFile,
    stateDir: join(nodeDir, 'state'),
    emulatedSize: size,
    nodeControllerListen: `127.0.0.1:${port}`,
    advertisedEndpoint: `127.0.0.1:${port}`,
    registryEndpoint: `127.0.0.1:${w.registryPort}`,
  };
  const process = startDriverProcess(id, flags, join(w.dir, 'logs', `${id}.log`));
  return { node: { id, socket, sizeBytes: size }, process };
}

/**
 * What the registration wait waits for, from the controller's last status (undefined while it does
 * not answer yet): the nodes not yet available by name, then the controller's settle period.
 */
export function registrationWait(status: ControllerStatus | undefined, nodeIds: readonly string[]): string {
  if (status === undefined) return `the controller and ${nodeIds.length} node drivers to start`;
  const available = new Set(status.nodes.filter((n) => n.state === 'available').map((n) => n.nodeId));
  const missing = nodeIds.filter((id) => !available.has(id));
  if (missing.length > 0) return `${missing.join(', ')} to register with the controller`;
  return "the controller's start-up settle period to pass (no node's volumes missed after a restart)";
}

interface Parts {
  readonly dir: string;
  readonly statusUrl: string;
  readonly nodes: readonly LocalNode[];
  readonly processes: readonly DriverProcess[];
}

/** Wait until every node is available and the controller has settled; a process that exits ends the wait at once. */
async function waitReady(p: Parts, options: LocalStackOptions, timeoutMs: number): Promise<ControllerStatus> {
  const exited = new AbortController();
  const signal = options.signal === undefined ? exited.signal : AbortSignal.any([options.signal, exited.signal]);
  const ids = p.nodes.map((n) => n.id);
  let last: ControllerStatus | undefined;
  const wait = waitUntil(
    `${p.nodes.length} node drivers to register with the controller (logs in ${join(p.dir, 'logs')})`,
    async () => {
      const dead = p.processes.find((d) => d.child.exitCode !== null);
      if (dead)
        exited.abort(
          new Error(
            `${dead.name} exited with code ${dead.child.exitCode}; the end of ${dead.logFile}:\n${await logTail(dead.logFile)}`,
          ),
        );
      const s = await fetchStatus(p.statusUrl, 2000);
      last = s;
      return s.nodes.filter((n) => n.state === 'available').length === p.nodes.length && s.settled ? s : undefined;
    },
    timeoutMs,
    signal,
  );
  return (options.progress ?? silentProgress)({ what: () => registrationWait(last, ids), limitMs: timeoutMs }, wait);
}

/**
 * Stop the nodes (they unregister from the still-running controller), then the controller; then
 * release what they left. Returns what could not be released.
 */
async function stopParts(
  p: Pick<Parts, 'dir' | 'processes'>,
  mode: 'emulated' | 'fake',
  o: { log: Logger; progress: Progress },
): Promise<readonly string[]> {
  const running = (group: readonly DriverProcess[]) => (): string => {
    const names = group.filter((d) => d.child.exitCode === null && d.child.signalCode === null).map((d) => d.name);
    return `${names.length > 0 ? names.join(', ') : 'the processes'} to stop after SIGTERM (SIGKILL when the time is up)`;
  };
  for (const group of [
    p.processes.filter((d) => d.name !== 'controller'),
    p.processes.filter((d) => d.name === 'controller'),
  ])
    await o.progress({ what: running(group), limitMs: STOP_GRACE_MS }, Promise.all(group.map((d) => d.stop())));
  return o.progress(
    { what: `the mounts and loop devices below ${p.dir} to be released` },
    releaseDir(p.dir, mode, o.log),
  );
}

/** Certificates, then the controller and the nodes as child processes (pushed to `processes` as they start). */
async function startParts(
  dir: string,
  mode: 'emulated' | 'fake',
  nodeSizes: NodeSizes,
  o: { progress: Progress; processes: DriverProcess[] },
): Promise<Parts> {
  const certs = await o.progress(
    { what: 'the certificates: a CA, a registry and a node-controller key pair (RSA 2048)' },
    makeLocalCerts(join(dir, 'certs')),
  );
  const [registryPort, statusPort] = [await freePort(), await freePort()];
  const w: Wiring = { dir, mode, certs, registryPort };
  await mkdir(join(dir, 'controller'), { recursive: true });
  o.processes.push(
    startDriverProcess('controller', controllerFlags(w, statusPort), join(dir, 'logs', 'controller.log')),
  );
  const nodes: LocalNode[] = [];
  for (const size of nodeSizes) {
    const started = await startNode(w, size);
    o.processes.push(started.process);
    nodes.push(started.node);
  }
  const statusUrl = `http://127.0.0.1:${statusPort}`;
  await writeFile(join(dir, 'status-url'), `${statusUrl}\n`);
  return { dir, statusUrl, nodes, processes: o.processes };
}

/**
 * Lock `dir`, start everything and wait until every node is registered and available.
 * The fourth argument is the node sizes or the options.
 * @throws StackLockedError when another live stack owns `dir`
 */
export async function startLocalStack(
  dir: string,
  mode: 'emulated' | 'fake',
  log: Logger,
  nodesOrOptions: NodeSizes | LocalStackOptions = NODE_SIZES,
): Promise<LocalStack> {
  const options = optionsOf(nodesOrOptions);
  const nodeSizes = options.nodeSizes ?? NODE_SIZES;
  const progress = options.progress ?? silentProgress;
  const lock = await prepareDir(dir, mode, { log, notice: options.notice ?? ((line) => log.warn(line)), progress });
  const processes: DriverProcess[] = [];
  let stopped: Promise<void> | undefined;
  const stopOnce = async (): Promise<void> => {
    try {
      const left = await stopParts({ dir, processes }, mode, { log, progress });
      await removeRunFiles(dir, nodeSizes);
      if (left.length > 0)
        throw new Error(`the local stack in ${dir} stopped, but these could not be released: ${left.join('; ')}`);
    } finally {
      await lock.release();
    }
  };
  const stop = (): Promise<void> => (stopped ??= stopOnce());
  try {
    const parts = await startParts(dir, mode, nodeSizes, { progress, processes });
    const ready = (timeoutMs = READY_TIMEOUT_MS): Promise<ControllerStatus> => waitReady(parts, options, timeoutMs);
    await ready();
    log.debug('local stack up', { dir });
    const restart = async (name: string, how: 'crash' | 'graceful'): Promise<void> => {
      const i = processes.findIndex((p) => p.name === name);
      const old = processes[i];
      if (old === undefined) throw new Error(`no process named ${name} in the local stack`);
      await (how === 'crash' ? old.kill() : old.stop());
      processes[i] = startDriverProcess(old.name, old.flags, old.logFile);
    };
    return {
      dir,
      deviceMode: mode,
      controllerSocket: join(dir, 'controller', 'csi.sock'),
      statusUrl: parts.statusUrl,
      nodes: parts.nodes,
      processes,
      ready,
      restart,
      stop,
    };
  } catch (e) {
    await stop().catch((stopError: unknown) =>
      log.warn('stopping the local stack after a failed start left something behind', { error: String(stopError) }),
    );
    throw e;
  }
}
