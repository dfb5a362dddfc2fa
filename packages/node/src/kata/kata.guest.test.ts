// The QEMU tier's Kata boot (issue 26), guest side: the guest's only NVDIMM is a Kata image file
// the host made in emulated mode (testing/guest-kata.ts), handed to QEMU as Kata's runtime does
// (memory-backend-file,share=on + nvdimm, no label area). The guest kernel must find the DAX info
// block and make an fsdax pmem device of the filesystem area; it is mounted with -o dax, DAX is
// checked (the mount's options AND the statx DAX attribute of a file), the data the host wrote
// through the runc-side loop device is read back, and a file is written for the host to read after
// power-off. Runs ONLY in that guest (e2e/qemu/harness.mjs, mode "kata").
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  RESULTS,
  SLOW,
  isDaxFile,
  mountOptions,
  ndctl,
  runner,
  saveToolTimings,
  sha256,
  writeSynced,
} from '../testing/guest-kit.js';
import type { KataGuestWrite, KataImageFacts } from '../testing/guest-kata.js';

const MOUNT = '/mnt/kata';
const GUEST_FILE = 'written-by-guest.bin';

afterAll(async () => {
  await saveToolTimings('kata');
});

describe('a Kata image file as the guest NVDIMM', () => {
  it(
    'is one fsdax pmem device of the filesystem area, mounts with DAX, holds the host data, takes a write',
    async () => {
      const facts = JSON.parse(await readFile(join(RESULTS, 'kata-image.json'), 'utf8')) as KataImageFacts;
      expect((await readdir('/dev')).filter((n) => /^pmem\d/.test(n))).toEqual(['pmem0']);
      const namespaces = (await ndctl.listNamespaces()).filter((ns) => ns.size > 0);
      expect(namespaces).toEqual([
        expect.objectContaining({ mode: 'fsdax', map: 'mem', blockdev: 'pmem0', size: facts.dataBytes }),
      ]);

      await mkdir(MOUNT, { recursive: true });
      await runner.run('mount', ['-t', 'ext4', '-o', 'dax', '/dev/pmem0', MOUNT]);
      const mountLine = (await readFile('/proc/mounts', 'utf8')).split('\n').find((l) => l.includes(` ${MOUNT} `));
      process.stdout.write(`kata guest mount: ${mountLine ?? '(none)'}\n`);
      await writeFile(join(RESULTS, 'kata-mount-line'), `${mountLine ?? ''}\n`);
      try {
        expect(await mountOptions(MOUNT)).toEqual(expect.arrayContaining([expect.stringMatching(/^dax(=always)?$/)]));
        const payload = join(MOUNT, facts.payload);
        expect(sha256(await readFile(payload))).toBe(facts.payloadSha256);
        expect(await isDaxFile(payload)).toBe(true);

        const data = randomBytes(1024 * 1024);
        await writeSynced(join(MOUNT, GUEST_FILE), data);
        expect(await isDaxFile(join(MOUNT, GUEST_FILE))).toBe(true);
        const wrote: KataGuestWrite = { file: GUEST_FILE, sha256: sha256(data) };
        await writeFile(join(RESULTS, 'kata-guest.json'), `${JSON.stringify(wrote)}\n`);
      } finally {
        await runner.run('umount', [MOUNT]);
      }
    },
    SLOW,
  );
});
