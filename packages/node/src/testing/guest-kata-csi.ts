// The Kata Containers case of the real-PMEM guest suite (issue 26), shared by lvm and direct mode
// (their csiCases register it): a volume with kataContainers: "true" on real PMEM. Staging mounts
// the volume with dax and creates the Kata image file in it — a DAX file, so the NVDIMM a Kata VM
// gets from it is backed by PMEM — and publishing mounts the image's filesystem through its loop
// device, without dax (loop devices have none). The guest boot of the kata mode then shows that a
// VM mounts such an image with DAX (e2e/qemu, kata/kata.guest.test.ts). Only for the guest.
import { expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MiB } from '@pmem-csi/csi';
import { imagePath, imageLoopDevices } from '../kata/image-file.js';
import { isDaxInfoBlock } from '../kata/layout.js';
import {
  SLOW,
  createVolume,
  deleteVolume,
  isDaxFile,
  mountOptions,
  publish,
  readRaw,
  runner,
  stage,
  unstage,
  writeSynced,
  type Csi,
} from './guest-kit.js';
import { call } from './test-node.js';

/** Register the Kata case. */
export function kataCsiCase(t: () => Csi): void {
  it(
    'kataContainers: the image file is a DAX file on the dax-mounted volume; its filesystem is published through a loop device without dax',
    async () => {
      const v = await createVolume(t(), {
        name: 'kata',
        size: 128 * MiB,
        fs: 'ext4',
        parameters: { kataContainers: 'true' },
      });
      const paths = { staging: join(t().dir, 'stage-kata'), target: join(t().dir, 'target-kata') };
      await stage(t(), v, 'ext4', paths.staging);
      try {
        expect(await mountOptions(paths.staging)).toEqual(
          expect.arrayContaining([expect.stringMatching(/^dax(=always)?$/)]),
        );
        const image = imagePath(paths.staging);
        expect(await isDaxFile(image)).toBe(true);
        expect(isDaxInfoBlock(await readRaw(image, 4096, 4096))).toBe(true);
        expect(await imageLoopDevices(runner, image)).toHaveLength(1);
        await publish(t(), v, 'ext4', paths);
        try {
          expect((await mountOptions(paths.target)).filter((o) => o.startsWith('dax'))).toEqual([]);
          const data = randomBytes(MiB);
          await writeSynced(join(paths.target, 'data'), data);
          expect((await readFile(join(paths.target, 'data'))).equals(data)).toBe(true);
          const stats = await call(t().c.node, t().c.node.NodeGetVolumeStats, {
            volume_id: v.volume_id,
            volume_path: paths.target,
          });
          expect(Number(stats.usage[0]?.total)).toBeLessThan(128 * MiB);
        } finally {
          await call(t().c.node, t().c.node.NodeUnpublishVolume, { volume_id: v.volume_id, target_path: paths.target });
        }
      } finally {
        await unstage(t(), v.volume_id, paths.staging);
      }
      expect(await imageLoopDevices(runner, imagePath(paths.staging))).toEqual([]);
      await deleteVolume(t(), v.volume_id);
    },
    SLOW,
  );
}
