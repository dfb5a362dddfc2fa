// The host half of the QEMU tier's Kata boot (issue 26): make, in emulated mode, a volume whose
// filesystem holds a Kata image file (kata/image-file.ts), write data into the image's filesystem
// the way a runc container reaches it (a loop device at offset 2 MiB), and copy the image out as
// the guest's NVDIMM backing file; after the guest ran (kata/kata.guest.test.ts), read the file the
// guest wrote back on the host. Needs root and loop devices. Test tooling: e2e/qemu/harness.mjs
// runs it through kata-image-cli.ts.
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nullLogger, type CommandRunner } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';
import { EmulatedDeviceManager } from '../device/emulated.js';
import { attachImage, createImageFile, detachImage } from '../kata/image-file.js';
import { makeFilesystem } from '../mount/filesystem.js';
import { mountFilesystem, unmount } from '../mount/mount.js';

/** What the host put into the image, for the guest to check (written next to the image as JSON). */
export interface KataImageFacts {
  /** Size of the image file, and of the filesystem area the guest's pmem device must have. */
  readonly imageBytes: number;
  readonly dataBytes: number;
  /** File in the image's filesystem written through the runc-side loop device, and its sha256. */
  readonly payload: string;
  readonly payloadSha256: string;
}

/** What the guest wrote (written by the guest suite to /results), for the host to read back. */
export interface KataGuestWrite {
  readonly file: string;
  readonly sha256: string;
}

const VOLUME_ID = 'kata-guest-image';
const VOLUME_BYTES = 128 * MiB;
export const PAYLOAD = 'written-by-runc.bin';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

async function writeSynced(file: string, data: Buffer): Promise<void> {
  const handle = await open(file, 'w');
  try {
    await handle.write(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Mount the image's filesystem through a loop device at `target`, run `use`, unmount and detach again. */
async function withInnerFilesystem<T>(
  runner: CommandRunner,
  image: string,
  o: { target: string; readonly: boolean },
  use: () => Promise<T>,
): Promise<T> {
  const device = await attachImage(runner, image);
  try {
    await mkdir(o.target, { recursive: true });
    await mountFilesystem(runner, {
      source: device,
      target: o.target,
      fsType: 'ext4',
      options: o.readonly ? ['ro'] : [],
    });
    try {
      return await use();
    } finally {
      await unmount(runner, o.target);
    }
  } finally {
    await detachImage(runner, image);
  }
}

/**
 * An emulated volume (loop device) with an ext4, a Kata image file (ext4 inside) filling it and a
 * payload written through the runc-side loop device; the image is copied to `out` (facts in
 * `out`.json) and the volume removed again.
 */
export async function makeKataGuestImage(runner: CommandRunner, out: string): Promise<KataImageFacts> {
  const work = await mkdtemp(join(tmpdir(), 'pmem-csi-kata-image-'));
  const dm = new EmulatedDeviceManager({ runner, log: nullLogger, dir: join(work, 'emulated'), totalSize: 256 * MiB });
  try {
    await dm.setup();
    const device = await dm.createDevice({ volumeId: VOLUME_ID, size: VOLUME_BYTES, usage: 'AppDirect' });
    await makeFilesystem(runner, { fsType: 'ext4', device: device.path, sizeBytes: device.size });
    const volume = join(work, 'volume');
    await mkdir(volume);
    await mountFilesystem(runner, { source: device.path, target: volume, fsType: 'ext4', options: [] });
    try {
      const img = await createImageFile(runner, { volumeId: VOLUME_ID, dir: volume, fsType: 'ext4' });
      const data = randomBytes(MiB);
      await withInnerFilesystem(runner, img.path, { target: join(work, 'inner'), readonly: false }, () =>
        writeSynced(join(work, 'inner', PAYLOAD), data),
      );
      await copyFile(img.path, out);
      const facts: KataImageFacts = {
        imageBytes: img.sizeBytes,
        dataBytes: img.dataBytes,
        payload: PAYLOAD,
        payloadSha256: sha256(data),
      };
      await writeFile(`${out}.json`, `${JSON.stringify(facts, null, 2)}\n`);
      return facts;
    } finally {
      await unmount(runner, volume);
    }
  } finally {
    await dm.deleteDevice(VOLUME_ID, false).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

/** Read back, on the host, the file the guest wrote into `image` (described by `guestJson`); throws naming what differs. */
export async function checkGuestWrite(
  runner: CommandRunner,
  image: string,
  guestJson: string,
): Promise<KataGuestWrite> {
  const wrote = JSON.parse(await readFile(guestJson, 'utf8')) as KataGuestWrite;
  const work = await mkdtemp(join(tmpdir(), 'pmem-csi-kata-check-'));
  try {
    const target = join(work, 'inner');
    const found = await withInnerFilesystem(runner, image, { target, readonly: true }, async () => ({
      guest: sha256(await readFile(join(target, wrote.file))),
    }));
    if (found.guest !== wrote.sha256)
      throw new Error(`${wrote.file} in ${image} has sha256 ${found.guest}; the guest wrote ${wrote.sha256}`);
    return wrote;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
