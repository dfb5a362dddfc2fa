// The CSI node service cases every real-PMEM guest runs on its device mode: the NVDIMM suite
// (device/pmem.guest.test.ts) and the CXL suite (device/cxl.guest.test.ts) register the same cases,
// so that a mode on CXL persistent memory passes exactly what it passes on NVDIMMs: dax with ext4 and
// xfs (mount -o dax, statx), FileIO without dax, DeleteVolume twice and a re-create, the mode's own
// CSI cases (expansion, Kata volumes, ...) and eraseafter.
import { expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MiB } from '@pmem-csi/csi';
import type { GuestModeSuite } from './guest-mode.js';
import {
  MARK,
  SLOW,
  boot1,
  countMarks,
  createVolume,
  deleteVolume,
  isDaxFile,
  isZero,
  mountOptions,
  publish,
  stage,
  unstage,
  useCsiNode,
  writeSynced,
  type Fs,
} from './guest-kit.js';
import { call } from './test-node.js';

/** Boot 1: the shared CSI cases on `suite`'s device mode; `name` labels the cases and the driver's log file. */
export function csiLifecycleCases(suite: GuestModeSuite, name: string): void {
  boot1(`CSI node service on ${name} volumes (real mkfs, mount -o dax, statx)`, () => {
    const t = useCsiNode(() => suite.newManager(), { name, log: suite.log });
    const o = suite.csi;

    for (const [fs, size] of [
      ['ext4', 64 * MiB],
      ['xfs', 320 * MiB],
    ] as Array<[Fs, number]>) {
      it(
        o.daxName(fs),
        async () => {
          const v = await createVolume(t(), { name: `dax-${fs}`, size, fs });
          if (o.exactCapacity) expect(Number(v.capacity_bytes)).toBe(size);
          else expect(Number(v.capacity_bytes)).toBeGreaterThanOrEqual(size);
          const paths = { staging: join(t().dir, `stage-${fs}`), target: join(t().dir, `target-${fs}`) };
          await stage(t(), v, fs, paths.staging);
          expect(await mountOptions(paths.staging)).toEqual(
            expect.arrayContaining([expect.stringMatching(/^dax(=always)?$/)]),
          );
          await publish(t(), v, fs, paths);
          const file = join(paths.target, 'data');
          const data = randomBytes(MiB);
          await writeSynced(file, data);
          expect(await isDaxFile(file)).toBe(true);
          expect((await readFile(join(paths.staging, 'data'))).equals(data)).toBe(true);
          await o.published?.(t(), { volumeId: v.volume_id, fs, size, ...paths });
          await call(t().c.node, t().c.node.NodeUnpublishVolume, { volume_id: v.volume_id, target_path: paths.target });
          await unstage(t(), v.volume_id, paths.staging);
          await deleteVolume(t(), v.volume_id);
        },
        SLOW,
      );
    }

    it(
      o.fileIoName,
      async () => {
        const v = await createVolume(t(), {
          name: o.fileIoVolume,
          size: 64 * MiB,
          fs: 'ext4',
          parameters: { usage: 'FileIO' },
        });
        const staging = join(t().dir, 'stage-fileio');
        await stage(t(), v, 'ext4', staging);
        expect((await mountOptions(staging)).filter((opt) => opt.startsWith('dax'))).toEqual([]);
        await writeSynced(join(staging, 'data'), randomBytes(64 * 1024));
        expect(await isDaxFile(join(staging, 'data'))).toBe(false);
        await o.fileIoStaged?.(staging);
        await unstage(t(), v.volume_id, staging);
        await deleteVolume(t(), v.volume_id);
      },
      SLOW,
    );

    it(
      'DeleteVolume twice is OK, and CreateVolume with the same name works again afterwards',
      async () => {
        const v = await createVolume(t(), { name: 'recreate', size: 64 * MiB, fs: 'ext4' });
        await deleteVolume(t(), v.volume_id);
        await deleteVolume(t(), v.volume_id);
        const again = await createVolume(t(), { name: 'recreate', size: 64 * MiB, fs: 'ext4' });
        expect(again.volume_id).toBe(v.volume_id);
        await deleteVolume(t(), again.volume_id);
      },
      SLOW,
    );

    o.cases(t);

    for (const eraseafter of [true, false]) {
      it(
        o.eraseName(eraseafter),
        async () => {
          const v = await createVolume(t(), {
            name: `erase-${eraseafter}`,
            size: 64 * MiB,
            fs: 'ext4',
            parameters: eraseafter ? {} : { eraseafter: 'false' }, // true is the default
          });
          const staging = join(t().dir, `stage-erase-${eraseafter}`);
          await stage(t(), v, 'ext4', staging);
          await writeSynced(join(staging, 'marks'), Buffer.concat(Array.from({ length: 2048 }, () => MARK))); // 8 MiB
          await unstage(t(), v.volume_id, staging);
          const space = await o.erasedSpace(v.volume_id, eraseafter);
          expect(countMarks(await space.written())).toBeGreaterThanOrEqual(2048);
          await deleteVolume(t(), v.volume_id);
          const left = await space.left();
          expect(isZero(left.subarray(0, 4096))).toBe(true);
          if (eraseafter) expect(isZero(left)).toBe(true);
          else expect(countMarks(left)).toBeGreaterThanOrEqual(2048);
        },
        SLOW,
      );
    }
  });
}
