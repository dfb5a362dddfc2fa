// The host tools a node driver needs, by device mode, so that start-up fails at once with ONE
// message naming every missing tool and its Debian package, instead of the first NodeStage failing
// minutes later. The device managers check their own tools again in setup(); this list covers the
// mount path too (mkfs, mount, findmnt, blkid, resize tools).
import type { VolumeDeviceMode as DeviceMode } from '@pmem-csi/api';

/** Tools of the stage/publish/expand path (every mode whose devices can be mounted). */
export const FILESYSTEM_TOOLS = [
  'mount',
  'umount',
  'findmnt',
  'blkid',
  'mkfs.ext4',
  'dumpe2fs',
  'e2fsck',
  'resize2fs',
  'mkfs.xfs',
  'xfs_io',
  'xfs_growfs',
  // Kata Containers volumes (kataContainers: "true", packages/node/src/kata): the image file is
  // allocated with fallocate and its filesystem published through a loop device, in every mode.
  'fallocate',
  'losetup',
] as const;

/** The device tools of each mode (the device managers check them again in setup()). */
export const MODE_TOOLS: Readonly<Record<DeviceMode, readonly string[]>> = {
  lvm: [
    'ndctl',
    // `lvm fullreport`: VGs and LVs in one process, at every state read (device/lvm-tools.ts).
    'lvm',
    // start-up only: the VGs before setting up regions, the PVs before creating or extending a VG.
    'vgs',
    'pvs',
    'pvcreate',
    'vgcreate',
    'vgextend',
    // Tags a volume group made before owner tags (issue 32) with this driver's owner tag.
    'vgchange',
    'lvcreate',
    'lvremove',
    'lvextend',
    'dd',
  ],
  direct: ['ndctl', 'dd'],
  emulated: ['losetup', 'dd'],
  // Fake devices exist only in memory: nothing to run, nothing to mount.
  fake: [],
};

/** Every tool a node in `mode` runs. */
export function nodeTools(mode: DeviceMode): string[] {
  return mode === 'fake' ? [] : [...new Set([...MODE_TOOLS[mode], ...FILESYSTEM_TOOLS])];
}
