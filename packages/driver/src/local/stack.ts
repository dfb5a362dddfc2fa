// Starts and stops the local stack: certificates, one controller and N node drivers as child
// processes of the real binary, on emulated PMEM (root with loop devices) or fake devices.
import { accessSync, constants, existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControllerStatus } from '@pmem-csi/controller';
import { HostRunner, type Logger } from '@pmem-csi/runtime';
import { makeLocalCerts, type LocalCerts } from './certs.js';
import { freePort, startDriverProcess, waitUntil, type DriverProcess } from './processes.js';
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
  stop(): Promise<void>;
}

const MiB = 1024 ** 2;
export const NODE_SIZES: ReadonlyArray<readonly [string, number]> = [['node-a', 1024 * MiB], ['node-b', 768 * MiB], ['node-c', 512 * MiB]];

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

function tlsArgs(f: LocalCerts['registry']): string[] {
  return ['--ca-file', f.caFile, '--cert-file', f.certFile, '--key-file', f.keyFile];
}

/** Start everything and wait until every node is registered and available. */
export async function startLocalStack(
  dir: string,
  mode: 'emulated' | 'fake',
  log: Logger,
  nodeSizes: ReadonlyArray<readonly [string, number]> = NODE_SIZES,
): Promise<LocalStack> {
  if (existsSync(join(dir, 'certs'))) await rm(join(dir, 'certs'), { recursive: true, force: true });
  await mkdir(join(dir, 'logs'), { recursive: true });
  const certs = await makeLocalCerts(join(dir, 'certs'));
  const [registryPort, statusPort] = [await freePort(), await freePort()];
  const controllerSocket = join(dir, 'controller', 'csi.sock');
  await mkdir(join(dir, 'controller'), { recursive: true });
  const processes: DriverProcess[] = [];
  // Nodes first (they unregister from the still-running controller), then the controller.
  const stop = async (): Promise<void> => {
    await Promise.all(processes.filter((p) => p.name !== 'controller').map((p) => p.stop()));
    await Promise.all(processes.filter((p) => p.name === 'controller').map((p) => p.stop()));
  };
  try {
    processes.push(startDriverProcess('controller', ['--mode', 'controller', '--endpoint', controllerSocket, ...tlsArgs(certs.registry),
      '--registry-listen', `127.0.0.1:${registryPort}`, '--metrics-listen', `127.0.0.1:${statusPort}`, '--lease-seconds', '6'], join(dir, 'logs', 'controller.log')));
    const nodes: LocalNode[] = [];
    for (const [id, size] of nodeSizes) {
      const nodeDir = join(dir, 'nodes', id);
      await mkdir(nodeDir, { recursive: true });
      const socket = join(nodeDir, 'csi.sock');
      const port = await freePort();
      processes.push(startDriverProcess(id, ['--mode', 'node', '--nodeid', id, '--device-mode', mode, '--endpoint', socket, ...tlsArgs(certs.nodeController),
        '--state-dir', join(nodeDir, 'state'), '--emulated-size', String(size), '--node-controller-listen', `127.0.0.1:${port}`,
        '--advertised-endpoint', `127.0.0.1:${port}`, '--registry-endpoint', `127.0.0.1:${registryPort}`], join(dir, 'logs', `${id}.log`)));
      nodes.push({ id, socket, sizeBytes: size });
    }
    const statusUrl = `http://127.0.0.1:${statusPort}`;
    await writeFile(join(dir, 'status-url'), `${statusUrl}\n`);
    const ready = (timeoutMs = 90_000): Promise<ControllerStatus> =>
      waitUntil(`${nodes.length} node drivers to register with the controller (logs in ${join(dir, 'logs')})`, async () => {
        const dead = processes.find((p) => p.child.exitCode !== null);
        if (dead) throw new Error(`${dead.name} exited with code ${dead.child.exitCode}; see ${dead.logFile}`);
        const s = await fetchStatus(statusUrl, 2000);
        return s.nodes.filter((n) => n.state === 'available').length === nodes.length && s.settled ? s : undefined;
      }, timeoutMs);
    await ready();
    log.debug('local stack up', { dir });
    const restart = async (name: string, how: 'crash' | 'graceful'): Promise<void> => {
      const i = processes.findIndex((p) => p.name === name);
      const old = processes[i];
      if (old === undefined) throw new Error(`no process named ${name} in the local stack`);
      await (how === 'crash' ? old.kill() : old.stop());
      processes[i] = startDriverProcess(old.name, old.args, old.logFile);
    };
    return { dir, deviceMode: mode, controllerSocket, statusUrl, nodes, processes, ready, restart, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
