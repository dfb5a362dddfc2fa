// Small CSI call helpers for the guest suites (create, stage, publish, unstage, delete with a mount
// capability), a clean-up of whatever a failed case left mounted or created, and a CSI test node on
// a fresh device manager for the cases of one describe.
import { afterAll, beforeAll } from '@jest/globals';
import { mkdtemp, readFile } from 'node:fs/promises';
import type { Logger } from '@pmem-csi/runtime';
import type { csi } from '@pmem-csi/csi';
import { call, mountCapability, startTestNode, testClients, type TestClients, type TestNode } from './test-node.js';
import type { DeviceManager } from '../device/device-manager.js';
import { SLOW, runner } from '../device/testing/guest-env.js';

export type Fs = 'ext4' | 'xfs';

/** A node driver's CSI clients and the directory its staging/target paths live in. */
export interface Csi {
  c: Pick<TestClients, 'node' | 'controller'>;
  dir: string;
}

/** CreateVolume of `name` with `size` bytes and a mount capability of `fs` (parameters: StorageClass ones). */
export async function createVolume(
  t: Csi,
  v: { name: string; size: number; fs: Fs; parameters?: Record<string, string> },
): Promise<csi.Volume__Output> {
  const { name, size, fs, parameters = {} } = v;
  const res = await call(t.c.controller, t.c.controller.CreateVolume, {
    name,
    capacity_range: { required_bytes: String(size) },
    volume_capabilities: [mountCapability(fs)],
    parameters,
  });
  return res.volume!;
}

export async function stage(
  t: Csi,
  v: { volume_id: string; volume_context: Record<string, string> },
  fs: Fs,
  path: string,
): Promise<void> {
  await call(t.c.node, t.c.node.NodeStageVolume, {
    volume_id: v.volume_id,
    staging_target_path: path,
    volume_capability: mountCapability(fs),
    volume_context: v.volume_context,
  });
}

export async function publish(
  t: Csi,
  v: { volume_id: string; volume_context: Record<string, string> },
  fs: Fs,
  paths: { staging: string; target: string },
): Promise<void> {
  await call(t.c.node, t.c.node.NodePublishVolume, {
    volume_id: v.volume_id,
    staging_target_path: paths.staging,
    target_path: paths.target,
    volume_capability: mountCapability(fs),
    volume_context: v.volume_context,
  });
}

export async function unstage(t: Csi, volumeId: string, path: string): Promise<void> {
  await call(t.c.node, t.c.node.NodeUnstageVolume, { volume_id: volumeId, staging_target_path: path });
}

export async function deleteVolume(t: Csi, volumeId: string): Promise<void> {
  await call(t.c.controller, t.c.controller.DeleteVolume, { volume_id: volumeId });
}

/** Unmount whatever a CSI describe left mounted under `dir` and delete every volume it left (after failed cases). */
export async function cleanupCsi(t: Csi | undefined): Promise<void> {
  if (t === undefined) return;
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  const targets = mountinfo
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith(`${t.dir}/`))
    .reverse();
  for (const m of targets) await runner.run('umount', [m]).catch(() => undefined);
  const listed = await call(t.c.controller, t.c.controller.ListVolumes, {}).catch(() => ({ entries: [] }));
  for (const e of listed.entries) if (e.volume) await deleteVolume(t, e.volume.volume_id).catch(() => undefined);
}

/**
 * Inside a describe: a CSI test node on a fresh device manager from `makeDm` for the cases, with
 * whatever they leave behind cleaned up after them. Returns the cases' view of it.
 */
export function useCsiNode(makeDm: () => DeviceManager, o: { name: string; log: Logger }): () => Csi {
  let t: Csi | undefined;
  let node: TestNode | undefined;
  let clients: TestClients | undefined;
  beforeAll(async () => {
    const dm = makeDm();
    await dm.setup();
    const dir = await mkdtemp(`/tmp/csi-${o.name}-`);
    node = await startTestNode({ dm, dir, runner, log: o.log });
    clients = testClients(node.address);
    t = { c: clients, dir };
  }, SLOW);
  afterAll(async () => {
    await cleanupCsi(t);
    clients?.close();
    await node?.stop();
  }, SLOW);
  return () => {
    if (t === undefined) throw new Error('the CSI test node did not start (see the beforeAll error)');
    return t;
  };
}
