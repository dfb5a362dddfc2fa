// The guided demonstration of the local stack: volumes placed by topology and capacity through the
// controller socket (as external-provisioner would), one volume staged and published through its
// node's socket (as kubelet would; a real mkfs and mount on emulated PMEM), the capacity table,
// and clean-up. Each step prints what it did and what came back, and while a call takes longer than
// a few seconds (mkfs, erasing a device on delete) a progress line says what it waits for.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { topologyKey } from '@pmem-csi/api';
import { type csi, MiB } from '@pmem-csi/csi';
import { codeName, isServiceError } from '@pmem-csi/runtime';
import { humanSize, renderStatus } from '../status-table.js';
import { ControllerCsi, CSI_CALL_TIMEOUT_MS, NodeCsi, mountCapability } from './csi-clients.js';
import { silentProgress, type Progress, type Say } from './progress.js';
import type { LocalStack } from './stack.js';
import { fetchStatus } from './status-command.js';

/** Where the demonstration reports: its lines, and progress while a call waits. */
interface Out {
  readonly say: Say;
  readonly progress: Progress;
}

/** Wait for one CSI call, with progress lines naming it and its deadline. */
function call<T>(out: Out, what: string, work: Promise<T>): Promise<T> {
  return out.progress({ what, limitMs: CSI_CALL_TIMEOUT_MS }, work);
}

interface DemoVolume {
  readonly id: string;
  readonly node: string;
}

function nodeOf(v: csi.Volume__Output, key: string): string {
  return v.accessible_topology[0]?.segments[key] ?? '?';
}

interface DemoRequest {
  readonly name: string;
  readonly size: number;
  readonly preferred?: string;
}

async function create(
  ctl: ControllerCsi,
  key: string,
  { name, size, preferred }: DemoRequest,
  out: Out,
): Promise<DemoVolume> {
  const topo =
    preferred === undefined
      ? {}
      : { accessibility_requirements: { preferred: [{ segments: { [key]: preferred } }], requisite: [] } };
  const req = {
    name,
    capacity_range: { required_bytes: String(size) },
    volume_capabilities: [mountCapability('ext4')],
    parameters: { eraseafter: 'true' },
    ...topo,
  };
  const res = await call(out, `CreateVolume ${name} through the controller`, ctl.createVolume(req));
  const v = res.volume;
  if (v === null) throw new Error(`CreateVolume ${name}: no volume in the answer`);
  return { id: v.volume_id, node: nodeOf(v, key) };
}

async function placeVolumes(ctl: ControllerCsi, key: string, out: Out): Promise<DemoVolume[]> {
  const { say } = out;
  say('\n2. Create volumes through the controller (as external-provisioner does)');
  const a = await create(ctl, key, { name: 'demo-preferred', size: 256 * MiB, preferred: 'node-b' }, out);
  say(`   demo-preferred (256 MiB, prefers node-b) -> ${a.node}   id ${a.id}`);
  const b = await create(ctl, key, { name: 'demo-large', size: 900 * MiB }, out);
  say(`   demo-large     (900 MiB, no topology)    -> ${b.node}   (only node-a can hold it)`);
  const c = await create(ctl, key, { name: 'demo-any', size: 128 * MiB }, out);
  say(`   demo-any       (128 MiB, no topology)    -> ${c.node}   (largest free space first)`);
  const again = await create(ctl, key, { name: 'demo-preferred', size: 256 * MiB, preferred: 'node-b' }, out);
  say(`   demo-preferred again                     -> same id: ${again.id === a.id ? 'yes' : `NO (${again.id})`}`);
  try {
    await create(ctl, key, { name: 'demo-too-big', size: 4096 * MiB }, out);
    say('   demo-too-big: unexpectedly created');
  } catch (e) {
    say(
      `   demo-too-big   (4 GiB)                   -> ${isServiceError(e) ? `${codeName(e.code)}: ${e.details}` : String(e)}`,
    );
  }
  return [a, b, c];
}

async function useVolume(stack: LocalStack, v: DemoVolume, out: Out): Promise<void> {
  const { say } = out;
  const node = stack.nodes.find((n) => n.id === v.node);
  if (node === undefined) throw new Error(`volume ${v.id} is on unknown node ${v.node}`);
  const nc = new NodeCsi(node.socket);
  const staging = join(stack.dir, 'mnt', v.id, 'staging');
  const target = join(stack.dir, 'mnt', v.id, 'target');
  await mkdir(staging, { recursive: true });
  try {
    say(`\n3. Stage and publish ${v.id} on ${node.id} (as kubelet does)`);
    const stage = { volume_id: v.id, staging_target_path: staging, volume_capability: mountCapability('ext4') };
    await call(out, `NodeStageVolume on ${node.id} (mkfs.ext4 and mount)`, nc.stage(stage));
    say(`   staged: mkfs.ext4 + mount at ${staging}`);
    const publish = { ...stage, target_path: target, readonly: false };
    await call(out, `NodePublishVolume on ${node.id} (bind mount)`, nc.publish(publish));
    say(`   published: bind mount at ${target}`);
    await writeFile(join(target, 'hello.txt'), 'hello from pmem-csi\n');
    say(`   wrote and read back: ${(await readFile(join(target, 'hello.txt'), 'utf8')).trim()}`);
    const stats = await nc.stats(v.id, target);
    const bytes = stats.usage.find((u) => u.unit === 'BYTES');
    say(
      `   NodeGetVolumeStats: ${humanSize(Number(bytes?.total ?? 0))} total, ${humanSize(Number(bytes?.available ?? 0))} available`,
    );
    await call(out, `NodeUnpublishVolume on ${node.id} (unmount)`, nc.unpublish(v.id, target));
    await call(out, `NodeUnstageVolume on ${node.id} (unmount)`, nc.unstage(v.id, staging));
    say('   unpublished and unstaged');
  } finally {
    nc.close();
  }
}

/** Run the walkthrough on a running stack; deletes what it created. */
export async function runDemo(
  stack: LocalStack,
  driverName: string,
  say: Say,
  progress: Progress = silentProgress,
): Promise<void> {
  const out: Out = { say, progress };
  const key = topologyKey(driverName);
  const ctl = new ControllerCsi(stack.controllerSocket);
  const created: DemoVolume[] = [];
  try {
    created.push(...(await placeVolumes(ctl, key, out)));
    const first = created[0];
    if (stack.deviceMode === 'emulated' && first !== undefined) await useVolume(stack, first, out);
    else
      say(
        '\n3. Stage/publish skipped: fake devices cannot be mounted (run as root for emulated PMEM with real mounts)',
      );
    say('\n4. Capacity per node');
    say(renderStatus(await fetchStatus(stack.statusUrl)).replace(/^/gm, '   '));
  } finally {
    say('\n5. Clean-up: delete the volumes (eraseafter=true wipes each device)');
    for (const v of created) {
      await call(out, `DeleteVolume ${v.id} on ${v.node} (erasing the device)`, ctl.deleteVolume(v.id));
      say(`   deleted ${v.id} on ${v.node}`);
    }
    ctl.close();
  }
  const after = await fetchStatus(stack.statusUrl);
  say(`   volumes left: ${after.volumes}`);
}
