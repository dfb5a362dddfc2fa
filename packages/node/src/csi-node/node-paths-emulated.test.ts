// Path safety of the node service on real mounts (issue 14, R5): emulated devices on loop devices,
// real mkfs and mount. The hostile requests the issue found answered or mounted — a relative staging
// path, /etc as a publish target (directly and through a symbolic link), NodeGetVolumeStats for `/`,
// `/proc` and another volume's mount, unpublish of another volume's target — are refused, and the
// host is checked afterwards: nothing mounted on /etc or under the working directory, the other
// volume still mounted. Needs root and loop devices; without them every case FAILS with the reason.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { mkdir, readFile, rmdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { HostRunner } from '@pmem-csi/runtime';
import { findMountAt, findMountsUnder, type MountEntry } from '../mount/findmnt.js';
import { MiB, type csi } from '@pmem-csi/csi';
import { cleanUpHostDir } from '../testing/host-cleanup.js';
import { emulatedHostDir, startEmulatedNode } from '../testing/emulated-node.js';
import { call, mountCapability, type TestClients, type TestNode } from '../testing/test-node.js';

const host = new HostRunner();
jest.setTimeout(120_000);
const REL = `pmem-csi-rel-stage-${process.pid}`;

/** Should a case regress, undo what it did outside the test directory: a volume mounted on /etc or under the working directory. */
async function undoHostileMounts(etcBefore: MountEntry | undefined): Promise<string[]> {
  const undone: string[] = [];
  for (const [path, before] of [
    ['/etc', etcBefore],
    [resolve(REL), undefined],
  ] as const) {
    for (let i = 0; i < 4; i++) {
      const now = await findMountAt(host, path);
      if (now === undefined || JSON.stringify(now) === JSON.stringify(before)) break;
      await host.run('umount', [path]);
      undone.push(path);
    }
  }
  await rmdir(resolve(REL)).catch(() => undefined);
  return undone;
}

describe('node service path safety on real mounts (root, loop devices)', () => {
  let dir = '';
  let node: TestNode | undefined;
  let c: TestClients;
  let a = '';
  let b = '';
  let etcBefore: MountEntry | undefined;
  const paths = (): { stageA: string; targetA: string; stageB: string; targetB: string } => ({
    stageA: join(dir, 'a', 'staging'),
    targetA: join(dir, 'a', 'pod'),
    stageB: join(dir, 'b', 'staging'),
    targetB: join(dir, 'b', 'pod'),
  });

  beforeAll(async () => {
    dir = await emulatedHostDir(host, 'emulated node tests', 'pmem-csi-paths-');
    etcBefore = await findMountAt(host, '/etc');
    ({ node, c } = await startEmulatedNode(host, dir, 256 * MiB));
    const create = async (name: string): Promise<string> =>
      (
        await call(c.controller, c.controller.CreateVolume, {
          name,
          capacity_range: { required_bytes: String(32 * MiB) },
          volume_capabilities: [mountCapability()],
        })
      ).volume!.volume_id;
    a = await create('paths-a');
    b = await create('paths-b');
    const p = paths();
    for (const [id, staging, target] of [
      [a, p.stageA, p.targetA],
      [b, p.stageB, p.targetB],
    ] as const) {
      await call(c.node, c.node.NodeStageVolume, {
        volume_id: id,
        staging_target_path: staging,
        volume_capability: mountCapability(),
      });
      await call(c.node, c.node.NodePublishVolume, {
        volume_id: id,
        staging_target_path: staging,
        target_path: target,
        volume_capability: mountCapability(),
      });
    }
    await writeFile(join(p.targetB, 'owned-by-b'), 'b');
  });

  afterAll(async () => {
    c?.close();
    await node?.stop();
    const undone = dir === '' ? [] : await undoHostileMounts(etcBefore);
    if (dir !== '') await cleanUpHostDir(host, dir);
    if (undone.length > 0) throw new Error(`a volume had been mounted on ${undone.join(', ')}; unmounted again`);
  });

  const publishA = (target: string): Promise<csi.NodePublishVolumeResponse__Output> =>
    call(c.node, c.node.NodePublishVolume, {
      volume_id: a,
      staging_target_path: paths().stageA,
      target_path: target,
      volume_capability: mountCapability(),
    });
  const stats = (volume_id: string, volume_path: string): Promise<csi.NodeGetVolumeStatsResponse__Output> =>
    call(c.node, c.node.NodeGetVolumeStats, { volume_id, volume_path });

  it('a relative staging path is refused; nothing is created or mounted under the working directory', async () => {
    const rel = REL;
    const before = (await findMountsUnder(host, process.cwd())).length;
    await expect(
      call(c.node, c.node.NodeStageVolume, {
        volume_id: a,
        staging_target_path: rel,
        volume_capability: mountCapability(),
      }),
    ).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(stat(resolve(rel))).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await findMountsUnder(host, process.cwd())).length).toBe(before);
  });

  it('/etc as a publish target, directly or through a symbolic link, is refused and /etc stays as it was', async () => {
    await expect(publishA('/etc')).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await symlink('/etc', join(dir, 'etc-link'));
    await expect(publishA(join(dir, 'etc-link'))).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect(await findMountAt(host, '/etc')).toEqual(etcBefore);
    expect(await readFile('/etc/hostname', 'utf8')).not.toBe('');
  });

  it('a staging directory that holds files is refused and keeps its files', async () => {
    const staging = join(dir, 'occupied');
    await mkdir(staging);
    await writeFile(join(staging, 'keep'), 'mine');
    await expect(
      call(c.node, c.node.NodeStageVolume, {
        volume_id: a,
        staging_target_path: staging,
        volume_capability: mountCapability(),
      }),
    ).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
    });
    expect(await findMountAt(host, staging)).toBeUndefined();
    expect(await readFile(join(staging, 'keep'), 'utf8')).toBe('mine');
  });

  it("NodeGetVolumeStats for /, /proc and the other volume's mount → NOT_FOUND; its own mounts → usage", async () => {
    const p = paths();
    for (const path of ['/', '/proc', p.targetB, p.stageB]) {
      await expect(stats(a, path)).rejects.toMatchObject({
        code: grpc.status.NOT_FOUND,
        details: `volume_path ${path} is not where volume ${a} is staged or published`,
      });
    }
    for (const path of [p.targetA, p.stageA]) {
      const own = await stats(a, path);
      expect(Number(own.usage.find((u) => u.unit === 'BYTES')?.total)).toBeLessThanOrEqual(32 * MiB);
    }
  });

  it("unpublish and unstage of volume A at volume B's paths are refused; B stays mounted with its data", async () => {
    const p = paths();
    await expect(
      call(c.node, c.node.NodeUnpublishVolume, { volume_id: a, target_path: p.targetB }),
    ).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
    await expect(
      call(c.node, c.node.NodeUnstageVolume, { volume_id: a, staging_target_path: p.stageB }),
    ).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
    expect(await findMountAt(host, p.targetB)).toBeDefined();
    expect(await readFile(join(p.targetB, 'owned-by-b'), 'utf8')).toBe('b');
    // The volumes' own paths still work both ways.
    for (const [id, staging, target] of [
      [a, p.stageA, p.targetA],
      [b, p.stageB, p.targetB],
    ] as const) {
      await call(c.node, c.node.NodeUnpublishVolume, { volume_id: id, target_path: target });
      await call(c.node, c.node.NodeUnstageVolume, { volume_id: id, staging_target_path: staging });
      expect(await findMountAt(host, staging)).toBeUndefined();
    }
  });
});
