// Access modes for real: emulated PMEM (loop devices), real mkfs, bind mounts and the host's mount
// table. SINGLE_NODE_SINGLE_WRITER refuses a second target of a filesystem and of a raw block
// volume, also after the node driver restarted (the publications are read from the mount table,
// nothing is remembered in memory); SINGLE_NODE_MULTI_WRITER allows it; SINGLE_NODE_READER_ONLY
// publishes read-only even when `readonly` is false. Needs root and loop devices; without them
// every case FAILS with the reason (never skips). Everything is removed in afterAll.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HostRunner } from '@pmem-csi/runtime';
import { MiB, type csi } from '@pmem-csi/csi';
import { findMountAt } from '../mount/findmnt.js';
import { isReadOnlyMount } from './format-mount.js';
import { cleanUpHostDir } from '../testing/host-cleanup.js';
import { emulatedHostDir, startEmulatedNode } from '../testing/emulated-node.js';
import { blockCapability, call, mountCapability, type TestClients, type TestNode } from '../testing/test-node.js';

const host = new HostRunner();
jest.setTimeout(180_000);

async function errnoOf(fn: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await fn();
    return undefined;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code;
  }
}

function singleWriterRefusal(volumeId: string, first: string, second: string): string {
  return `volume ${volumeId} is already published at ${first}; its access mode SINGLE_NODE_SINGLE_WRITER allows one target_path per node, so it cannot also be published at ${second} (unpublish it there first)`;
}

describe('access modes on emulated PMEM (root, loop devices, the real mount table)', () => {
  let dir = '';
  let node: TestNode | undefined;
  let c: TestClients | undefined;

  /** Start (or restart) the node's services on the same backing files and records. */
  async function startNode(): Promise<TestClients> {
    c?.close();
    await node?.stop();
    ({ node, c } = await startEmulatedNode(host, dir, 512 * MiB));
    return c;
  }

  beforeAll(async () => {
    dir = await emulatedHostDir(host, 'emulated node tests', 'pmem-csi-modes-');
    await startNode();
  });

  afterAll(async () => {
    c?.close();
    await node?.stop();
    if (dir !== '') await cleanUpHostDir(host, dir);
  });

  async function createVolume(name: string, cap: csi.VolumeCapability): Promise<string> {
    const res = await call(c!.controller, c!.controller.CreateVolume, {
      name,
      capacity_range: { required_bytes: String(32 * MiB) },
      volume_capabilities: [cap],
    });
    return res.volume!.volume_id;
  }
  const publish = (req: Partial<csi.NodePublishVolumeRequest>): Promise<csi.NodePublishVolumeResponse__Output> =>
    call(c!.node, c!.node.NodePublishVolume, req);
  const unpublish = (volume_id: string, target_path: string): Promise<csi.NodeUnpublishVolumeResponse__Output> =>
    call(c!.node, c!.node.NodeUnpublishVolume, { volume_id, target_path });

  it('filesystem: a second SINGLE_NODE_SINGLE_WRITER target → FAILED_PRECONDITION, also after a driver restart; multi-writer and reader-only may add targets', async () => {
    const single = mountCapability('ext4', [], 'SINGLE_NODE_SINGLE_WRITER');
    const id = await createVolume('modes-fs', single);
    const staging = join(dir, 'fs', 'staging');
    const [a, b, reader] = ['a', 'b', 'reader'].map((p) => join(dir, 'fs', 'pods', p)) as [string, string, string];
    await call(c!.node, c!.node.NodeStageVolume, {
      volume_id: id,
      staging_target_path: staging,
      volume_capability: single,
    });
    const pub = { volume_id: id, staging_target_path: staging };
    await publish({ ...pub, target_path: a, volume_capability: single });
    await publish({ ...pub, target_path: a, volume_capability: single }); // the same target: idempotent
    await expect(publish({ ...pub, target_path: b, volume_capability: single })).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      details: singleWriterRefusal(id, a, b),
    });
    expect(await errnoOf(() => stat(b))).toBe('ENOENT'); // refused before the target was made

    await startNode(); // a restarted driver finds the publication in the mount table
    await expect(publish({ ...pub, target_path: b, volume_capability: single })).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      details: singleWriterRefusal(id, a, b),
    });

    await publish({
      ...pub,
      target_path: b,
      volume_capability: mountCapability('ext4', [], 'SINGLE_NODE_MULTI_WRITER'),
    });
    await writeFile(join(b, 'from-b'), 'b');
    const readerOnly = mountCapability('ext4', [], 'SINGLE_NODE_READER_ONLY');
    await publish({ ...pub, target_path: reader, volume_capability: readerOnly, readonly: false });
    const mounted = await findMountAt(host, reader);
    expect(mounted === undefined ? undefined : isReadOnlyMount(mounted)).toBe(true);
    expect(await errnoOf(() => writeFile(join(reader, 'nope'), 'x'))).toBe('EROFS');
    for (const t of [a, b, reader]) await unpublish(id, t);
    // With every target gone, SINGLE_NODE_SINGLE_WRITER publishes again.
    await publish({ ...pub, target_path: b, volume_capability: single });
    await unpublish(id, b);
    await call(c!.node, c!.node.NodeUnstageVolume, { volume_id: id, staging_target_path: staging });
    await call(c!.controller, c!.controller.DeleteVolume, { volume_id: id });
  });

  it('raw block: a second SINGLE_NODE_SINGLE_WRITER target (a bind of the device node) → FAILED_PRECONDITION', async () => {
    const single = blockCapability('SINGLE_NODE_SINGLE_WRITER');
    const id = await createVolume('modes-block', single);
    const staging = join(dir, 'block', 'staging');
    const [a, b] = ['a', 'b'].map((p) => join(dir, 'block', 'pods', p, 'dev')) as [string, string];
    const pub = { volume_id: id, staging_target_path: staging };
    await publish({ ...pub, target_path: a, volume_capability: single });
    await expect(publish({ ...pub, target_path: b, volume_capability: single })).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      details: singleWriterRefusal(id, a, b),
    });
    await publish({ ...pub, target_path: b, volume_capability: blockCapability('SINGLE_NODE_MULTI_WRITER') });
    expect((await stat(b)).rdev).toBe((await stat(a)).rdev);
    await unpublish(id, a);
    await unpublish(id, b);
    await call(c!.controller, c!.controller.DeleteVolume, { volume_id: id });
  });
});
