// The Kata Containers case of the real-PMEM guest suite (issue 26), shared by lvm and direct mode
// (their csiCases register it): a volume with kataContainers: "true" on real PMEM. Staging mounts
// the volume with dax and creates the Kata image file in it — a DAX file, so the NVDIMM a Kata VM
// gets from it is backed by PMEM — and publishing mounts the image's filesystem through its loop
// device, without dax (loop devices have none). On NVDIMMs the image (made on real LVM or direct
// namespaces, data written through the runc side) is copied to the results directory as
// KATA_EXPORT with its facts: the QEMU harness then boots it as a VM's NVDIMM the way Kata's runtime
// hands it over (kata/kata.guest.test.ts: pmem device, -o dax, the data) — the same proof as the
// kata mode's for an image made in emulated mode. Only for the guest.
import { expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MiB } from '@pmem-csi/csi';
import { findImageFile, imagePath, imageLoopDevices } from '../kata/image-file.js';
import { isDaxInfoBlock } from '../kata/layout.js';
import {
  PMEM_KIND,
  RESULTS,
  SLOW,
  createVolume,
  deleteVolume,
  isDaxFile,
  mountOptions,
  publish,
  readRaw,
  runner,
  sha256,
  stage,
  unstage,
  writeSynced,
  type Csi,
} from './guest-kit.js';
import type { KataImageFacts } from './guest-kata.js';
import { call } from './test-node.js';

/** The exported image in the results directory (the harness boots it; its facts in `<name>.json`). */
export const KATA_EXPORT = 'kata-from-guest.img';
const PAYLOAD = 'data';

/** Copy the staged volume's image (its filesystem unmounted: published nowhere) to the results, with its facts. */
async function exportImage(staging: string, payloadSha256: string): Promise<void> {
  const img = await findImageFile(staging);
  if (img === undefined) throw new Error(`no Kata image file in the staged volume at ${staging}`);
  await copyFile(img.path, join(RESULTS, KATA_EXPORT));
  const facts: KataImageFacts = {
    imageBytes: img.sizeBytes,
    dataBytes: img.dataBytes,
    payload: PAYLOAD,
    payloadSha256,
  };
  await writeFile(join(RESULTS, `${KATA_EXPORT}.json`), `${JSON.stringify(facts, null, 2)}\n`);
}

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
        let payloadSha256 = '';
        try {
          expect((await mountOptions(paths.target)).filter((o) => o.startsWith('dax'))).toEqual([]);
          const data = randomBytes(MiB);
          await writeSynced(join(paths.target, PAYLOAD), data);
          expect((await readFile(join(paths.target, PAYLOAD))).equals(data)).toBe(true);
          payloadSha256 = sha256(data);
          const stats = await call(t().c.node, t().c.node.NodeGetVolumeStats, {
            volume_id: v.volume_id,
            volume_path: paths.target,
          });
          expect(Number(stats.usage[0]?.total)).toBeLessThan(128 * MiB);
        } finally {
          await call(t().c.node, t().c.node.NodeUnpublishVolume, { volume_id: v.volume_id, target_path: paths.target });
        }
        if (PMEM_KIND === 'nvdimm') await exportImage(paths.staging, payloadSha256);
      } finally {
        await unstage(t(), v.volume_id, paths.staging);
      }
      expect(await imageLoopDevices(runner, imagePath(paths.staging))).toEqual([]);
      await deleteVolume(t(), v.volume_id);
    },
    SLOW,
  );
}
