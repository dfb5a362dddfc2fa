// The set-up of the node tests on emulated PMEM (root, loop devices, real filesystems): a checked
// host and a temporary directory, then the node's services on an emulated device manager in it.
import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeTools } from '@pmem-csi/csi';
import { nullLogger, type CommandRunner } from '@pmem-csi/runtime';
import { EmulatedDeviceManager } from '../device/emulated.js';
import { hostTestProblems } from './host-cleanup.js';
import { startTestNode, testClients, type TestClients, type TestNode } from './test-node.js';

/**
 * A new temporary directory (its real path) once the host can run emulated mode.
 * @throws naming `what` and every missing tool or device, so that the tests fail instead of skipping
 */
export async function emulatedHostDir(runner: CommandRunner, what: string, prefix: string): Promise<string> {
  const problems = await hostTestProblems(runner, nodeTools('emulated'));
  if (problems.length > 0) throw new Error(`${what} cannot run on this machine: ${problems.join('; ')}`);
  return realpath(await mkdtemp(join(tmpdir(), prefix)));
}

export interface EmulatedNode {
  readonly dm: EmulatedDeviceManager;
  readonly node: TestNode;
  readonly c: TestClients;
}

/** The node's services on emulated PMEM of `totalSize` bytes in `dir` (backing files under `dir/emulated`). */
export async function startEmulatedNode(runner: CommandRunner, dir: string, totalSize: number): Promise<EmulatedNode> {
  const dm = new EmulatedDeviceManager({ runner, log: nullLogger, dir: join(dir, 'emulated'), totalSize });
  await dm.setup();
  const node = await startTestNode({ dm, dir, runner });
  return { dm, node, c: testClients(node.address) };
}
