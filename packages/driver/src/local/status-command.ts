// `pmem-csi-driver status`: fetch /status from a controller and print the node table.
import { readFile } from 'node:fs/promises';
import type { ControllerStatus } from '@pmem-csi/controller';
import type { StatusFlags } from '../cli.js';
import { renderStatus } from '../status-table.js';
import { localStackDir } from './workdir.js';

/** Fetch a controller's status over HTTP (bounded by a timeout). */
export async function fetchStatus(url: string, timeoutMs = 5000): Promise<ControllerStatus> {
  const res = await fetch(`${url}/status`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`${url}/status answered ${res.status}`);
  return (await res.json()) as ControllerStatus;
}

/** Print the node table of the controller at --url, else of the local stack in --state-dir. */
export async function printStatus(flags: StatusFlags): Promise<void> {
  const url =
    flags.url ??
    (
      await readFile(`${localStackDir(flags.stateDir)}/status-url`, 'utf8').catch(() => 'http://127.0.0.1:10010')
    ).trim();
  let status: ControllerStatus;
  try {
    status = await fetchStatus(url);
  } catch (e) {
    throw new Error(
      `cannot reach the controller status at ${url} (${(e as Error).message}); is the stack running (npm start -- --keep)?`,
    );
  }
  process.stdout.write(`${renderStatus(status)}\n`);
}
