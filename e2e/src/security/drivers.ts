// The two mutual-TLS servers as the driver runs them: the real pmem-csi-driver binary in controller
// mode (its registry on TCP) and in node mode (its node-controller service on TCP, fake devices),
// with the campaign's certificate files, JSON logs to files, the node registered with the controller
// before any case runs.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderDriverArgs, type DriverArgs } from '@pmem-csi/csi';
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

/** Start the controller and one node (fake devices) in `dir`; resolves once the node is registered. */
export async function startCampaignDrivers(dir: string, pki: CampaignPki): Promise<CampaignDrivers> {
  await mkdir(join(dir, 'logs'), { recursive: true });
  const files = {
    controller: await writeTlsSet(join(dir, 'tls', 'controller'), pki.ca.certPem, pki.registry),
    node: await writeTlsSet(join(dir, 'tls', 'node'), pki.ca.certPem, pki.nodeController),
  };
  const [registryPort, nodeControllerPort, statusPort] = [await freePort(), await freePort(), await freePort()];
  const start = (name: string, flags: DriverArgs): HostProcess =>
    startHostProcess(
      name,
      process.execPath,
      ['--conditions=@pmem-csi/source', '--import', 'tsx', MAIN, ...renderDriverArgs(flags)],
      { logFile: join(dir, 'logs', `${name}.log`) },
    );
  const controller = start('controller', {
    mode: 'controller',
    csiEndpoint: `unix://${join(dir, 'controller.sock')}`,
    caFile: files.controller.caFile,
    certFile: files.controller.certFile,
    keyFile: files.controller.keyFile,
    logFormat: 'json',
    registryListen: `127.0.0.1:${registryPort}`,
    metricsListen: `127.0.0.1:${statusPort}`,
    leaseSeconds: 6,
  });
  const node = start('node', {
    mode: 'node',
    nodeId: NODE_ID,
    deviceMode: 'fake',
    csiEndpoint: `unix://${join(dir, 'node.sock')}`,
    caFile: files.node.caFile,
    certFile: files.node.certFile,
    keyFile: files.node.keyFile,
    logFormat: 'json',
    stateDir: join(dir, 'node-state'),
    emulatedSize: 1024 ** 3,
    nodeControllerListen: `127.0.0.1:${nodeControllerPort}`,
    advertisedEndpoint: `127.0.0.1:${nodeControllerPort}`,
    registryEndpoint: `127.0.0.1:${registryPort}`,
  });
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
