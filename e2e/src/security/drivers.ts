// The two mutual-TLS servers as the driver runs them: the real pmem-csi-driver binary in controller
// mode (its registry on TCP) and in node mode (its node-controller service on TCP, fake devices),
// with the campaign's certificate files, JSON logs to files, the node registered with the controller
// before any case runs.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchStatus, freePort, waitUntil } from '@pmem-csi/driver';
import type { TlsFiles } from '@pmem-csi/runtime';
import { startHostProcess, type HostProcess } from '../cluster/processes.js';
import { writeTlsSet, type CampaignPki } from './pki.js';

const MAIN = fileURLToPath(new URL('../../../packages/driver/src/main.ts', import.meta.url));
export const NODE_ID = 'campaign-node';

export interface CampaignDrivers {
  readonly registryPort: number;
  readonly nodeControllerPort: number;
  readonly statusUrl: string;
  readonly controller: HostProcess;
  readonly node: HostProcess;
  /** The files each process reads (and polls: replace them to rotate). */
  readonly files: { readonly controller: TlsFiles; readonly node: TlsFiles };
  /** The node is registered and available. */
  nodeAvailable(): Promise<boolean>;
  stop(): Promise<void>;
}

const tls = (f: TlsFiles): string[] => ['--ca-file', f.caFile, '--cert-file', f.certFile, '--key-file', f.keyFile];

/** Start the controller and one node (fake devices) in `dir`; resolves once the node is registered. */
export async function startCampaignDrivers(dir: string, pki: CampaignPki): Promise<CampaignDrivers> {
  await mkdir(join(dir, 'logs'), { recursive: true });
  const files = {
    controller: await writeTlsSet(join(dir, 'tls', 'controller'), pki.ca.certPem, pki.registry),
    node: await writeTlsSet(join(dir, 'tls', 'node'), pki.ca.certPem, pki.nodeController),
  };
  const [registryPort, nodeControllerPort, statusPort] = [await freePort(), await freePort(), await freePort()];
  const node_ = (args: string[]): string[] => [
    '--conditions=@pmem-csi/source',
    '--import',
    'tsx',
    MAIN,
    ...args,
    '--log-format',
    'json',
  ];
  const controller = startHostProcess(
    'controller',
    process.execPath,
    node_([
      '--mode',
      'controller',
      '--endpoint',
      `unix://${join(dir, 'controller.sock')}`,
      ...tls(files.controller),
      '--registry-listen',
      `127.0.0.1:${registryPort}`,
      '--metrics-listen',
      `127.0.0.1:${statusPort}`,
      '--lease-seconds',
      '6',
    ]),
    { logFile: join(dir, 'logs', 'controller.log') },
  );
  const node = startHostProcess(
    'node',
    process.execPath,
    node_([
      '--mode',
      'node',
      '--nodeid',
      NODE_ID,
      '--device-mode',
      'fake',
      '--endpoint',
      `unix://${join(dir, 'node.sock')}`,
      ...tls(files.node),
      '--state-dir',
      join(dir, 'node-state'),
      '--emulated-size',
      String(1024 ** 3),
      '--node-controller-listen',
      `127.0.0.1:${nodeControllerPort}`,
      '--advertised-endpoint',
      `127.0.0.1:${nodeControllerPort}`,
      '--registry-endpoint',
      `127.0.0.1:${registryPort}`,
    ]),
    { logFile: join(dir, 'logs', 'node.log') },
  );
  const statusUrl = `http://127.0.0.1:${statusPort}`;
  const stop = async (): Promise<void> => {
    await node.stop();
    await controller.stop();
  };
  const nodeAvailable = async (): Promise<boolean> => {
    const s = await fetchStatus(statusUrl, 2000);
    return s.nodes.some((n) => n.nodeId === NODE_ID && n.state === 'available');
  };
  try {
    await waitUntil(
      `node ${NODE_ID} to register with the controller over mutual TLS (logs in ${join(dir, 'logs')})`,
      async () => {
        for (const p of [controller, node])
          if (p.exited() !== undefined) throw new Error(`${p.name} ${p.exited()}: ${p.log().slice(-2000)}`);
        return (await nodeAvailable()) ? true : undefined;
      },
      90_000,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { registryPort, nodeControllerPort, statusUrl, controller, node, files, nodeAvailable, stop };
}
