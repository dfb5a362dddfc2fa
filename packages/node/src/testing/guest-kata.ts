// The host half of the QEMU tier's Kata boot (issue 26): make, in emulated mode and through the
// node's CSI services, a volume with kataContainers: "true", write data at its runc-side
// publication (the image's filesystem through its loop device), and copy the image file out as the
// guest's NVDIMM backing file; after the guest ran (kata/kata.guest.test.ts), read the file the
// guest wrote back on the host. Needs root and loop devices. Test tooling: e2e/qemu/harness.mjs
// runs it through kata-image-cli.ts.
import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nullLogger, type CommandRunner } from '@pmem-csi/runtime';
import { MiB } from '@pmem-csi/csi';
import { EmulatedDeviceManager } from '../device/emulated.js';
import { attachImage, detachImage, findImageFile } from '../kata/image-file.js';
import { mountFilesystem, unmount } from '../mount/mount.js';
import { call, mountCapability, startTestNode, testClients } from './test-node.js';

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

const VOLUME_NAME = 'kata-guest-image';
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
 * A volume made through the node's CSI services in emulated mode with kataContainers: "true"
 * (CreateVolume, NodeStageVolume, NodePublishVolume), a payload written at the published target
 * (the runc side: the image's filesystem through its loop device), unpublished; the image file is
 * copied from the staged volume to `out` (facts in `out`.json), then unstaged and deleted.
 */
export async function makeKataGuestImage(runner: CommandRunner, out: string): Promise<KataImageFacts> {
  const work = await mkdtemp(join(tmpdir(), 'pmem-csi-kata-image-'));
  const dm = new EmulatedDeviceManager({ runner, log: nullLogger, dir: join(work, 'emulated'), totalSize: 256 * MiB });
  await dm.setup();
  const node = await startTestNode({ dm, dir: work, runner });
  const c = testClients(node.address);
  const staging = join(work, 'staging');
  const target = join(work, 'target');
  let volumeId: string | undefined;
  try {
    const created = await call(c.controller, c.controller.CreateVolume, {
      name: VOLUME_NAME,
      capacity_range: { required_bytes: String(VOLUME_BYTES) },
      volume_capabilities: [mountCapability()],
      parameters: { kataContainers: 'true' },
    });
    volumeId = created.volume?.volume_id ?? '';
    const cap = mountCapability('ext4');
    await call(c.node, c.node.NodeStageVolume, {
      volume_id: volumeId,
      staging_target_path: staging,
      volume_capability: cap,
    });
    await call(c.node, c.node.NodePublishVolume, {
      volume_id: volumeId,
      staging_target_path: staging,
      target_path: target,
      volume_capability: cap,
    });
    const data = randomBytes(MiB);
    await writeSynced(join(target, PAYLOAD), data);
    await call(c.node, c.node.NodeUnpublishVolume, { volume_id: volumeId, target_path: target });
    const img = await findImageFile(staging);
    if (img === undefined) throw new Error(`no Kata image file in the staged volume at ${staging}`);
    await copyFile(img.path, out);
    await call(c.node, c.node.NodeUnstageVolume, { volume_id: volumeId, staging_target_path: staging });
    const facts: KataImageFacts = {
      imageBytes: img.sizeBytes,
      dataBytes: img.dataBytes,
      payload: PAYLOAD,
      payloadSha256: sha256(data),
    };
    await writeFile(`${out}.json`, `${JSON.stringify(facts, null, 2)}\n`);
    return facts;
  } finally {
    await call(c.node, c.node.NodeUnpublishVolume, { volume_id: volumeId ?? VOLUME_NAME, target_path: target }).catch(
      () => undefined,
    );
    await call(c.node, c.node.NodeUnstageVolume, {
      volume_id: volumeId ?? VOLUME_NAME,
      staging_target_path: staging,
    }).catch(() => undefined);
    if (volumeId !== undefined)
      await call(c.controller, c.controller.DeleteVolume, { volume_id: volumeId }).catch(() => undefined);
    c.close();
    await node.stop();
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
