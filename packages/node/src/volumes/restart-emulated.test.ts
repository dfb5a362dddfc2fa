// Crash safety of CreateVolume and DeleteVolume: a node process on emulated PMEM is SIGKILLed at a
// chosen step (after the intent record, after the device, after deleting the device), restarted,
// and must then reconcile to a consistent state — no leaked device, no lost volume — and answer
// the retried call idempotently. Needs root and loop devices; without them it FAILS with the reason.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { spawn, type ChildProcess } from 'node:child_process';
import { access, mkdtemp, readdir, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { volumeIdForName } from '@pmem-csi/api';
import { HostRunner, loadCsi, unary, type ControllerClient } from '@pmem-csi/runtime';
import { listLoopDevices } from '../device/emulated-losetup.js';
import { nodeTools, MiB, type csi } from '@pmem-csi/csi';
import { readVolumeState } from '../state/state-loader.js';
import type { VolumeStep } from './hooks.js';
import { cleanUpHostDir, hostTestProblems } from '../testing/host-cleanup.js';
import { mountCapability } from '../testing/test-node.js';

const host = new HostRunner();
const here = dirname(fileURLToPath(import.meta.url));
const ENTRY = join(here, '..', 'testing', 'node-process.ts');
const REPO = resolve(here, '../../../..');
jest.setTimeout(180_000);

interface Reconciled {
  volumes: string[];
  droppedRecords: string[];
  orphans: string[];
}

interface NodeProcess {
  child: ChildProcess;
  client: ControllerClient;
  reconciled: Reconciled;
  exited: Promise<NodeJS.Signals | number | null>;
  stderr: string[];
}

describe('node process killed during create and delete (emulated PMEM)', () => {
  let dir = '';
  let proc: NodeProcess | undefined;

  async function startNode(crashAt?: VolumeStep): Promise<NodeProcess> {
    const child = spawn(process.execPath, ['--conditions=@pmem-csi/source', '--import', 'tsx', ENTRY], {
      cwd: REPO,
      env: { ...process.env, PMEM_CSI_TEST_DIR: dir, PMEM_CSI_CRASH_AT: crashAt ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stderr: string[] = [];
    child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
    const exited = new Promise<NodeJS.Signals | number | null>((r) =>
      child.on('exit', (code, signal) => r(signal ?? code)),
    );
    const reconciled = await new Promise<Reconciled>((resolveReady, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line !== undefined) resolveReady((JSON.parse(line) as { reconciled: Reconciled }).reconciled);
      });
      void exited.then((how) =>
        reject(new Error(`node process exited (${String(how)}) before it was ready: ${stderr.join('').slice(-2000)}`)),
      );
    });
    const Controller = loadCsi().csi.v1.Controller;
    const client = new Controller(`unix://${join(dir, 'csi.sock')}`, grpc.credentials.createInsecure());
    return { child, client, reconciled, exited, stderr };
  }

  async function stopNode(): Promise<void> {
    if (proc === undefined) return;
    proc.client.close();
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
    await proc.exited;
    proc = undefined;
  }

  /** Call, expecting the process to kill itself during the call. */
  async function callAndCrash(fn: (c: ControllerClient) => Promise<unknown>): Promise<void> {
    const p = proc!;
    const err = await fn(p.client).then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(err?.code).toBe(grpc.status.UNAVAILABLE);
    expect(await p.exited).toBe('SIGKILL');
    p.client.close();
    proc = undefined;
  }

  const create = (c: ControllerClient, name: string): Promise<csi.CreateVolumeResponse__Output> =>
    unary(
      c,
      c.CreateVolume,
      { name, capacity_range: { required_bytes: String(32 * MiB) }, volume_capabilities: [mountCapability()] },
      { timeoutMs: 60_000 },
    );
  const del = (c: ControllerClient, volume_id: string): Promise<csi.DeleteVolumeResponse__Output> =>
    unary(c, c.DeleteVolume, { volume_id }, { timeoutMs: 60_000 });
  /** Volume ids of the records on disk, read without a store (nothing repaired, nothing skipped). */
  const recorded = async (): Promise<string[]> => {
    const { records, corrupt } = await readVolumeState(join(dir, 'volumes'));
    expect(corrupt).toEqual([]);
    return records.map((r) => r.volumeId);
  };
  const files = async (sub: string): Promise<string[]> =>
    (await readdir(join(dir, sub)).catch(() => [] as string[])).filter((f) => !f.startsWith('.')).sort();
  const loopsUnderDir = async (): Promise<string[]> =>
    (await listLoopDevices(host)).filter((l) => l.backFile.startsWith(`${dir}/`)).map((l) => l.backFile);

  const first = volumeIdForName('pvc-crash-record');
  const second = volumeIdForName('pvc-crash-device');

  beforeAll(async () => {
    const problems = await hostTestProblems(host, nodeTools('emulated'));
    await access(ENTRY).catch(() => problems.push(`entry script ${ENTRY} is missing`));
    if (problems.length > 0) throw new Error(`restart tests cannot run on this machine: ${problems.join('; ')}`);
    dir = await realpath(await mkdtemp(join(tmpdir(), 'pmem-csi-restart-')));
  });

  afterAll(async () => {
    if (proc !== undefined) proc.child.kill('SIGKILL');
    await proc?.exited;
    if (dir !== '') await cleanUpHostDir(host, dir);
  });

  it('crash after the intent record: restart drops the record, the retry creates the volume', async () => {
    proc = await startNode('create:after-record');
    await callAndCrash((c) => create(c, 'pvc-crash-record'));
    expect(await recorded()).toEqual([first]);
    expect(await files('emulated')).toEqual([]);
    proc = await startNode();
    expect(proc.reconciled).toEqual({ volumes: [], droppedRecords: [first], orphans: [] });
    expect(await recorded()).toEqual([]);
    const res = await create(proc.client, 'pvc-crash-record');
    expect(res.volume).toMatchObject({ volume_id: first, capacity_bytes: String(32 * MiB) });
    expect(await files('emulated')).toEqual([`${first}.img`]);
    await stopNode();
  });

  it('crash after the device: restart keeps device and record, the retry returns the same volume', async () => {
    proc = await startNode('create:after-device');
    await callAndCrash((c) => create(c, 'pvc-crash-device'));
    expect(await recorded()).toEqual([first, second].sort());
    proc = await startNode();
    expect(proc.reconciled).toEqual({ volumes: [first, second].sort(), droppedRecords: [], orphans: [] });
    const res = await create(proc.client, 'pvc-crash-device');
    expect(res.volume).toMatchObject({
      volume_id: second,
      capacity_bytes: String(32 * MiB),
      volume_context: { name: 'pvc-crash-device' },
    });
    expect(await files('emulated')).toEqual([`${first}.img`, `${second}.img`].sort());
    const listed = await unary(proc.client, proc.client.ListVolumes, {}, { timeoutMs: 10_000 });
    expect(listed.entries.map((e) => e.volume?.volume_id).sort()).toEqual([first, second].sort());
    await stopNode();
  });

  it('crash after deleting the device: restart drops the record, the retried delete succeeds; nothing is left', async () => {
    proc = await startNode('delete:after-device');
    await callAndCrash((c) => del(c, second));
    expect(await files('emulated')).toEqual([`${first}.img`]);
    proc = await startNode();
    expect(proc.reconciled).toEqual({ volumes: [first], droppedRecords: [second], orphans: [] });
    await expect(del(proc.client, second)).resolves.toEqual({});
    await expect(del(proc.client, first)).resolves.toEqual({});
    expect(await recorded()).toEqual([]);
    expect(await files('emulated')).toEqual([]);
    expect(await loopsUnderDir()).toEqual([]);
    await stopNode();
  });
});
